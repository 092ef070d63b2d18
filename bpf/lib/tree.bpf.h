/* The tree in containers: in Kubernetes the agent binds its tree into each
 * target container's mount namespace, where the aliases must resolve. A
 * container's first process may look for the driver files before the
 * agent's periodic walk got to it (slurmd detects its GPUs at start): so the
 * first redirect in a namespace without the tree goes to the agent (not
 * written in the kernel), flagged NVM_REQ_TREE: the agent binds the tree
 * there, then patches, and records the namespace in tree_ns. The task
 * waits for it up to the hard deadline, as for a fork repair (the bind's
 * work is in another namespace, whose locks nobody waiting holds).
 *
 * Part of redirect.bpf.c, which defines, before including it, the tree_ns
 * map. */
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

/* Whether the current task's mount namespace is known to have the tree;
 * if not, its id in *ns, for the patch request that asks the agent to
 * bind it there first (NVM_REQ_TREE). */
static __always_inline bool tree_known(__u64 *ns)
{
	*ns = current_mnt_ns_id();
	return bpf_map_lookup_elem(&tree_ns, ns) != NULL;
}

#endif
