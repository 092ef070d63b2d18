/* What the patch service's answers write: a path's alias into a task's
 * memory (booked first), the original bytes back, a fork child's copy
 * repaired; and the bookkeeping of the patches map entries they end. The
 * threads that claim the requests are in service.c. */
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "engine/engine_int.h"
#include "engine/kpatches.h"
#include "lib/log.h"
#include "redirect.skel.h"

/* Marks the live record at (mm, addr) busy and copies it. */
static bool take_rec(struct engine *e, uint64_t mm, uint64_t addr, struct patch_rec *copy)
{
	struct patch_rec *rec;
	bool ok = false;

	book_lock(e);
	rec = book_find(e->book, mm, addr);
	if (rec && rec->live && !rec->busy) {
		rec->busy = true;
		*copy = *rec;
		ok = true;
	}
	book_unlock(e);
	return ok;
}

/* Ends what take_rec began: retired (restored, or its process is gone), or
 * left live for another try. */
void book_put(struct engine *e, const struct patch_rec *copy, bool retire)
{
	struct patch_rec *rec;

	book_lock(e);
	rec = book_find(e->book, copy->mm, copy->addr);
	if (rec && rec->busy) {
		rec->busy = false;
		if (retire)
			book_retire(rec, now_ns());
	}
	book_unlock(e);
}

/* Ends the kernel side's entry at key, once its bytes are back (or gone
 * with its process), if it is still the one the caller worked on: the one
 * taken at since (0: whichever is there; a newer patch at the same place
 * is never ended for an older one's sake). An in-kernel record stays,
 * RESTORED, for fork children that copied the replacement (as the kernel
 * side keeps its own); any other entry is removed. An entry still
 * RESTORING that the kernel side handed over (its wait is over) comes off
 * nr_handed, exactly once, under the book's lock; the janitor's own hold
 * (NVM_PATCH_F_HELD) was never counted there. The address space is marked
 * recent for nvm_fork. */
void end_entry(struct engine *e, const struct nvm_patch_key *key, uint64_t since)
{
	struct nvm_patch p;
	bool handed = false, ended;
	uint64_t now = now_ns();

	book_lock(e);
	if (bpf_map_lookup_elem(e->patches_fd, key, &p) || (since && p.since != since)) {
		book_unlock(e);
		return;
	}
	handed = NVM_PATCH_STATE(p.word) == NVM_PATCH_RESTORING && !(p.flags & NVM_PATCH_F_HELD);
	if (handed && (p.flags & NVM_PATCH_F_INKERNEL)) {
		p.word = NVM_PATCH_WORD(NVM_PATCH_RESTORED, 0);
		p.since = now;
		ended = !bpf_map_update_elem(e->patches_fd, key, &p, BPF_EXIST);
	} else {
		ended = !bpf_map_delete_elem(e->patches_fd, key);
	}
	if (ended && handed)
		__atomic_fetch_sub(&e->skel->bss->nr_handed, 1, __ATOMIC_SEQ_CST);
	book_unlock(e);
	bpf_map_update_elem(bpf_map__fd(e->skel->maps.mm_recent), &key->mm, &now, BPF_ANY);
}

/* Binds the tree into the mount namespace of the task that asked (a
 * container's, where a path the kernel side rewrites must resolve), and
 * records that namespace, by the id the kernel side gave, as having it;
 * not while the task is still being set up by the container runtime (it
 * has no container root yet). A failure is counted; the patch is made all
 * the same (the path then resolves to nothing there, as it would
 * unredirected). */
static void bind_tree(struct engine *e, const struct nvm_slot *s)
{
	__u8 one = 1;
	int r = e->opts.bind_tree ? e->opts.bind_tree(e->opts.bind_ctx, s->tid) : -1;

	if (r < 0)
		ASTAT_ADD(e, tree_bind_failed, 1);
	if (r) /* failed, or not yet: the next redirect there asks again */
		return;
	bpf_map_update_elem(bpf_map__fd(e->skel->maps.tree_ns), &s->ref, &one, BPF_ANY);
	ASTAT_ADD(e, tree_binds, 1);
	nvm_debug("the tree is in the mount namespace of pid %u (id %llu)", s->tid,
		  (unsigned long long)s->ref);
}

static int handle_patch(struct engine *e, const struct nvm_slot *s, int fd)
{
	char cur[NVM_PATH_READ + 1], repl[NVM_PATH_READ];
	unsigned span = s->span;
	bool exact = s->flags & NVM_REQ_EXACT;
	int rule = (int)s->rule;
	struct patch_rec *rec;

	if (s->flags & NVM_REQ_TREE)
		bind_tree(e, s);
	if (s->flags & NVM_REQ_UNREAD) {
		/* Read what the kernel could not, and match it here. */
		if (memio_read_str(fd, s->addr, cur, sizeof(cur)) < 0)
			return NVM_RES_FAILED;
		rule = rules_match(&e->rules, cur, &span, &exact);
		if (rule < 0) {
			ASTAT_ADD(e, nomatch, 1);
			return NVM_RES_NOMATCH;
		}
	} else {
		if (span == 0 || span >= NVM_PATH_READ || s->rule >= e->rules.n)
			return NVM_RES_FAILED;
		/* The bytes must still be what the kernel matched, up to and
		 * including the boundary after the prefix. */
		if (memio_read(fd, s->addr, cur, span + 1) || memcmp(cur, s->path, span + 1))
			return NVM_RES_FAILED;
	}
	if (rules_replacement(&e->rules.r[rule], span, exact, repl))
		return NVM_RES_FAILED;

	/* Booked before it is written, so a fork that copies the bytes in
	 * between finds the record to repair its copy by. */
	book_lock(e);
	rec = book_add(e->book, s->mm, s->addr);
	if (rec) {
		rec->tgid = s->tgid, rec->tid = s->tid, rec->span = span;
		memcpy(rec->orig, cur, span);
		memcpy(rec->repl, repl, span);
		rec->when_ns = now_ns();
	}
	book_unlock(e);
	if (!rec)
		return NVM_RES_FAILED;
	/* cur was read just now, from the parked task: write right after it. */
	if (memio_write(fd, s->addr, repl, span)) {
		book_lock(e);
		rec = book_find(e->book, s->mm, s->addr);
		if (rec)
			book_retire(rec, 0);
		book_unlock(e);
		return NVM_RES_FAILED;
	}
	ASTAT_ADD(e, patched, 1);
	nvm_debug("patched pid %u %.*s -> %.*s", s->tid, (int)span, cur, (int)span, repl);
	return NVM_RES_OK;
}

/* Writes the original bytes back if the replacement is still there. The
 * record was taken with take_rec; this puts it back, retired. */
int answer_restore_rec(struct engine *e, const struct patch_rec *rec, int fd)
{
	int r = memio_swap(fd, rec->addr, rec->repl, rec->orig, rec->span);

	book_put(e, rec, true);
	if (r) {
		ASTAT_ADD(e, errors, 1);
		nvm_warn("restore in pid %u at 0x%llx: %s", rec->tgid,
			 (unsigned long long)rec->addr,
			 r > 0 ? "memory no longer holds the patch; left as is" : strerror(errno));
		return NVM_RES_FAILED;
	}
	ASTAT_ADD(e, restored, 1);
	return NVM_RES_OK;
}

/* The kernel side could not put back the bytes of a patch it wrote itself
 * (the page no longer took the write): the record is in the patches map. */
static int restore_kpatch(struct engine *e, const struct nvm_slot *s, int fd)
{
	struct nvm_patch p;
	int r;

	if (!kpatch_get(e->patches_fd, s->mm, s->addr, &p) ||
	    NVM_PATCH_STATE(p.word) != NVM_PATCH_RESTORING || p.span >= NVM_PATH_READ)
		return NVM_RES_FAILED;
	r = memio_swap(fd, s->addr, p.repl, p.orig, p.span);
	if (r < 0) {
		ASTAT_ADD(e, errors, 1);
		return NVM_RES_FAILED;
	}
	if (r == 0)
		ASTAT_ADD(e, restored, 1);
	return NVM_RES_OK; /* r > 0: the process changed the bytes: left as they are */
}

static int handle_restore(struct engine *e, const struct nvm_slot *s, int fd)
{
	struct patch_rec rec;

	if (!take_rec(e, s->mm, s->addr, &rec))
		return restore_kpatch(e, s, fd);
	return answer_restore_rec(e, &rec, fd);
}

#define FORKFIX_BATCH 32

struct fork_repair {
	struct engine *e;
	__u64 parent_mm;
	int fd; /* the child's memory */
};

/* Repairs, in a fork child, the bytes of its parent's patch at addr, if
 * the child still holds the replacement there (memio_swap checks). */
static void repair_child(struct engine *e, int fd, __u64 addr, const char *repl,
			 const char *orig, unsigned span)
{
	if (span < NVM_PATH_READ && memio_swap(fd, addr, repl, orig, span) == 0)
		ASTAT_ADD(e, fork_repairs, 1);
}

static void repair_child_kpatch(const struct nvm_patch_key *key, const struct nvm_patch *p,
				void *ctx)
{
	struct fork_repair *f = ctx;

	if (key->mm == f->parent_mm)
		repair_child(f->e, f->fd, key->addr, p->repl, p->orig, p->span);
}

/* A fork child copied its parent's memory while patches were (or had just
 * been) in place: wherever the child still holds a replacement, put the
 * original back. The parent's records are copied a batch at a time, so
 * the child's memory is written with the book unlocked, and into a fixed
 * array: the parent waits for this answer, and a thread that allocates
 * could wait on the agent's memory-map lock (see janitor.c). The book is
 * read from its end down: book_expire, between batches, only moves a
 * record from the end into a lower slot, so a record is never skipped
 * (at worst checked twice). The kernel side's own records (in-kernel
 * rewrite) are in the patches map. */
static int handle_forkfix(struct engine *e, const struct nvm_slot *s, int fd)
{
	struct fork_repair f = { .e = e, .parent_mm = s->ref, .fd = fd };
	struct patch_rec recs[FORKFIX_BATCH];
	unsigned below = NVM_BOOK_MAX; /* the records left to read are below it */

	while (below) {
		unsigned n = 0;

		book_lock(e);
		if (below > e->book->n)
			below = e->book->n;
		while (below && n < FORKFIX_BATCH)
			if (e->book->r[--below].mm == s->ref)
				recs[n++] = e->book->r[below];
		book_unlock(e);
		for (unsigned i = 0; i < n; i++)
			repair_child(e, fd, recs[i].addr, recs[i].repl, recs[i].orig, recs[i].span);
	}
	if (e->opts.in_kernel)
		kpatch_each(e->patches_fd, repair_child_kpatch, &f);
	return NVM_RES_OK;
}

void answer_late(struct engine *e, const struct nvm_slot *s, int fd)
{
	struct nvm_patch_key key = { .mm = s->mm, .addr = s->addr };
	struct patch_rec rec;

	ASTAT_ADD(e, late, 1);
	if (s->kind == NVM_REQ_PATCH && take_rec(e, s->mm, s->addr, &rec))
		answer_restore_rec(e, &rec, fd);
	if (s->kind == NVM_REQ_RESTORE)
		end_entry(e, &key, 0);
}

int answer_request(struct engine *e, const struct nvm_slot *req, int fd)
{
	switch (req->kind) {
	case NVM_REQ_PATCH: return handle_patch(e, req, fd);
	case NVM_REQ_RESTORE: return handle_restore(e, req, fd);
	case NVM_REQ_FORKFIX: return handle_forkfix(e, req, fd);
	}
	return NVM_RES_FAILED;
}

void answer_unwaited(struct engine *e, const struct nvm_slot *req)
{
	struct nvm_patch_key key = { .mm = req->mm, .addr = req->addr };

	if (req->kind == NVM_REQ_RESTORE)
		end_entry(e, &key, 0);
}
