/* Holding a CPU, and waking the agent: which CPUs hold a waiting task
 * (a waiting task keeps its CPU with preemption off, so the last free CPU
 * may only wait while an agent thread polls), and the per-CPU doorbells
 * that wake the agent's threads on another CPU.
 *
 * Part of redirect.bpf.c, which defines, before including it, spinners, cpu_spinning,
 * nr_cpus_online, agent_poll_until, fork_waits, bell_cpus, nr_bells and the bells map. */
#ifndef NVM_DOORBELL_BPF_H
#define NVM_DOORBELL_BPF_H

/* A spinning task holds its CPU with preemption off. If every CPU spun, no
 * agent thread could run to end the waits: so the last CPU may only spin
 * while an agent thread is polling (it then has a CPU of its own), and not
 * at all while a fork repair waits. A poller can stop running within its
 * horizon (an answer that sleeps in a process's memory, throttling); a
 * task that takes the last CPU then holds it to its deadline, and so does
 * the forking parent on its own: the agent, with no CPU, answers neither,
 * and the child runs with the replacement in its copy. */
static __always_inline bool may_spin(__u32 cpu)
{
	__u32 before = __sync_fetch_and_add(&spinners, 1);

	if (before + 1 < nr_cpus_online ||
	    (!fork_waits && bpf_ktime_get_ns() < agent_poll_until)) {
		cpu_spinning[cpu & (NVM_MAX_SLOTS - 1)] = 1;
		return true;
	}
	__sync_fetch_and_add(&spinners, -1);
	return false;
}

static __always_inline void end_spin(__u32 cpu)
{
	cpu_spinning[cpu & (NVM_MAX_SLOTS - 1)] = 0;
	__sync_fetch_and_add(&spinners, -1);
}

/* Rings the doorbells of up to max CPUs other than this one, nearest
 * first, passing over CPUs where a task spins (their threads cannot run
 * now); if every one looked at spins, the first anyway. Two, not one, for
 * a waiting task: a CPU's threads may all be asleep on some process's
 * memory lock. The CPUs with a doorbell (the agent's, which its cpuset may
 * narrow) are in bell_cpus, ascending; NVM_RING_SCAN of them are looked at:
 * on a machine with more, one of those is free. Returns how many rang. */
#define NVM_RING_SCAN 8

/* Whether some CPU the agent serves from (bell_cpus) holds no waiting
 * task, so that a thread of the agent can run there. NVM_RING_SCAN of them
 * are looked at; on a machine with more, one is free (see ring_bells). */
static __always_inline bool agent_has_cpu(void)
{
	__u32 n = nr_bells;

	for (__u32 i = 0; i < NVM_RING_SCAN && i < n; i++)
		if (!cpu_spinning[bell_cpus[i & (NVM_MAX_SLOTS - 1)] & (NVM_MAX_SLOTS - 1)])
			return true;
	return n > NVM_RING_SCAN;
}

/* A record carries nothing: it only wakes the CPU's threads. */
static __always_inline bool ring_one(__u32 cpu)
{
	void *bell = bpf_map_lookup_elem(&bells, &cpu);

	return bell && !bpf_ringbuf_output(bell, &cpu, sizeof(cpu), BPF_RB_FORCE_WAKEUP);
}

static __always_inline __u32 ring_bells(__u32 cpu, __u32 max)
{
	__u32 n = nr_bells, rung = 0;
	__s32 first = -1;

	/* Where the agent has every CPU, bell_cpus[i] is i: starting at
	 * cpu + 1 is starting at the next CPU. */
	for (__u32 i = 0; i <= NVM_RING_SCAN && i < n && rung < max; i++) {
		__u32 other = bell_cpus[((cpu + 1 + i) % n) & (NVM_MAX_SLOTS - 1)];

		if (other == cpu)
			continue;
		if (first < 0)
			first = (__s32)other;
		if (!cpu_spinning[other & (NVM_MAX_SLOTS - 1)])
			rung += ring_one(other);
	}
	if (!rung && first >= 0)
		rung = ring_one((__u32)first);
	return rung;
}

#endif
