/* Fork repairs: a child copied from an address space with a patch in
 * place gets its copy repaired by the agent before it first runs.
 *
 * Part of redirect.bpf.c, which defines, before including it, spinners, fork_room,
 * fork_waits, nr_cpus_online and kstats (count); and includes
 * slot.bpf.h first. */
#ifndef NVM_FORK_BPF_H
#define NVM_FORK_BPF_H

/* A child that does not share its parent's memory gets a copy of any patch
 * in place there: the agent repairs the copy now, before the child first
 * runs (this runs in the parent, before the child is woken). Not at the
 * child's first return to user space: on arm64 a fork child does not pass
 * sys_exit. */
struct room_ctx {
	__u64 until;
	bool room;
};

static long room_step(__u64 i, void *data)
{
	struct room_ctx *r = data;

	/* spinners counts this task too; a polling agent thread is not
	 * counted on (see may_spin) */
	if (spinners < nr_cpus_online) {
		r->room = true;
		return 1;
	}
	return bpf_ktime_get_ns() > r->until;
}

/* A fork repair must be done before the child runs: answered while the
 * parent waits, not left to the agent for later (NOWAIT), which would let
 * the child run with its copy of the patch. When every other CPU holds a
 * waiting task, this one may not wait (may_spin): it asks the others to
 * give way (fork_room; see give_way), so that one CPU frees for the agent,
 * and holds its own meanwhile, so that no new wait takes the freed one.
 * Their requests are unclaimed (the agent has no CPU) and cost a redirect
 * or defer a restore; a fork child that kept a patch would see mock bytes
 * in its own memory. Returns with this CPU released: ask_agent counts it
 * again, and finds the room. */
static __always_inline void make_room(__u32 cpu)
{
	/* A claimed request is answered within answer_limit_ns; an agent
	 * thread that was asleep needs a moment to run. */
	struct room_ctx r = { .until = bpf_ktime_get_ns() + soft_deadline_ns };

	if (nr_cpus_online < 2 || spinners + 1 < nr_cpus_online)
		return; /* there is room, or none to make */
	__sync_fetch_and_add(&spinners, 1);
	cpu_spinning[cpu & (NVM_MAX_SLOTS - 1)] = 1;
	__sync_fetch_and_add(&fork_room, 1);
	bpf_loop(1 << 23, room_step, &r, 0);
	__sync_fetch_and_add(&fork_room, -1);
	end_spin(cpu);
	if (r.room)
		count(room_made);
}

static __noinline void fix_fork_child(__u64 parent_mm, struct task_struct *child)
{
	struct nvm_ask rq = { .kind = NVM_REQ_FORKFIX, .mm = (__u64)child->mm,
			      .ref = parent_mm, .tid = (__u32)child->pid,
			      .tgid = (__u32)child->tgid };
	int res;

	/* From now until the answer, no task takes the last free CPU. */
	__sync_fetch_and_add(&fork_waits, 1);
	make_room(bpf_get_smp_processor_id());
	res = ask_agent(&rq, 0);
	__sync_fetch_and_add(&fork_waits, -1);
	if (res == NVM_RES_OK)
		count(fork_fixups);
	else
		count(fork_missed);
}

#endif
