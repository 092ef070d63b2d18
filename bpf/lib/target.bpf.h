/* Targeting: whether the current task is in a target cgroup, or below one
 * (its verdict cached per task, for its cgroup and the target set's
 * generation), and whether a syscall's path argument is worth a look.
 *
 * Part of redirect.bpf.c, which defines, before including it, the targets map, the verdicts task storage, targets_gen, first_chars
 * and agent_tgid. */
#ifndef NVM_TARGET_BPF_H
#define NVM_TARGET_BPF_H

static __always_inline bool is_target(void)
{
	__u64 cg = bpf_get_current_cgroup_id();
	__u64 gen = targets_gen;
	struct nvm_verdict *v = bpf_task_storage_get(&verdicts, bpf_get_current_task_btf(), 0,
						     BPF_LOCAL_STORAGE_GET_F_CREATE);
	bool target = false;

	if (!v)
		return false;
	if (v->gen == gen && v->cgroup == cg)
		return v->target;
	/* A task is a target when its cgroup or any ancestor is one, so job
	 * cgroups created below a pod later are covered. */
	for (int level = 0; level < NVM_MAX_LEVELS; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		if (!id)
			break;
		if (bpf_map_lookup_elem(&targets, &id)) {
			target = true;
			break;
		}
	}
	v->gen = gen;
	v->cgroup = cg;
	v->target = target;
	return target;
}


/* Whether the path at addr may start like a rule or the tree root: most
 * paths leave on their second byte (first_chars). An unreadable one may:
 * the full read fails too, and the agent reads it. */
static __always_inline bool may_match(__u64 addr)
{
	unsigned char head[2];

	if (bpf_probe_read_user(head, sizeof(head), (void *)addr))
		return true;
	return head[0] == '/' && (first_chars[(head[1] >> 5) & 7] >> (head[1] & 31) & 1);
}

/* The path in the syscall's argument arg, if it may match and the task is
 * a target: else 0. The path's first bytes are looked at before the
 * task's cgroup: they turn away most paths of every task, targets or not,
 * for less than the verdict costs. */
static __always_inline __u64 target_arg(struct pt_regs *regs, int arg)
{
	/* regs is a typed pointer in tp_btf and fentry programs: read
	 * directly, with no helper call (arm64's first argument excepted:
	 * libbpf reads orig_x0 with a CO-RE helper). */
	__u64 addr = arg == 0 ? PT_REGS_PARM1_SYSCALL(regs) : PT_REGS_PARM2_SYSCALL(regs);

	if (!addr || !may_match(addr))
		return 0;
	if ((bpf_get_current_pid_tgid() >> 32) == agent_tgid || !is_target())
		return 0;
	return addr;
}

/* The same for syscall id, if it is a path syscall. */
static __always_inline __u64 target_path(struct pt_regs *regs, long id)
{
	int arg = nvm_path_arg(id);

	return arg < 0 ? 0 : target_arg(regs, arg);
}

static __always_inline __u64 current_mm(void)
{
	return (__u64)bpf_get_current_task_btf()->mm;
}

#endif
