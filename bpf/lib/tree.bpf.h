/* The tree in containers: in Kubernetes the agent binds its tree into each
 * target container's mount namespace, where the aliases must resolve. A
 * container's first process may look for the driver files before the
 * agent's periodic walk got to it (slurmd detects its GPUs at start): so the
 * first redirect in a namespace without the tree asks the agent to bind it
 * there now, and waits, as for a fork repair (the agent's work is in
 * another namespace, whose locks nobody waiting holds).
 *
 * Part of redirect.bpf.c, which defines, before including it, bind_tree,
 * the tree_ns map and kstats (count); and includes slot.bpf.h first. */
#ifndef NVM_TREE_BPF_H
#define NVM_TREE_BPF_H

/* A mount namespace's id, which the kernel never reuses: mnt_namespace.seq
 * before 6.18, ns_common.ns_id from it. */
struct mnt_namespace___seq {
	__u64 seq;
} __attribute__((preserve_access_index));
struct ns_common___id {
	__u64 ns_id;
} __attribute__((preserve_access_index));

static __always_inline __u64 current_mnt_ns_id(void)
{
	struct mnt_namespace *ns = bpf_get_current_task_btf()->nsproxy->mnt_ns;

	if (bpf_core_field_exists(struct mnt_namespace___seq, seq))
		return BPF_CORE_READ((struct mnt_namespace___seq *)ns, seq);
	return BPF_CORE_READ((struct ns_common___id *)&ns->ns, ns_id);
}

/* Makes sure the current task's mount namespace has the tree (bind_tree
 * only): the agent binds it and records the namespace in tree_ns. Returns
 * true if it asked (and waited): the caller's per-CPU scratch may have
 * been used by another task meanwhile. rq is the caller's, to keep this
 * out of the stack (6.1 allows 512 bytes for the whole call chain). */
static __always_inline bool ensure_tree(__u64 mm, struct nvm_ask *rq)
{
	__u64 ns = current_mnt_ns_id();

	if (bpf_map_lookup_elem(&tree_ns, &ns))
		return false;
	__builtin_memset(rq, 0, sizeof(*rq));
	rq->kind = NVM_REQ_BIND;
	rq->mm = mm;
	rq->ref = ns;
	if (ask_agent(rq, 0) == NVM_RES_OK)
		count(tree_binds);
	else
		count(tree_missing);
	return true;
}

#endif
