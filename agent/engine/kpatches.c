#include "engine/kpatches.h"

#include <errno.h>
#include <stdint.h>

#include <bpf/bpf.h>

bool kpatch_get(int fd, __u64 mm, __u64 addr, struct nvm_patch *out)
{
	struct nvm_patch_key key = { .mm = mm, .addr = addr };

	return bpf_map_lookup_elem(fd, &key, out) == 0 && (out->flags & NVM_PATCH_F_INKERNEL);
}

bool kpatch_gone(int fd, const struct nvm_patch_key *key, uint64_t *since)
{
	struct nvm_patch p;

	if (fd < 0 || bpf_map_lookup_elem(fd, key, &p) || NVM_PATCH_STATE(p.word) != NVM_PATCH_GONE)
		return false;
	if (since)
		*since = p.since;
	return true;
}

#define BATCH 64

static void each_of(const struct nvm_patch_key *keys, const struct nvm_patch *vals, __u32 n,
		    kpatch_fn fn, void *ctx)
{
	for (__u32 i = 0; i < n; i++)
		if (vals[i].flags & NVM_PATCH_F_INKERNEL)
			fn(&keys[i], &vals[i], ctx);
}

/* One key at a time: where batches are refused (a bucket longer than a
 * batch, or a kernel without batch operations on hash maps). */
static int each_by_key(int fd, kpatch_fn fn, void *ctx)
{
	struct nvm_patch_key key, next;
	struct nvm_patch p;
	void *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &p) == 0)
			each_of(&next, &p, 1, fn, ctx);
		key = next;
		prev = &key;
	}
	return errno == ENOENT ? 0 : -1;
}

int kpatch_each(int fd, kpatch_fn fn, void *ctx)
{
	static __thread struct nvm_patch_key keys[BATCH];
	static __thread struct nvm_patch vals[BATCH];
	__u32 in = 0, out = 0;
	bool first = true;

	for (;;) {
		__u32 n = BATCH;
		int err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);

		/* Calling fn twice for one record is harmless to every caller
		 * (each writes only where the replacement still is). */
		if (err && errno != ENOENT)
			return each_by_key(fd, fn, ctx);
		each_of(keys, vals, n, fn, ctx);
		if (err)
			return 0; /* ENOENT: that was the last batch */
		in = out;
		first = false;
	}
}
