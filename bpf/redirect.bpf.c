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
#include "syscalls.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the agent before load. */
const volatile __u64 soft_deadline_ns = 50ULL * 1000 * 1000; /* agent must claim by then */
const volatile __u64 hard_deadline_ns = 100ULL * 1000 * 1000; /* and finish by then */
/* and answer this soon once it has claimed (see wait_step) */
const volatile __u64 answer_limit_ns = 3ULL * 1000 * 1000;
/* A fork this soon after a patch came or went in its parent gets its copy
 * repaired (NVM_RECENT_NS, times the agent's time scale). */
const volatile __u64 recent_ns = NVM_RECENT_NS;
/* A request not rung because a thread was polling rings after all if
 * still unclaimed this long after it was posted (past the poller's
 * horizon) and no thread polls any more. */
const volatile __u64 rering_ns = 300ULL * 1000;
const volatile __u32 agent_tgid = 0; /* never hold the agent's own threads */
const volatile __u32 nr_slots = 1;
const volatile __u32 nr_cpus_online = 2;

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
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

/* address space -> last time a patch came or went in it */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u64);
} mm_recent SEC(".maps");

#define count(field) __sync_fetch_and_add(&kstats.field, 1)

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

static __always_inline void note_miss(__u32 kind, __u64 addr, __u32 state)
{
	struct nvm_note *n = bpf_ringbuf_reserve(&notes, sizeof(*n), 0);
	__u64 id = bpf_get_current_pid_tgid();

	count(deadline_misses);
	if (!n)
		return;
	n->type = NVM_NOTE_MISS;
	n->kind = kind;
	n->tid = (__u32)id;
	n->tgid = id >> 32;
	n->addr = addr;
	n->slot_state = state;
	n->pad = 0;
	bpf_ringbuf_submit(n, 0);
}

/* A spinning task holds its CPU with preemption off. If every CPU spun, no
 * agent thread could run to end the waits: so the last CPU may only spin
 * while an agent thread is polling (it then has a CPU of its own). */
static __always_inline bool may_spin(__u32 cpu)
{
	__u32 before = __sync_fetch_and_add(&spinners, 1);

	if (before + 1 < nr_cpus_online || bpf_ktime_get_ns() < agent_poll_until) {
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

enum wait_outcome { W_PENDING, W_DONE, W_TIMEOUT, W_LOST, W_RERING, W_GAVE_WAY };

struct wait_ctx {
	struct nvm_slot *slot;
	__u64 seq;
	__u64 soft, hard;
	__u64 answer_by; /* set when the request is first seen claimed */
	__u16 last_state;
	/* Not rung because a thread was polling: the wait stops (W_RERING)
	 * for the caller to ring if the request is still unclaimed
	 * NVM_RERING_NS after it was posted and no thread polls any more.
	 * (16 bits, so the context stays 48 bytes: 6.1 counts it in a stack
	 * of at most 512.) */
	__u16 unrung;
	int outcome;
};


/* A fork repair is waiting for a CPU (make_room): an unclaimed request
 * gives way, a claimed one is being answered and is waited for. A patch is
 * taken back (the syscall goes on unredirected); a restore is left to the
 * agent (LEFT), which then finishes it on its own. One CAS either way: if
 * the agent claimed first, the wait goes on. */
static __always_inline bool give_way(struct wait_ctx *w, __u64 word)
{
	__u64 to = w->slot->kind == NVM_REQ_RESTORE ? NVM_SLOT_WORD(w->seq, NVM_SLOT_LEFT)
						    : NVM_SLOT_WORD(w->seq + 1, NVM_SLOT_FREE);

	if (__sync_val_compare_and_swap(&w->slot->word, word, to) != word)
		return false;
	w->outcome = W_GAVE_WAY;
	return true;
}

/* What a slot becomes when its wait runs out: free again, the agent then
 * writing nothing (unclaimed) or undoing its write (claimed); but an
 * unclaimed fork repair is left to the agent (LEFT), which still repairs
 * the child when it gets to it. */
static __always_inline __u64 timed_out(struct wait_ctx *w, __u64 word)
{
	if (NVM_SLOT_STATE(word) == NVM_SLOT_WAITING && w->slot->kind == NVM_REQ_FORKFIX)
		return NVM_SLOT_WORD(w->seq, NVM_SLOT_LEFT);
	return NVM_SLOT_WORD(w->seq + 1, NVM_SLOT_FREE);
}

/* One step of the bounded wait on a slot. Returns 1 to stop. */
static long wait_step(__u64 i, void *data)
{
	struct wait_ctx *w = data;
	__u64 word = *(volatile __u64 *)&w->slot->word;
	__u64 now;

	w->last_state = NVM_SLOT_STATE(word);
	if (NVM_SLOT_SEQ(word) != w->seq) {
		w->outcome = W_LOST;
		return 1;
	}
	switch (NVM_SLOT_STATE(word)) {
	case NVM_SLOT_DONE:
		w->outcome = W_DONE;
		return 1;
	case NVM_SLOT_WAITING:
	case NVM_SLOT_CLAIMED:
		/* A fork repair is waiting for a CPU to free (make_room). */
		if (NVM_SLOT_STATE(word) == NVM_SLOT_WAITING && fork_room &&
		    w->slot->kind != NVM_REQ_FORKFIX)
			return give_way(w, word);
		/* Unclaimed, the soft deadline applies; claimed, the hard one,
		 * or answer_limit_ns after the claim, whichever comes first.
		 * An answer takes well under a millisecond unless the agent
		 * sleeps on a lock of this process's memory (another thread's
		 * mmap, fork or exit holds it), and that holder may need the
		 * very CPU this wait keeps: waiting on would only stall both
		 * CPUs' worth of readers. Taking the slot back is a CAS: if the
		 * agent moved it first, the next step sees its new state. */
		now = bpf_ktime_get_ns();
		/* The poller stopped running before it saw this request
		 * (preempted, throttled): wake the others after all. */
		if (NVM_SLOT_STATE(word) == NVM_SLOT_WAITING && w->unrung &&
		    now > w->soft - soft_deadline_ns + rering_ns && now >= agent_poll_until) {
			w->outcome = W_RERING; /* the caller rings: not in this frame */
			return 1;
		}
		/* A fork repair writes into the child's memory, whose locks
		 * nobody else holds: it is waited for up to the hard deadline
		 * (see fix_fork_child). */
		if (NVM_SLOT_STATE(word) == NVM_SLOT_CLAIMED && !w->answer_by)
			w->answer_by = w->slot->kind == NVM_REQ_FORKFIX || now + answer_limit_ns > w->hard
					       ? w->hard : now + answer_limit_ns;
		if (now > (NVM_SLOT_STATE(word) == NVM_SLOT_WAITING ? w->soft : w->answer_by) &&
		    __sync_val_compare_and_swap(&w->slot->word, word, timed_out(w, word)) == word) {
			w->outcome = W_TIMEOUT;
			return 1;
		}
		return 0;
	}
	w->outcome = W_LOST;
	return 1;
}

/* Posts a request in this CPU's slot and waits for the agent's answer.
 * Returns an nvm_result, or -1 when it could not be asked or did not answer
 * in time (counted and noted). */
struct nvm_ask {
	__u32 kind, flags, rule, span;
	__u64 mm, addr, parent_mm;
	__u32 tid, tgid; /* the task whose memory it is; 0: this one */
};

/* Reserves a free request slot: this CPU's own first (its thread of the
 * agent is the one that polls it soonest), else the next free one; with
 * until set, going round again until then (a fork repair waits for a slot
 * the agent frees). */
struct reserve_ctx {
	__u32 first, idx;
	__u64 until; /* (24 bytes: 6.1 counts it in a stack of at most 512) */
	struct nvm_slot *slot;
};

static long reserve_step(__u64 i, void *data)
{
	struct reserve_ctx *r = data;
	__u32 idx;
	struct nvm_slot *s;
	__u64 word;

	/* Each round over the slots, look at the clock. */
	if (i >= nr_slots && i % nr_slots == 0 && bpf_ktime_get_ns() > r->until)
		return 1;
	idx = (r->first + (__u32)(i % nr_slots)) % nr_slots;
	s = bpf_map_lookup_elem(&slots, &idx);
	if (!s)
		return 1;
	word = *(volatile __u64 *)&s->word;
	if (NVM_SLOT_STATE(word) != NVM_SLOT_FREE)
		return 0;
	if (__sync_val_compare_and_swap(&s->word, word,
					NVM_SLOT_WORD(NVM_SLOT_SEQ(word), NVM_SLOT_FILLING)) != word)
		return 0;
	r->idx = idx;
	r->slot = s;
	return 1;
}

static __noinline int ask_agent(const struct nvm_ask *rq, const char *path)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct wait_ctx w = {};
	struct nvm_slot *s;
	__u64 word, id = bpf_get_current_pid_tgid(), now;
	__u32 flags = rq->flags;
	bool spin = may_spin(cpu);

	/* A patch cannot be done without waiting for it; a restore or a fork
	 * repair can: the agent does it as soon as it runs. */
	if (!spin) {
		if (rq->kind == NVM_REQ_PATCH) {
			count(busy_no_cpu);
			goto busy;
		}
		flags |= NVM_REQ_NOWAIT;
	}

	struct reserve_ctx r = { .first = cpu };

	if (rq->kind == NVM_REQ_FORKFIX && spin)
		r.until = bpf_ktime_get_ns() + soft_deadline_ns;
	bpf_loop(1 << 20, reserve_step, &r, 0);
	if (!r.slot) {
		count(busy_no_slot);
		goto busy;
	}
	s = r.slot;
	word = *(volatile __u64 *)&s->word; /* FILLING: only this task moves it now */
	s->kind = rq->kind;
	s->flags = flags;
	s->tid = rq->tid ? rq->tid : (__u32)id;
	s->tgid = rq->tid ? rq->tgid : id >> 32;
	s->rule = rq->rule;
	s->span = rq->span;
	s->mm = rq->mm;
	s->addr = rq->addr;
	s->parent_mm = rq->parent_mm;
	s->result = -1;
	s->posted_ns = bpf_ktime_get_ns();
	if (path)
		__builtin_memcpy(s->path, path, NVM_PATH_READ);
	else
		s->path[0] = '\0';
	w.seq = NVM_SLOT_SEQ(word);
	w.answer_by = unknown_zero; /* see unknown_zero */
	w.last_state = unknown_zero;
	/* The fields are written before the state says WAITING: the CAS is
	 * a full barrier. Only this task moves a FILLING slot. */
	__sync_val_compare_and_swap(&s->word, word, NVM_SLOT_WORD(w.seq, NVM_SLOT_WAITING));
	/* A polling thread sees the slot without a wake-up, which costs an
	 * interrupt to a CPU that may be halted (tens of us in a VM); the
	 * poller sweeps the slots once more after it stops polling, and a
	 * request it never saw rings after all (wait_step). */
	w.unrung = 1;
	if (bpf_ktime_get_ns() >= agent_poll_until) {
		w.unrung = (__u16)unknown_zero; /* see unknown_zero */
		if (!ring_bells(cpu, 2)) {
			word = NVM_SLOT_WORD(w.seq, NVM_SLOT_WAITING);
			if (__sync_val_compare_and_swap(&s->word, word,
							NVM_SLOT_WORD(w.seq + 1, NVM_SLOT_FREE)) == word) {
				count(busy_no_bell);
				goto busy;
			}
		}
	}
	if (!spin) {
		count(deferred);
		if (rq->kind == NVM_REQ_FORKFIX)
			count(fork_unwaited);
		return -1; /* the agent frees the slot when it is done */
	}
	now = bpf_ktime_get_ns();
	w.slot = s;
	w.soft = now + soft_deadline_ns;
	w.hard = now + hard_deadline_ns;
	w.outcome = W_PENDING;
	bpf_loop(1 << 23, wait_step, &w, 0);
	if (w.outcome == W_RERING) {
		ring_bells(cpu, 2);
		w.unrung = 0;
		w.outcome = W_PENDING;
		bpf_loop(1 << 23, wait_step, &w, 0);
	}
	end_spin(cpu);
	if (w.outcome == W_GAVE_WAY) {
		count(busy_gave_way);
		if (rq->kind == NVM_REQ_RESTORE)
			count(deferred); /* the agent restores it */
		else
			count(slot_busy);
		return -1;
	}
	if (w.outcome == W_DONE) {
		int res = s->result;

		__sync_val_compare_and_swap(&s->word, NVM_SLOT_WORD(w.seq, NVM_SLOT_DONE),
					    NVM_SLOT_WORD(w.seq + 1, NVM_SLOT_FREE));
		return res;
	}
	if (w.outcome == W_PENDING) {
		/* bpf_loop ran out of iterations before the clock did. */
		word = *(volatile __u64 *)&s->word;
		__sync_val_compare_and_swap(&s->word, word,
					    NVM_SLOT_WORD(w.seq + 1, NVM_SLOT_FREE));
	}
	note_miss(rq->kind, rq->addr, w.last_state);
	return -1;
busy:
	if (spin)
		end_spin(cpu);
	count(slot_busy);
	return -1;
}

/* Finds the rule whose prefix the path starts with, at a '/' boundary, with
 * repeated '/' folded. The rules map also holds every shorter prefix of a
 * rule (value NVM_RULE_PREFIX), so a path leaves at its first component that
 * no rule has: most paths cost one lookup. One character per bpf_loop step,
 * so the verifier checks the step once, not every path through 72 of them. */
struct match_ctx {
	struct scratch *sc;
	__u32 klen;
	__u32 rule;
	__u32 span;
	int state; /* 0 scanning, 1 matched, 2 exact checked, 3 alias, -1 no match */
};

static long match_step(__u64 i, void *data)
{
	struct match_ctx *m = data;
	struct nvm_rule_key *k = &m->sc->key;
	__u32 j = (__u32)i, klen = m->klen;
	char c;

	if (j >= NVM_PATH_READ)
		return 1;
	c = m->sc->path[j & 127];
	if (m->state == 1) {
		/* After the prefix: only '/' up to the end means "exact". */
		if (c == '\0') {
			m->state = 2;
			return 1;
		}
		if (c != '/')
			return 1;
		return 0;
	}
	if ((c == '/' || c == '\0') && klen > 1) {
		__u32 *r;

		k->len = klen;
		r = bpf_map_lookup_elem(&rules, k);
		if (!r) {
			m->state = -1;
			return 1;
		}
		if (*r == NVM_RULE_ALIAS) {
			m->state = 3;
			return 1;
		}
		if (*r != NVM_RULE_PREFIX) {
			m->rule = *r;
			m->span = j;
			m->state = 1;
			if (c == '\0') {
				m->state = 2;
				return 1;
			}
			return 0;
		}
	}
	if (c == '\0' || klen >= NVM_FROM_MAX - 1) {
		m->state = -1;
		return 1;
	}
	if (c == '/' && klen && k->s[(klen - 1) & (NVM_FROM_MAX - 1)] == '/')
		return 0;
	k->s[klen & (NVM_FROM_MAX - 1)] = c;
	m->klen = klen + 1;
	return 0;
}

enum match { M_NONE, M_RULE, M_ALIAS };

/* M_ALIAS: the path is already under the tree root, e.g. a string another
 * thread of this address space has patched. */
static __always_inline enum match match_rule(struct scratch *sc, __u32 *rule,
					     __u32 *span, __u32 *flags)
{
	struct match_ctx m = { .sc = sc, .klen = unknown_zero, .rule = unknown_zero,
			       .span = unknown_zero, .state = (int)unknown_zero };

	if (sc->path[0] != '/')
		return M_NONE;
	__builtin_memset(&sc->key, 0, sizeof(sc->key));
	bpf_loop(NVM_PATH_READ, match_step, &m, 0);
	if (m.state == 3)
		return M_ALIAS;
	if (m.state <= 0)
		return M_NONE;
	*rule = m.rule;
	*span = m.span;
	*flags = m.state == 2 ? NVM_REQ_EXACT : 0;
	return M_RULE;
}

static __always_inline void touch_mm(__u64 mm)
{
	__u64 now = bpf_ktime_get_ns();

	bpf_map_update_elem(&mm_recent, &mm, &now, BPF_ANY);
}

static __always_inline void track(struct nvm_patch_key *key)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (!bpf_map_update_elem(&inflight, &tid, key, BPF_ANY))
		__sync_fetch_and_add(&nr_inflight, 1);
}

enum join_outcome { J_WAITING, J_JOINED, J_GONE, J_TIMEOUT, J_GAVE_WAY };

struct join_ctx {
	struct nvm_patch_key key;
	__u64 deadline;
	int outcome;
};

/* One step of waiting to share a patch another thread of this address space
 * has asked for or has in place. */
static long join_step(__u64 i, void *data)
{
	struct join_ctx *j = data;
	struct nvm_patch *p = bpf_map_lookup_elem(&patches, &j->key);
	__u64 word;

	if (!p) {
		j->outcome = J_GONE;
		return 1;
	}
	word = *(volatile __u64 *)&p->word;
	if (NVM_PATCH_STATE(word) == NVM_PATCH_RESTORED) {
		j->outcome = J_GONE; /* a record only: take it over */
		return 1;
	}
	if (NVM_PATCH_STATE(word) == NVM_PATCH_APPLIED && NVM_PATCH_USERS(word) > 0) {
		if (__sync_val_compare_and_swap(&p->word, word, word + 1) == word) {
			j->outcome = J_JOINED;
			return 1;
		}
		return 0;
	}
	if (fork_room) { /* see make_room */
		j->outcome = J_GAVE_WAY;
		return 1;
	}
	if (bpf_ktime_get_ns() > j->deadline) {
		j->outcome = J_TIMEOUT;
		return 1;
	}
	return 0;
}

/* Waits to share the patch at key another thread of this address space has
 * asked for or has in place. Returns true when the syscall is done with (it
 * shares the patch, or it had to go on without), false when the patch went
 * away and the path must be looked at again. */
static __always_inline bool share_patch(struct nvm_patch_key *key)
{
	struct join_ctx j = { .key = *key, .outcome = J_WAITING,
			      .deadline = bpf_ktime_get_ns() + hard_deadline_ns };

	/* A patch already in place is joined at once: only one still being
	 * written needs a wait, and a CPU to wait on. */
	join_step(0, &j);
	if (j.outcome == J_WAITING) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (!may_spin(cpu)) {
			count(busy_no_cpu);
			count(slot_busy);
			return true;
		}
		bpf_loop(1 << 23, join_step, &j, 0);
		end_spin(cpu);
	}
	if (j.outcome == J_JOINED) {
		count(shared);
		track(key);
		return true;
	}
	if (j.outcome == J_GONE)
		return false;
	if (j.outcome == J_GAVE_WAY) {
		count(busy_gave_way);
		count(slot_busy);
		return true;
	}
	note_miss(0, key->addr, 0);
	return true;
}

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

/* Takes over the record of a restored in-kernel patch at key (see
 * NVM_PATCH_RESTORED): true if this task now owns it, PENDING. */
static __always_inline bool take_over(struct nvm_patch_key *key)
{
	struct nvm_patch *p = bpf_map_lookup_elem(&patches, key);
	__u64 word = NVM_PATCH_WORD(NVM_PATCH_RESTORED, 0);

	if (!p || __sync_val_compare_and_swap(&p->word, word,
					      NVM_PATCH_WORD(NVM_PATCH_PENDING, 1)) != word)
		return false;
	p->since = bpf_ktime_get_ns();
	p->flags = 0;
	return true;
}
/* The patches map is only consulted when the path matches a rule (to take or
 * share its patch) or is already under the tree root (someone's patch), so
 * a target's other paths cost one read and one rules lookup. */
static __always_inline void enter_path_body(__u64 mm, __u64 addr, const bool in_kernel)
{
	struct nvm_patch_key key = { .mm = mm, .addr = addr };
	__u32 zero = 0;

	for (int attempt = 0; attempt < 3; attempt++) {
		struct nvm_patch np = {}, *p;
		__u32 rule = 0, span = 0, flags = 0;
		struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);
		enum match m = M_RULE;
		int res;

		if (!sc)
			return;
		if (bpf_probe_read_user_str(sc->path, NVM_PATH_READ, (void *)addr) < 0) {
			/* Not mapped in yet (a fresh fork): the agent reads it. */
			flags = NVM_REQ_UNREAD;
			count(read_faults);
		} else {
			m = match_rule(sc, &rule, &span, &flags);
			if (m == M_NONE)
				return;
		}
		if (m == M_ALIAS) {
			/* No patch here now: either the path names the tree
			 * itself, or its patch was restored after we read it;
			 * read again (the last attempt lets it go as it is). */
			p = bpf_map_lookup_elem(&patches, &key);
			if (!p || NVM_PATCH_STATE(p->word) == NVM_PATCH_RESTORED)
				continue;
			if (share_patch(&key))
				return;
			continue;
		}
		np.word = NVM_PATCH_WORD(NVM_PATCH_PENDING, 1);
		np.since = bpf_ktime_get_ns();
		if (bpf_map_update_elem(&patches, &key, &np, BPF_NOEXIST) && !take_over(&key)) {
			/* Another thread has asked for this patch: share it. */
			if (share_patch(&key))
				return;
			continue;
		}
		if (!(flags & NVM_REQ_UNREAD))
			count(matched);
		touch_mm(mm);
		if (in_kernel && !(flags & NVM_REQ_UNREAD) &&
		    (p = bpf_map_lookup_elem(&patches, &key)) &&
		    write_in_kernel(p, sc->path, addr, rule, span, flags)) {
			__sync_val_compare_and_swap(&p->word,
						    NVM_PATCH_WORD(NVM_PATCH_PENDING, 1),
						    NVM_PATCH_WORD(NVM_PATCH_APPLIED, 1));
			count(rewritten);
			count(ik_rewritten);
			track(&key);
			return;
		}
		struct nvm_ask rq = { .kind = NVM_REQ_PATCH, .flags = flags, .rule = rule,
				      .span = span, .mm = mm, .addr = addr };

		res = ask_agent(&rq, sc->path);
		p = bpf_map_lookup_elem(&patches, &key);
		if (res == NVM_RES_OK && p) {
			__sync_val_compare_and_swap(&p->word,
						    NVM_PATCH_WORD(NVM_PATCH_PENDING, 1),
						    NVM_PATCH_WORD(NVM_PATCH_APPLIED, 1));
			if (flags & NVM_REQ_UNREAD)
				count(matched);
			count(rewritten);
			track(&key);
			return;
		}
		if (res == NVM_RES_FAILED)
			count(agent_failed);
		/* No match, failure or no answer: nothing is in place (after a
		 * late write the agent undoes it itself). */
		bpf_map_delete_elem(&patches, &key);
		return;
	}
}

static __noinline void enter_path(__u64 mm, __u64 addr)
{
	enter_path_body(mm, addr, false);
}

static __noinline void enter_path_ik(__u64 mm, __u64 addr)
{
	enter_path_body(mm, addr, true);
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

/* The tp_btf entry programs, in each rewrite variant (suffix empty or _ik);
 * the exit programs follow below. */
#define NVM_TP_ENTER(suffix, enter)                                                 \
	SEC("tp_btf/sys_enter")                                                     \
	int BPF_PROG(nvm_sys_enter##suffix, struct pt_regs *regs, long id)          \
	{                                                                           \
		__u64 addr = target_path(regs, id);                                 \
		if (addr)                                                           \
			enter(current_mm(), addr);                                  \
		return 0;                                                           \
	}
NVM_TP_ENTER(, enter_path)
NVM_TP_ENTER(_ik, enter_path_ik)

/* A patch's bytes are back: an in-kernel patch's record stays (RESTORED)
 * for fork children that copied it; the agent's own are in its book. */
static __always_inline void restored(struct nvm_patch_key *key, struct nvm_patch *p)
{
	if (p->flags & NVM_PATCH_F_INKERNEL) {
		p->since = bpf_ktime_get_ns();
		__sync_val_compare_and_swap(&p->word, NVM_PATCH_WORD(NVM_PATCH_RESTORING, 0),
					    NVM_PATCH_WORD(NVM_PATCH_RESTORED, 0));
	} else {
		bpf_map_delete_elem(&patches, key);
	}
	touch_mm(key->mm);
	count(restored);
}

/* The last user of a patch puts the original bytes back. */
static __always_inline void release_body(struct nvm_patch_key *key, const bool in_kernel)
{
	for (int i = 0; i < 16; i++) {
		struct nvm_patch *p = bpf_map_lookup_elem(&patches, key);
		__u64 word;

		if (!p)
			return;
		word = *(volatile __u64 *)&p->word;
		if (NVM_PATCH_STATE(word) != NVM_PATCH_APPLIED || !NVM_PATCH_USERS(word))
			return;
		if (NVM_PATCH_USERS(word) > 1) {
			if (__sync_val_compare_and_swap(&p->word, word, word - 1) == word)
				return;
			continue;
		}
		if (__sync_val_compare_and_swap(&p->word, word,
						NVM_PATCH_WORD(NVM_PATCH_RESTORING, 0)) != word)
			continue;
		p->since = bpf_ktime_get_ns(); /* the agent's janitor goes by it */
		/* A fork while the bytes go back copies them as they are. */
		touch_mm(key->mm);
		if (in_kernel && (p->flags & NVM_PATCH_F_INKERNEL) &&
		    restore_in_kernel(p, key->addr)) {
			restored(key, p);
			return;
		}
		struct nvm_ask rq = { .kind = NVM_REQ_RESTORE, .mm = key->mm,
				      .addr = key->addr };

		if (ask_agent(&rq, 0) == NVM_RES_OK) {
			restored(key, p);
			return;
		}
		/* The entry stays RESTORING: the agent restores it late and
		 * ends it, and takes it off nr_handed then. */
		__sync_fetch_and_add(&nr_handed, 1);
		return;
	}
}

static __noinline void release(struct nvm_patch_key *key)
{
	release_body(key, false);
}

static __noinline void release_ik(struct nvm_patch_key *key)
{
	release_body(key, true);
}

/* The patch the syscall ending now relies on, taken off the task: true if
 * there is one. The caller releases it, then calls done_inflight: until
 * its bytes are back (or handed to the agent), a fork must ask for a
 * repair (see nvm_fork). */
static __always_inline bool syscall_patch(struct nvm_patch_key *key)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct nvm_patch_key *k;

	if (!nr_inflight)
		return false;
	k = bpf_map_lookup_elem(&inflight, &tid);
	if (!k)
		return false;
	*key = *k;
	bpf_map_delete_elem(&inflight, &tid);
	return true;
}

static __always_inline void done_inflight(void)
{
	__sync_fetch_and_add(&nr_inflight, -1);
}

/* The same at sys_exit, which every syscall passes. */
static __always_inline bool exit_patch(struct pt_regs *regs, struct nvm_patch_key *key)
{
	if (!nr_inflight || nvm_path_arg(nvm_syscall_nr(regs)) < 0)
		return false;
	return syscall_patch(key);
}

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
 * v: a (assisted) or k (in-kernel); enter: enter_path or enter_path_ik;
 * release: release or release_ik. */
#define NVM_FENTRY_ENTER(v, enter, name, arg)                                       \
	SEC("fentry/" NVM_SYS_PREFIX #name)                                         \
	int BPF_PROG(nvm_fe_##v##_##name, struct pt_regs *regs)                     \
	{                                                                           \
		__u64 addr = target_arg(regs, arg);                                 \
		if (addr)                                                           \
			enter(current_mm(), addr);                                  \
		return 0;                                                           \
	}
#define NVM_FENTRY_EXIT(v, release, name)                                           \
	SEC("fexit/" NVM_SYS_PREFIX #name)                                          \
	int BPF_PROG(nvm_fx_##v##_##name, struct pt_regs *regs, long ret)           \
	{                                                                           \
		struct nvm_patch_key key;                                           \
		if (syscall_patch(&key)) {                                          \
			release(&key);                                              \
			done_inflight();                                            \
		}                                                                   \
		return 0;                                                           \
	}
#define NVM_FENTRY(name, arg)                                                       \
	NVM_FENTRY_ENTER(a, enter_path, name, arg)                                  \
	NVM_FENTRY_ENTER(k, enter_path_ik, name, arg)                               \
	NVM_FENTRY_EXIT(a, release, name)                                           \
	NVM_FENTRY_EXIT(k, release_ik, name)

NVM_PATH_SYSCALLS(NVM_FENTRY)

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

	/* spinners counts this task too */
	if (spinners < nr_cpus_online || bpf_ktime_get_ns() < agent_poll_until) {
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

	if (nr_cpus_online < 2 || spinners + 1 < nr_cpus_online ||
	    bpf_ktime_get_ns() < agent_poll_until)
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
			      .parent_mm = parent_mm, .tid = (__u32)child->pid,
			      .tgid = (__u32)child->tgid };

	make_room(bpf_get_smp_processor_id());
	if (ask_agent(&rq, 0) == NVM_RES_OK)
		count(fork_fixups);
	else
		count(fork_missed);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(nvm_fork, struct task_struct *parent, struct task_struct *child)
{
	__u64 pmm = (__u64)parent->mm, *last;

	if (!child->mm || (__u64)child->mm == pmm)
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

/* A program starting in a target will soon read its files: wake the agent
 * so that a thread polls by then. Without, the first reads of a burst meet
 * an agent still waking, and on few CPUs a task that would have to wait on
 * the last CPU meanwhile cannot (see may_spin). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(nvm_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	if (bpf_ktime_get_ns() < agent_poll_until || !is_target())
		return 0;
	agent_warm = 1;
	ring_bells(bpf_get_smp_processor_id(), 1);
	return 0;
}
