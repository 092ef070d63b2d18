/* The request slots' handshake (see struct nvm_slot in redirect.h): a
 * task reserves a slot, posts its request, rings, and waits, bounded by
 * the deadlines, for the agent to claim and answer; whichever side gives
 * up first, one compare-and-swap decides who owns the slot.
 *
 * Part of redirect.bpf.c, which defines, before including it, the slots map, the notes ring,
 * kstats (count), the deadlines, rering_ns, nr_slots, fork_room, agent_gone
 * and unknown_zero; and includes doorbell.bpf.h first.
 *
 * How long a task waits follows the agent's life, not a fixed few
 * milliseconds: while the agent's process lives, a request waits until it
 * is answered, up to live_deadline_ns (a second, times the time scale): an
 * agent its host or its cgroup keeps off the CPU for a while is waited for.
 * When the agent's process exits (agent_gone, set by nvm_agent_exit), every
 * wait ends at once. A request still unclaimed soft_deadline_ns after it
 * was posted is given up only while every CPU the agent serves from holds
 * a waiting task (none of its threads can run until a wait ends). Once
 * claimed, the answer must come within answer_limit_ns: it takes well
 * under a millisecond unless the agent sleeps on a lock of the process's
 * memory, whose holder may be queued behind this very wait on its CPU
 * (measured: letting such waits run on left a whole CPU's worth of other
 * readers unable to wait, 1 in 7 reads of bench figure (7) unredirected). */
#ifndef NVM_SLOT_BPF_H
#define NVM_SLOT_BPF_H

/* Tells the agent that this task's syscall goes on unredirected, and why
 * (the caller counts it): one note, with the path as it is now at addr. */
static __always_inline void note_miss(__u32 kind, __u64 addr, __u32 state, __u32 cause)
{
	struct nvm_note *n = bpf_ringbuf_reserve(&notes, sizeof(*n), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!n)
		return;
	n->type = NVM_NOTE_MISS;
	n->kind = kind;
	n->tid = (__u32)id;
	n->tgid = id >> 32;
	n->addr = addr;
	n->slot_state = state;
	n->cause = cause;
	bpf_get_current_comm(n->comm, sizeof(n->comm));
	if (bpf_probe_read_user_str(n->path, sizeof(n->path), (const void *)addr) < 0)
		n->path[0] = '\0';
	bpf_ringbuf_submit(n, 0);
}

/* Counts a deadline miss by its cause, and notes it. */
static __always_inline void deadline_miss(__u32 kind, __u64 addr, __u32 state, __u32 cause)
{
	count(deadline_misses);
	if (cause == NVM_MISS_CPUS_HELD)
		count(cpus_held);
	else if (cause == NVM_MISS_ANSWER_LIMIT)
		count(answer_limit);
	else if (cause == NVM_MISS_AGENT_GONE)
		count(agent_gone);
	note_miss(kind, addr, state, cause);
}

/* How many bpf_loop runs a wait may take: each is at most 1 << 23 steps
 * (tens of nanoseconds each), and the clock ends it first. */
#define NVM_WAIT_RUNS 8


enum wait_outcome { W_PENDING, W_DONE, W_TIMEOUT, W_LOST, W_RERING, W_GAVE_WAY };

struct wait_ctx {
	struct nvm_slot *slot;
	__u64 seq;
	__u64 posted, limit; /* when the wait began, and when it ends at the latest */
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
	__u64 now, deadline;

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
		/* The limits (see the top of this file). An answer takes well
		 * under a millisecond unless the agent sleeps on a lock of this
		 * process's memory (another thread's mmap, fork or exit holds
		 * it), and that holder may need a CPU. Taking the slot back is a
		 * CAS: if the agent moved it first, the next step sees its new
		 * state. */
		now = bpf_ktime_get_ns();
		/* The agent is gone: nobody will answer. */
		if (agent_gone) {
			deadline = now;
		} else {
			/* The poller stopped running before it saw this
			 * request (preempted, throttled): wake the others
			 * after all. */
			if (NVM_SLOT_STATE(word) == NVM_SLOT_WAITING && w->unrung &&
			    now > w->posted + rering_ns && now >= agent_poll_until) {
				w->outcome = W_RERING; /* the caller rings: not in this frame */
				return 1;
			}
			/* A fork repair writes into the child's memory, a bind
			 * into another mount namespace: nothing a waiting task
			 * holds slows them (see fix_fork_child, tree.bpf.h). */
			if (NVM_SLOT_STATE(word) == NVM_SLOT_CLAIMED && !w->answer_by)
				w->answer_by = w->slot->kind == NVM_REQ_FORKFIX ||
							       (w->slot->flags & NVM_REQ_TREE) ||
							       now + answer_limit_ns > w->limit
						       ? w->limit : now + answer_limit_ns;
			/* Claimed: answered by answer_by, as the holder of a
			 * lock the answer sleeps on may be queued behind this
			 * very wait on its CPU. Unclaimed: past the claim
			 * limit, the wait goes on only while a CPU of the
			 * agent's holds no waiting task (a thread can run
			 * there). */
			deadline = w->limit;
			if (NVM_SLOT_STATE(word) == NVM_SLOT_CLAIMED)
				deadline = w->answer_by;
			else if (now >= w->posted + soft_deadline_ns && !agent_has_cpu())
				deadline = w->posted + soft_deadline_ns;
		}
		if (now >= deadline &&
		    __sync_val_compare_and_swap(&w->slot->word, word, timed_out(w, word)) == word) {
			w->outcome = W_TIMEOUT;
			return 1;
		}
		return 0;
	}
	w->outcome = W_LOST;
	return 1;
}

/* One more run of wait steps (a callback of bpf_loop: runs nest, so that
 * the verifier looks at the steps once). Returns 1 to stop. */
static long wait_run(__u64 i, void *data)
{
	struct wait_ctx *w = data;

	bpf_loop(1 << 23, wait_step, w, 0);
	return w->outcome != W_PENDING;
}

/* Posts a request in this CPU's slot and waits for the agent's answer.
 * Returns an nvm_result, or -1 when it could not be asked or did not answer
 * in time (counted and noted). */
struct nvm_ask {
	__u32 kind, flags, rule, span;
	__u64 mm, addr, ref;
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
	__u32 flags = rq->flags, cause = 0;
	bool spin = may_spin(cpu);

	/* A patch cannot be done without waiting for it; a restore or a fork
	 * repair can: the agent does it as soon as it runs. */
	if (!spin) {
		if (rq->kind == NVM_REQ_PATCH) {
			count(busy_no_cpu);
			cause = NVM_MISS_NO_CPU;
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
		cause = NVM_MISS_NO_SLOT;
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
	s->ref = rq->ref;
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
				cause = NVM_MISS_NO_BELL;
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
	w.posted = now;
	w.limit = now + live_deadline_ns;
	w.outcome = W_PENDING;
	bpf_loop(1 << 23, wait_step, &w, 0);
	if (w.outcome == W_RERING) {
		ring_bells(cpu, 2);
		w.unrung = 0;
		w.outcome = W_PENDING;
	}
	/* Unrung no more: no W_RERING from here. */
	if (w.outcome == W_PENDING)
		bpf_loop(NVM_WAIT_RUNS, wait_run, &w, 0);
	end_spin(cpu);
	if (w.outcome == W_GAVE_WAY) {
		count(busy_gave_way);
		if (rq->kind == NVM_REQ_RESTORE) {
			count(deferred); /* the agent restores it */
		} else {
			count(slot_busy);
			if (rq->kind == NVM_REQ_PATCH)
				note_miss(rq->kind, rq->addr, 0, NVM_MISS_GAVE_WAY);
		}
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
	/* Why it ended: the agent gone, the answer limit (claimed), every
	 * agent CPU held (unclaimed, before the limit), or the limit. */
	now = bpf_ktime_get_ns();
	deadline_miss(rq->kind, rq->addr, w.last_state,
		      agent_gone					? NVM_MISS_AGENT_GONE
		      : w.last_state == NVM_SLOT_CLAIMED && now < w.limit ? NVM_MISS_ANSWER_LIMIT
		      : now < w.limit					? NVM_MISS_CPUS_HELD
									: NVM_MISS_DEADLINE);
	return -1;
busy:
	if (spin)
		end_spin(cpu);
	count(slot_busy);
	if (rq->kind == NVM_REQ_PATCH)
		note_miss(rq->kind, rq->addr, 0, cause);
	return -1;
}

#endif
