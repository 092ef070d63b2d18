// SPDX-License-Identifier: GPL-2.0
/* The kernel side of the assisted in-place rewrite.
 *
 * sys_enter: a task in a target cgroup passes a path that starts with a rule's
 * prefix -> post a request in this CPU's slot, ring the doorbell, and wait
 * (bounded) while the agent rewrites the bytes through /proc/<pid>/mem; the
 * kernel then copies the rewritten path. sys_exit: the last task relying on
 * that patch waits while the agent puts the original bytes back.
 * sched_process_fork: a child copied from a patched address space gets its
 * copy repaired before it first runs (the parent waits for the agent).
 *
 * The in-kernel variant (nvm_sys_enter_ik, nvm_sys_exit_ik; loaded instead
 * of the plain pair where bpf_probe_write_user is allowed, i.e. without
 * lockdown) writes the alias and the original bytes itself, with no agent
 * round trip; where the page does not take the write (a string literal's
 * read-only page, a page still shared with a fork) the same syscall asks
 * the agent, as the plain pair always does.
 *
 * The entry points: tp_btf sys_enter/sys_exit (every kernel), or, where
 * trampolines attach, fentry/fexit on each path syscall's function: only
 * the covered syscalls pay, not every syscall of the node.
 *
 * Everything a task pays for a path that starts like no rule is the
 * syscall-number switch (tp_btf) and a read of the path's first two bytes;
 * only paths that may match cost a per-task cached cgroup verdict. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "redirect.h"
#include "lib/syscalls.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the agent before load. */
/* While every CPU holds a waiting task, a request must be claimed by then
 * (see slot.bpf.h); a fork repair waits this long for a CPU or a slot. */
const volatile __u64 soft_deadline_ns = 50ULL * 1000 * 1000;
/* While the agent's process lives, a wait ends by then at the latest (see
 * slot.bpf.h). */
const volatile __u64 live_deadline_ns = 1000ULL * 1000 * 1000;
/* and answer this soon once it has claimed, while no CPU is free (see
 * wait_step) */
const volatile __u64 answer_limit_ns = 3ULL * 1000 * 1000;
/* A fork this soon after a patch came or went in its parent gets its copy
 * repaired (NVM_RECENT_NS, times the agent's time scale). */
const volatile __u64 recent_ns = NVM_RECENT_NS;
/* A request not rung because a thread was polling rings after all if
 * still unclaimed this long after it was posted (past the poller's
 * horizon) and no thread polls any more. */
const volatile __u64 rering_ns = 300ULL * 1000;
const volatile __u32 agent_tgid = 0; /* never hold the agent's own threads */
/* The agent binds the tree into containers (Kubernetes): a target task's
 * mount namespace must have it before the alias can resolve there. */
const volatile bool bind_tree = false;
const volatile __u32 nr_slots = 1;
const volatile __u32 nr_cpus_online = 2;

/* Set when the agent's process exits (nvm_agent_exit): waits end at once. */
volatile __u32 agent_gone;
/* Bumped by the agent whenever the target set changes. */
volatile __u64 targets_gen;
/* Tasks inside a syscall that relies on a patch, until its bytes are back
 * or handed to the agent: while 0, sys_exit returns at once. */
volatile __s64 nr_inflight;
/* Restores the kernel side left to the agent (the entry stays RESTORING),
 * not done yet: the kernel adds one when it hands one over, the agent takes
 * it off when it ends that entry, so it may be -1 for a moment. While not
 * 0, a fork may copy replaced bytes. */
volatile __s64 nr_handed;
struct nvm_kstats kstats;
/* Tasks spinning in a wait right now, which CPUs they hold, and until when
 * an agent thread is known to be polling (CLOCK_MONOTONIC ns, refreshed by
 * the agent). */
volatile __u32 spinners;
volatile __u8 cpu_spinning[NVM_MAX_SLOTS];
/* Fork repairs waiting for another CPU to free (see make_room): while
 * non-zero, waits that can give way do. */
volatile __u32 fork_room;
/* Fork repairs posted or about to be, not answered yet (see fix_fork_child):
 * while non-zero, the last free CPU stays free for the agent. */
volatile __u32 fork_waits;
/* The CPUs the agent has a doorbell on, ascending (set before attach). */
__u16 bell_cpus[NVM_MAX_SLOTS];
__u32 nr_bells;
volatile __u64 agent_poll_until;
/* Set by an exec in a target (see nvm_exec), taken by the agent. */
volatile __u64 agent_warm;
/* The bytes that follow the leading '/' of any rule or of the tree root
 * (and '/' itself, for "//..."), as a 256-bit set: most paths leave on their
 * second byte, before the path is copied or matched. Set by the agent. */
__u32 first_chars[8];
/* Always 0, and unknown to the verifier (.bss). Kernels before 6.7 verify a
 * bpf_loop callback once, from the caller's state at the call: a context
 * field known there as the constant 0 makes every branch of the callback
 * that needs another value dead, and dead code is removed (6.1 matched no
 * path at all). Context fields that change from step to step start from
 * this instead. */
volatile __u32 unknown_zero;

/* Target cgroup ids; the agent sizes it (--max-targets). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} targets SEC(".maps");

/* Each task's last verdict: for which cgroup and target set it holds. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct nvm_verdict);
} verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct nvm_rule_key);
	__type(value, __u32);
} rules SEC(".maps");

/* rule index -> its replacements, for the in-kernel rewrite */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NVM_MAX_RULES);
	__type(key, __u32);
	__type(value, struct nvm_alias);
} aliases SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, NVM_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct nvm_slot);
} slots SEC(".maps");

/* Doorbells, one per CPU: a record in one wakes the agent's service
 * threads of that CPU only. A waiting task rings another CPU's: its own
 * CPU's threads could not run before it stops waiting, and would then only
 * preempt it. The agent creates a ring for each CPU it serves from. */
struct bell_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* the agent sets the page size */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, NVM_MAX_SLOTS);
	__type(key, __u32);
	__array(values, struct bell_ring);
} bells SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 65536);
} notes SEC(".maps");

struct scratch {
	char path[128]; /* NVM_PATH_READ used; the rest lets indexes be masked */
	struct nvm_rule_key key;
	struct nvm_patch patch; /* a new patch's entry, before it goes in the map
				 * (not on the stack: 6.1 allows 512 bytes for a
				 * whole call chain) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, struct nvm_patch_key);
	__type(value, struct nvm_patch);
} patches SEC(".maps");

/* tid -> the patch its current syscall relies on */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct nvm_patch_key);
} inflight SEC(".maps");

/* Mount namespaces (by their never-reused id) the agent has bound the
 * tree into, or found it in (bind_tree). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} tree_ns SEC(".maps");

/* address space -> last time a patch came or went in it */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u64);
} mm_recent SEC(".maps");

#define count(field) __sync_fetch_and_add(&kstats.field, 1)

/* The mechanisms, each in a header of its own (bpf/lib), over the globals
 * and maps above. */
#include "lib/target.bpf.h"
#include "lib/doorbell.bpf.h"
#include "lib/slot.bpf.h"
#include "lib/match.bpf.h"
#include "lib/inkernel.bpf.h"
#include "lib/tree.bpf.h"
#include "lib/patch.bpf.h"
#include "lib/fork.bpf.h"

/* The tp_btf entry programs, in each rewrite variant (suffix empty or _ik);
 * the exit programs follow below. */
#define NVM_TP_ENTER(suffix, enter)                                                 \
	SEC("tp_btf/sys_enter")                                                     \
	int BPF_PROG(nvm_sys_enter##suffix, struct pt_regs *regs, long id)          \
	{                                                                           \
		__u64 addr = target_path(regs, id);                                 \
		if (addr)                                                           \
			enter(current_mm(), addr, nvm_is_exec(id));                 \
		return 0;                                                           \
	}
NVM_TP_ENTER(, enter_path)
NVM_TP_ENTER(_ik, enter_path_ik)


#define NVM_TP_EXIT(suffix, release)                                                \
	SEC("tp_btf/sys_exit")                                                      \
	int BPF_PROG(nvm_sys_exit##suffix, struct pt_regs *regs, long ret)          \
	{                                                                           \
		struct nvm_patch_key key;                                           \
		if (exit_patch(regs, &key)) {                                       \
			release(&key);                                              \
			done_inflight();                                            \
		}                                                                   \
		return 0;                                                           \
	}
NVM_TP_EXIT(, release)
NVM_TP_EXIT(_ik, release_ik)


/* The fentry entry points: one fentry/fexit pair per path syscall, on its
 * function (__x64_sys_openat, ...), in each rewrite variant; the agent
 * loads the set it uses. The path is the syscall's argument, as in
 * sys_enter; the patch the syscall relied on is released at its fexit.
 * suffix: empty (assisted) or _ik (in-kernel: the agent tells the variants
 * apart by it); enter: enter_path or enter_path_ik; release: release or
 * release_ik. */
#define NVM_FENTRY_ENTER(suffix, enter, name, arg, exec)                            \
	SEC("fentry/" NVM_SYS_PREFIX #name)                                         \
	int BPF_PROG(nvm_fe_##name##suffix, struct pt_regs *regs)                   \
	{                                                                           \
		__u64 addr = target_arg(regs, arg);                                 \
		if (addr)                                                           \
			enter(current_mm(), addr, exec);                            \
		return 0;                                                           \
	}
#define NVM_FENTRY_EXIT(suffix, release, name)                                      \
	SEC("fexit/" NVM_SYS_PREFIX #name)                                          \
	int BPF_PROG(nvm_fx_##name##suffix, struct pt_regs *regs, long ret)         \
	{                                                                           \
		struct nvm_patch_key key;                                           \
		if (syscall_patch(&key)) {                                          \
			release(&key);                                              \
			done_inflight();                                            \
		}                                                                   \
		return 0;                                                           \
	}
#define NVM_FENTRY_X(name, arg, exec)                                               \
	NVM_FENTRY_ENTER(, enter_path, name, arg, exec)                             \
	NVM_FENTRY_ENTER(_ik, enter_path_ik, name, arg, exec)                       \
	NVM_FENTRY_EXIT(, release, name)                                            \
	NVM_FENTRY_EXIT(_ik, release_ik, name)
#define NVM_FENTRY(name, arg) NVM_FENTRY_X(name, arg, false)
#define NVM_FENTRY_EXEC(name, arg) NVM_FENTRY_X(name, arg, true)

NVM_PATH_SYSCALLS(NVM_FENTRY)
NVM_EXEC_SYSCALLS(NVM_FENTRY_EXEC)


/* libibverbs asks the kernel's RDMA netlink for the HCAs first and reads
 * sysfs only when that socket cannot be had; a kernel with ib_core answers
 * that there are none. A target's socket(AF_NETLINK, *, NETLINK_RDMA) then
 * fails as on a kernel without it. The socket_create LSM hook is where a
 * program may fail it (syscalls take fmod_ret only on kernels with error
 * injection, which Debian's lack); loaded only where BPF LSM attaches and
 * the profile has HCAs. */
#define NVM_AF_NETLINK 16
#define NVM_NETLINK_RDMA 20
#define NVM_EPROTONOSUPPORT 93
SEC("lsm/socket_create")
int BPF_PROG(nvm_no_rdma_netlink, int family, int type, int protocol, int kern, int ret)
{
	if (ret || kern || family != NVM_AF_NETLINK || protocol != NVM_NETLINK_RDMA)
		return ret;
	if ((bpf_get_current_pid_tgid() >> 32) == agent_tgid || !is_target())
		return 0;
	count(rdma_netlink_refused);
	return -NVM_EPROTONOSUPPORT;
}


SEC("tp_btf/sched_process_fork")
int BPF_PROG(nvm_fork, struct task_struct *parent, struct task_struct *child)
{
	__u64 pmm = (__u64)parent->mm, *last;

	/* The agent never has patches; its own forks (to enter a container's
	 * mount namespace) must not wait for itself. */
	if (!child->mm || (__u64)child->mm == pmm || parent->tgid == agent_tgid)
		return 0;
	/* The child copied whatever its parent's memory held when the fork
	 * copied it. Ask while any patch may be in place anywhere: a task
	 * relies on one (threads that keep joining one patch keep it in
	 * place with no new write or restore to mark the address space
	 * recent), or a restore was handed to the agent; else when a patch
	 * came or went in the parent lately (a restore after the copy leaves
	 * the child the replacement). The agent repairs only what its
	 * records of this address space say. */
	if (!nr_inflight && !nr_handed) {
		last = bpf_map_lookup_elem(&mm_recent, &pmm);
		if (!last || bpf_ktime_get_ns() - *last > recent_ns)
			return 0;
	}
	fix_fork_child(pmm, child);
	return 0;
}

/* The agent's process is exiting (killed, or its last thread ending): no
 * answer will come, so every wait ends now rather than at its limit. Its
 * programs are still attached here (the files go later in the exit). A
 * thread of the agent that ends while the process lives changes nothing. */
#define NVM_SIGNAL_GROUP_EXIT 0x4
SEC("tp_btf/sched_process_exit")
int BPF_PROG(nvm_agent_exit, struct task_struct *p)
{
	if (!agent_tgid || p->tgid != agent_tgid)
		return 0;
	if (p->signal->live.counter && !(p->signal->flags & NVM_SIGNAL_GROUP_EXIT))
		return 0;
	agent_gone = 1;
	return 0;
}

/* A program starting in a target will soon read its files: wake the agent
 * so that a thread polls by then. Without, the first reads of a burst meet
 * an agent still waking, and on few CPUs a task that would have to wait on
 * the last CPU meanwhile cannot (see may_spin). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(nvm_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), old = (__u32)old_pid;

	/* A thread other than the leader that execs takes the leader's pid:
	 * the patch its execve relies on moves with it, so that its sys_exit
	 * finds it (the address space went; see leave_patch). */
	if (nr_inflight && old != tid) {
		struct nvm_patch_key *k = bpf_map_lookup_elem(&inflight, &old);

		if (k && !bpf_map_update_elem(&inflight, &tid, k, BPF_ANY))
			bpf_map_delete_elem(&inflight, &old);
	}
	if (bpf_ktime_get_ns() < agent_poll_until || !is_target())
		return 0;
	agent_warm = 1;
	ring_bells(bpf_get_smp_processor_id(), 1);
	return 0;
}

/* The rule matcher on one path from user space (BPF_PROG_RUN): never
 * attached, and not loaded by the agent; the test that holds match.bpf.h to
 * agent/render/rules.c runs a table of paths through it. */
SEC("syscall")
int nvm_match(struct nvm_match_run *run)
{
	__u32 zero = 0, rule = 0, span = 0, flags = 0;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);
	enum match m;

	if (!sc)
		return 1;
	__builtin_memcpy(sc->path, run->path, NVM_PATH_READ);
	sc->path[NVM_PATH_READ - 1] = '\0';
	m = match_rule(sc, &rule, &span, &flags);
	run->match = m == M_NONE ? -1 : m == M_RULE ? 0 : 1;
	run->rule = m == M_RULE ? rule : 0;
	run->span = m == M_RULE ? span : 0;
	run->exact = m == M_RULE && (flags & NVM_REQ_EXACT);
	return 0;
}
