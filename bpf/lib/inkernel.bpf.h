/* The in-kernel writer: the only code that writes a task's memory from the
 * kernel side (bpf_probe_write_user, which lockdown refuses: the programs
 * that can reach it are loaded only where it loads). It writes a rule's
 * alias over a path's prefix, and the original bytes back.
 *
 * Part of redirect.bpf.c, which defines, before including it, the aliases map and kstats (count). */
#ifndef NVM_INKERNEL_BPF_H
#define NVM_INKERNEL_BPF_H

/* span as a size the verifier knows is 1 to NVM_PATH_READ - 1, or 0 when it
 * is not. The barrier keeps the compiler from folding the two checks into
 * one the verifier cannot take the lower bound from. */
static __always_inline __u64 bounded_span(__u32 span)
{
	__u64 n = span;

	barrier_var(n);
	if (n > NVM_PATH_READ - 1)
		return 0;
	barrier_var(n);
	if ((__s64)n < 1)
		return 0;
	return n;
}

/* The in-kernel rewrite of the n-byte prefix at addr (bytes already read
 * into path) with rule's replacement, recorded in p, which this task owns
 * (PENDING). False when it did not fit or the page did not take the write:
 * nothing was written, and the agent is asked instead. */
static __always_inline bool write_in_kernel(struct nvm_patch *p, const char *path, __u64 addr,
					    __u32 rule, __u32 span, __u32 flags)
{
	struct nvm_alias *a = bpf_map_lookup_elem(&aliases, &rule);
	__u64 id = bpf_get_current_pid_tgid(), n = bounded_span(span);
	int v = flags & NVM_REQ_EXACT ? 1 : 0;

	if (!a || !n || a->need[v] > n)
		return false;
	if (bpf_probe_read_kernel(p->repl, n, &a->tail[v][NVM_ALIAS_END - n]))
		return false;
	__builtin_memcpy(p->orig, path, NVM_PATH_READ);
	p->span = n;
	p->tgid = id >> 32;
	p->tid = (__u32)id;
	/* Flagged before the write: a fork that copies the bytes meanwhile
	 * finds the record its child is repaired by. */
	p->flags = NVM_PATCH_F_INKERNEL;
	if (bpf_probe_write_user((void *)addr, p->repl, n) == 0)
		return true;
	p->flags = 0;
	count(ik_write_faults);
	return false;
}

/* Puts back the bytes of an in-kernel patch, if they are still its
 * replacement (else leaves them: the process changed them). False when the
 * page did not take the write: the agent is asked instead. */
static __always_inline bool restore_in_kernel(struct nvm_patch *p, __u64 addr)
{
	char cur[NVM_PATH_READ];
	__u64 n = bounded_span(p->span);
	bool same = true;

	if (!n)
		return true;
	if (bpf_probe_read_user(cur, n, (void *)addr))
		return false;
#pragma unroll
	for (int i = 0; i < NVM_PATH_READ - 1; i++)
		if (i < n && cur[i] != p->repl[i])
			same = false;
	if (!same) {
		count(ik_changed);
		return true;
	}
	if (bpf_probe_write_user((void *)addr, p->orig, n))
		return false;
	count(ik_restored);
	return true;
}

#endif
