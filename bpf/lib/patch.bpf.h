/* Patches: one per (address space, address), shared by every thread whose
 * syscall relies on it (struct nvm_patch in redirect.h). The entry side
 * takes or joins the patch of a matching path, written in the kernel or by
 * the agent; the exit side leaves it, and the last one out puts the
 * original bytes back.
 *
 * Part of redirect.bpf.c, which defines, before including it, the patches, inflight and
 * mm_recent maps, nr_inflight, nr_handed, fork_room and kstats (count); and
 * includes slot.bpf.h, match.bpf.h and inkernel.bpf.h first. */
#ifndef NVM_PATCH_BPF_H
#define NVM_PATCH_BPF_H

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
	if (NVM_PATCH_STATE(word) == NVM_PATCH_RESTORED || NVM_PATCH_STATE(word) == NVM_PATCH_GONE) {
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
	/* The owner's wait follows the agent's life (see slot.bpf.h): so
	 * does this one. */
	if (agent_gone || bpf_ktime_get_ns() > j->deadline) {
		j->outcome = J_TIMEOUT;
		return 1;
	}
	return 0;
}

/* One run of join steps (runs nest, as wait_run's). Returns 1 to stop. */
static long join_run(__u64 i, void *data)
{
	struct join_ctx *j = data;

	bpf_loop(1 << 23, join_step, j, 0);
	return j->outcome != J_WAITING;
}

/* Waits to share the patch at key another thread of this address space has
 * asked for or has in place. Returns true when the syscall is done with (it
 * shares the patch, or it had to go on without), false when the patch went
 * away and the path must be looked at again. */
static __always_inline bool share_patch(struct nvm_patch_key *key)
{
	struct join_ctx j = { .key = *key, .outcome = J_WAITING,
			      .deadline = bpf_ktime_get_ns() + live_deadline_ns };

	/* A patch already in place is joined at once: only one still being
	 * written needs a wait, and a CPU to wait on. */
	join_step(0, &j);
	if (j.outcome == J_WAITING) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (!may_spin(cpu)) {
			count(busy_no_cpu);
			count(slot_busy);
			note_miss(0, key->addr, 0, NVM_MISS_NO_CPU);
			return true;
		}
		bpf_loop(NVM_WAIT_RUNS, join_run, &j, 0);
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
		note_miss(0, key->addr, 0, NVM_MISS_GAVE_WAY);
		return true;
	}
	deadline_miss(0, key->addr, 0, agent_gone ? NVM_MISS_AGENT_GONE : NVM_MISS_DEADLINE);
	return true;
}


/* Takes over the record of a restored in-kernel patch at key (see
 * NVM_PATCH_RESTORED), or of a patch whose address space is gone (an
 * address space made since at the same address): true if this task now
 * owns it, PENDING. */
static __always_inline bool take_over(struct nvm_patch_key *key)
{
	struct nvm_patch *p = bpf_map_lookup_elem(&patches, key);
	__u64 word;

	if (!p)
		return false;
	word = *(volatile __u64 *)&p->word;
	if ((word != NVM_PATCH_WORD(NVM_PATCH_RESTORED, 0) &&
	     word != NVM_PATCH_WORD(NVM_PATCH_GONE, 0)) ||
	    __sync_val_compare_and_swap(&p->word, word, NVM_PATCH_WORD(NVM_PATCH_PENDING, 1)) != word)
		return false;
	p->since = bpf_ktime_get_ns();
	p->flags = 0;
	return true;
}
/* The patches map is only consulted when the path matches a rule (to take or
 * share its patch) or is already under the tree root (someone's patch), so
 * a target's other paths cost one read and one rules lookup. */
static __always_inline void enter_path_body(__u64 mm, __u64 addr, bool exec, const bool in_kernel)
{
	struct nvm_patch_key key = { .mm = mm, .addr = addr };
	__u32 zero = 0;

	for (int attempt = 0; attempt < 3; attempt++) {
		struct nvm_patch *p;
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
			if (!p || NVM_PATCH_STATE(p->word) == NVM_PATCH_RESTORED ||
			    NVM_PATCH_STATE(p->word) == NVM_PATCH_GONE)
				continue;
			if (share_patch(&key))
				return;
			continue;
		}
		/* An exec runs a program the tree holds only by a file rule's
		 * exact path (not even with a '/' after it): never anything
		 * else under another name. */
		if (exec && ((flags & (NVM_REQ_EXACT | NVM_REQ_EXEC_OK)) !=
				     (NVM_REQ_EXACT | NVM_REQ_EXEC_OK) ||
			     sc->path[span & 127]))
			return;
		/* A task that shares its parent's memory until it execs
		 * (vfork, posix_spawn; dash runs commands so): the exec hands
		 * that memory back to the parent, rewritten path and all. The
		 * agent writes it, and puts it back after the exec, through
		 * the parent (the thread that waits in vfork). */
		__u32 owner_tid = 0, owner_tgid = 0;
		if (exec && bpf_get_current_task_btf()->vfork_done) {
			struct task_struct *t = bpf_get_current_task_btf();

			owner_tid = BPF_CORE_READ(t, real_parent, pid);
			owner_tgid = BPF_CORE_READ(t, real_parent, tgid);
			count(exec_shared);
		}
		__u64 ns = 0;
		/* In a container without the tree, the agent binds it first. */
		if (bind_tree && !tree_known(&ns))
			flags |= NVM_REQ_TREE;
		__builtin_memset(&sc->patch, 0, sizeof(sc->patch));
		sc->patch.word = NVM_PATCH_WORD(NVM_PATCH_PENDING, 1);
		sc->patch.since = bpf_ktime_get_ns();
		if (bpf_map_update_elem(&patches, &key, &sc->patch, BPF_NOEXIST) &&
		    !take_over(&key)) {
			/* Another thread has asked for this patch: share it. */
			if (share_patch(&key))
				return;
			continue;
		}
		if (!(flags & NVM_REQ_UNREAD))
			count(matched);
		touch_mm(mm);
		if (in_kernel && !owner_tid && !(flags & (NVM_REQ_UNREAD | NVM_REQ_TREE)) &&
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
				      .span = span, .mm = mm, .addr = addr, .ref = ns,
				      .tid = owner_tid, .tgid = owner_tgid };

		res = ask_agent(&rq, sc->path);
		p = bpf_map_lookup_elem(&patches, &key);
		if (res == NVM_RES_OK && p && owner_tid) {
			p->flags = NVM_PATCH_F_VFORK;
			p->tid = owner_tid;
			p->tgid = owner_tgid;
		}
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
		if (res == NVM_RES_FAILED) {
			count(agent_failed);
			note_miss(NVM_REQ_PATCH, addr, NVM_SLOT_DONE, NVM_MISS_AGENT_FAILED);
		}
		/* No match, failure or no answer: nothing is in place (after a
		 * late write the agent undoes it itself). */
		bpf_map_delete_elem(&patches, &key);
		return;
	}
}

static __noinline void enter_path(__u64 mm, __u64 addr, bool exec)
{
	enter_path_body(mm, addr, exec, false);
}

static __noinline void enter_path_ik(__u64 mm, __u64 addr, bool exec)
{
	enter_path_body(mm, addr, exec, true);
}


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

/* Leaves the patch at key: one user fewer. The last one out takes it to
 * RESTORING and returns it, its bytes the caller's to put back; or, when
 * the ending syscall replaced the address space the patch was in (an exec
 * that succeeded), to GONE: the bytes went with it, and the agent forgets
 * its record, writing nothing. An exec ends every other thread first, so
 * no other task relies on such a patch; one a vfork parent's memory holds
 * (NVM_PATCH_F_VFORK) outlives the exec and is put back as any other. */
static __always_inline struct nvm_patch *leave_patch(struct nvm_patch_key *key)
{
	bool exec_replaced = key->mm != current_mm();

	for (int i = 0; i < 16; i++) {
		struct nvm_patch *p = bpf_map_lookup_elem(&patches, key);
		bool gone;
		__u64 word;

		if (!p)
			return NULL;
		word = *(volatile __u64 *)&p->word;
		if (NVM_PATCH_STATE(word) != NVM_PATCH_APPLIED || !NVM_PATCH_USERS(word))
			return NULL;
		if (NVM_PATCH_USERS(word) > 1) {
			if (__sync_val_compare_and_swap(&p->word, word, word - 1) == word)
				return NULL;
			continue;
		}
		gone = exec_replaced && !(p->flags & NVM_PATCH_F_VFORK);
		if (__sync_val_compare_and_swap(&p->word, word,
						NVM_PATCH_WORD(gone ? NVM_PATCH_GONE :
								      NVM_PATCH_RESTORING, 0)) != word)
			continue;
		if (gone) {
			count(exec_gone);
			return NULL;
		}
		return p;
	}
	return NULL;
}

/* The last user of a patch puts the original bytes back. */
static __always_inline void release_body(struct nvm_patch_key *key, const bool in_kernel)
{
	struct nvm_patch *p = leave_patch(key);

	if (!p)
		return;
	p->since = bpf_ktime_get_ns(); /* the agent's janitor goes by it */
	/* A fork while the bytes go back copies them as they are. */
	touch_mm(key->mm);
	if (in_kernel && (p->flags & NVM_PATCH_F_INKERNEL) && restore_in_kernel(p, key->addr)) {
		restored(key, p);
		return;
	}
	struct nvm_ask rq = { .kind = NVM_REQ_RESTORE, .mm = key->mm, .addr = key->addr };

	if (p->flags & NVM_PATCH_F_VFORK) { /* through the parent */
		rq.tid = p->tid;
		rq.tgid = p->tgid;
	}
	if (ask_agent(&rq, 0) == NVM_RES_OK) {
		restored(key, p);
		return;
	}
	/* The entry stays RESTORING: the agent restores it late and ends it,
	 * and takes it off nr_handed then. */
	__sync_fetch_and_add(&nr_handed, 1);
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

#endif
