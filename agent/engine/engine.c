/* Loading the BPF side: rodata knobs, rules, attach, the shared mappings.
 * One lifecycle: open, configure, load, attach, serve, detach. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine/engine_int.h"
#include "engine/entry.h"
#include "engine/rules_map.h"
#include "lib/log.h"
#include "lib/realtime.h"
#include "redirect.skel.h"

/* A claimed request is answered in well under a millisecond on real
 * hardware, unless the agent sleeps on the process's memory lock. The
 * waiting task gives up ANSWER_TIMES the time an answer takes here (at
 * least ANSWER_MIN_NS) after the claim, rather than keep a CPU the lock's
 * holder may need (see wait_step in redirect.bpf.c); a service thread that
 * has been inside one process's memory for STUCK_TIMES that (at least
 * STUCK_MIN_NS) counts as stuck there (see stuck_in in service.c). */
#define ANSWER_TIMES  100
#define ANSWER_MIN_NS (3ULL * 1000 * 1000)
#define STUCK_TIMES   30
#define STUCK_MIN_NS  (1000ULL * 1000)
/* While the agent lives, a task waits for its answer up to LIVE_NS (see
 * slot.bpf.h): long enough for an agent that its host or its cgroup keeps
 * off the CPU for a while, short enough that a live agent that stopped
 * answering costs a second a syscall, not a hang. */
#define LIVE_NS (1000ULL * 1000 * 1000)
/* After a killed agent's programs are gone, the keeper looks again this
 * long after the longest wait in one could have ended. */
#define KEEPER_MARGIN_NS (50ULL * 1000 * 1000)
/* A polling thread refreshes agent_poll_until this far ahead, so that a
 * thread that stops running (preempted, throttled) is soon no longer
 * counted on; the kernel side rings after all a request still unclaimed
 * RERING_NS after it was posted, past that horizon. */
#define POLL_HORIZON_NS (200ULL * 1000)
#define RERING_NS       (300ULL * 1000)

static uint64_t at_least(uint64_t v, uint64_t min) { return v > min ? v : min; }
static uint64_t at_most(uint64_t v, uint64_t max) { return v < max ? v : max; }

/* The limits, from their defaults times the time scale: on an emulated
 * machine everything takes tens of times longer, and limits fit for real
 * hardware would fail what works. answer_ns, measured here, raises the
 * answer and stuck limits further on a slow machine. */
static struct engine_times engine_times(const struct engine_opts *o, uint64_t answer_ns)
{
	double f = o->time_scale >= 1 ? o->time_scale : 1;
	struct engine_times t;

	t.soft = (uint64_t)(f * (double)o->deadline_ns);
	t.hard = 2 * t.soft;
	t.live = (uint64_t)(f * LIVE_NS);
	t.answer = at_most(at_least(ANSWER_TIMES * answer_ns, (uint64_t)(f * ANSWER_MIN_NS)), t.hard);
	t.stuck = at_most(at_least(STUCK_TIMES * answer_ns, (uint64_t)(f * STUCK_MIN_NS)), t.answer);
	t.recent = (uint64_t)(f * NVM_RECENT_NS);
	t.rering = (uint64_t)(f * RERING_NS);
	t.poll_horizon = (uint64_t)(f * POLL_HORIZON_NS);
	t.settle = t.live + (uint64_t)(f * KEEPER_MARGIN_NS);
	t.stale = t.live + t.hard; /* every wait on it has ended by then */
	return t;
}

/* Attaches prog into *link; names it in the error. */
static int attach(struct bpf_program *prog, struct bpf_link **link, const char *what)
{
	*link = bpf_program__attach(prog);
	if (!*link)
		return nvm_err_r(-1, "attach %s: %s", what, strerror(errno));
	return 0;
}

static int map_shared(struct engine *e)
{
	size_t slots_len = (size_t)bpf_map__max_entries(e->skel->maps.slots) * sizeof(struct nvm_slot);
	void *p;

	slots_len = (slots_len + e->page - 1) / e->page * e->page;
	p = mmap(NULL, slots_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(e->skel->maps.slots), 0);
	if (p == MAP_FAILED)
		return nvm_err_r(-1, "mmap the request slots: %s", strerror(errno));
	e->slots = p;
	return 0;
}

/* Forked while this process has one thread, before the service's. */
static int start_keeper(struct engine *e)
{
	struct keeper_watch w = { .book = e->book, .patches_fd = e->patches_fd,
				  .settle_ns = e->times.settle, .tree = e->opts.root,
				  .root_lock_fd = e->opts.root_lock_fd };
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, e->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && w.nprogs < NVM_KEEPER_PROGS &&
		    !bpf_obj_get_info_by_fd(fd, &info, &len))
			w.prog_ids[w.nprogs++] = info.id;
	}
	return keeper_start(&e->keeper, &w);
}

/* The in-kernel rewrite needs no agent: its programs are held by the
 * keeper too, so that a killed agent changes nothing until the keeper lets
 * them go in order (see keeper_hold). The assisted rewrite's programs
 * need the agent, and the keeper puts back all it wrote. */
_Static_assert(NVM_ENTRY_LINKS <= NVM_KEEPER_LINKS, "the keeper holds every entry link");

static int hand_links_to_keeper(struct engine *e)
{
	int fds[NVM_ENTRY_LINKS];

	if (!e->opts.in_kernel)
		return 0;
	return keeper_hold(&e->keeper, fds, entry_fds(&e->entry, false, fds), false) ||
	       keeper_hold(&e->keeper, fds, entry_fds(&e->entry, true, fds), true);
}

/* Why a syscall went on unredirected, for the log. */
static const char *miss_why(uint32_t cause)
{
	switch (cause) {
	case NVM_MISS_DEADLINE: return "no answer within the limit, though the agent lives";
	case NVM_MISS_CPUS_HELD: return "every CPU of the agent's held a waiting task, so none "
					"of its threads could run";
	case NVM_MISS_ANSWER_LIMIT: return "claimed, but not answered within the answer limit "
					   "(the agent waited on the process's memory lock)";
	case NVM_MISS_AGENT_GONE: return "the agent exited";
	case NVM_MISS_NO_CPU: return "waiting would have left no CPU for the agent";
	case NVM_MISS_NO_SLOT: return "every request slot was taken";
	case NVM_MISS_NO_BELL: return "no doorbell could be rung";
	case NVM_MISS_GAVE_WAY: return "gave way to a fork repair";
	case NVM_MISS_AGENT_FAILED: return "the agent could not patch (the memory changed, or "
					   "another of its threads was stuck in it)";
	}
	return "unknown";
}

/* Copies a string of the kernel side's (not always NUL-ended) for the log,
 * with anything unprintable as '?'. */
static void printable(char *out, const char *in, size_t n)
{
	size_t k = 0;

	for (; k < n && in[k]; k++)
		out[k] = in[k] >= 0x20 && in[k] < 0x7f ? in[k] : '?';
	out[k] = '\0';
}

/* What becomes of a request the kernel side stopped waiting for. */
static const char *miss_then(uint32_t kind)
{
	switch (kind) {
	case NVM_REQ_RESTORE: return "the agent puts the bytes back when it gets to it";
	case NVM_REQ_FORKFIX: return "the agent repairs the child when it gets to it";
	}
	return "the syscall went on with the node's own files";
}

/* Every miss is one warning line: "deadline passed: ..." for a wait that
 * ended unanswered (rare: the agent gone, or a second without an answer),
 * each one logged; "unredirected: ..." for a syscall that could not wait
 * or that the agent could not patch, at most NOTES_PER_SECOND a second,
 * the rest counted (the kernel's counters have them all) and said with
 * the next one logged. */
#define NOTES_PER_SECOND 10
static int on_note(void *ctx, void *data, size_t len)
{
	struct engine *e = ctx;
	const struct nvm_note *n = data;
	char comm[sizeof(n->comm) + 1], path[sizeof(n->path) + 1], more[64] = "";
	bool waited;
	uint64_t now = now_ns();

	if (len < sizeof(*n) || n->type != NVM_NOTE_MISS)
		return 0;
	waited = n->cause == NVM_MISS_DEADLINE || n->cause == NVM_MISS_CPUS_HELD ||
		 n->cause == NVM_MISS_ANSWER_LIMIT ||
		 n->cause == NVM_MISS_AGENT_GONE;
	if (!waited) {
		if (now - e->notes_since >= 1000000000ULL) {
			e->notes_since = now;
			e->notes_said = 0;
		}
		if (e->notes_said++ >= NOTES_PER_SECOND) {
			e->notes_unsaid++;
			return 0;
		}
		if (e->notes_unsaid)
			snprintf(more, sizeof(more), " (and %llu more before, not logged)",
				 (unsigned long long)e->notes_unsaid);
		e->notes_unsaid = 0;
	}
	printable(comm, n->comm, sizeof(n->comm));
	printable(path, n->path, sizeof(n->path));
	nvm_warn("%s: pid %u (%s, tgid %u), %s of \"%s\": %s; %s%s",
		 waited ? "deadline passed" : "unredirected", n->tid, comm, n->tgid,
		 service_kind_name(n->kind), path, miss_why(n->cause), miss_then(n->kind), more);
	return 0;
}

int engine_start(struct engine **out, const struct engine_opts *o)
{
	struct engine *e = calloc(1, sizeof(*e));
	int ncpu = libbpf_num_possible_cpus(), err, bell_template = -1;

	if (!e)
		return nvm_err_r(-1, "out of memory");
	e->opts = *o;
	e->rules = *o->rules;
	realtime_mutex_init(&e->lock); /* the book of patches */
	e->book = book_new_shared();
	e->mem = memio_new();
	if (!e->book || !e->mem) {
		nvm_err("out of memory");
		goto fail;
	}
	if (ncpu <= 0 || ncpu > NVM_MAX_SLOTS) {
		nvm_err("%d possible CPUs; this build handles 1 to %d", ncpu, NVM_MAX_SLOTS);
		goto fail;
	}
	e->nslots = (unsigned)ncpu;
	e->skel = redirect_bpf__open();
	if (!e->skel) {
		nvm_err("open the BPF object: %s", strerror(errno));
		goto fail;
	}
	e->answer_ns = memio_answer_ns();
	e->times = engine_times(o, e->answer_ns);
	e->skel->rodata->soft_deadline_ns = e->times.soft;
	e->skel->rodata->live_deadline_ns = e->times.live;
	e->skel->rodata->answer_limit_ns = e->times.answer;
	e->skel->rodata->recent_ns = e->times.recent;
	e->skel->rodata->rering_ns = e->times.rering;
	e->skel->rodata->agent_tgid = (__u32)getpid();
	e->skel->rodata->bind_tree = o->bind_tree != NULL;
	entry_choose(e->skel->obj, o->fentry, o->in_kernel);
	bpf_program__set_autoload(e->skel->progs.nvm_match, false); /* tests only */
	bpf_program__set_autoload(e->skel->progs.nvm_no_rdma_netlink, o->no_rdma_netlink);
	e->skel->rodata->nr_slots = e->nslots;
	/* A lookup by cgroup id: its cost does not grow with the size. */
	if (bpf_map__set_max_entries(e->skel->maps.targets, o->max_targets)) {
		nvm_err("targets map of %u: %s", o->max_targets, strerror(errno));
		goto fail;
	}
	e->page = (size_t)sysconf(_SC_PAGESIZE);
	bell_template = doorbell_template(e->page);
	if (bell_template < 0)
		goto fail;
	if (bpf_map__set_inner_map_fd(e->skel->maps.bells, bell_template)) {
		nvm_err("doorbell template: %s", strerror(errno));
		goto fail;
	}
	e->skel->rodata->nr_cpus_online = (__u32)sysconf(_SC_NPROCESSORS_ONLN);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		nvm_warn("1 CPU online: a task waiting for a rewrite would hold the only CPU "
			 "the agent could use; redirects will mostly miss");
	err = redirect_bpf__load(e->skel);
	close(bell_template);
	bell_template = -1;
	if (err) {
		nvm_err("the kernel refused the BPF programs: %s (run with -v for the "
			"verifier log)", strerror(-err));
		goto fail;
	}
	e->patches_fd = bpf_map__fd(e->skel->maps.patches);
	if (rules_map_load(e->skel, &e->rules, e->opts.root) || map_shared(e))
		goto fail;
	if (start_keeper(e))
		goto fail;
	e->notes = ring_buffer__new(bpf_map__fd(e->skel->maps.notes), on_note, e, NULL);
	if (!e->notes) {
		nvm_err("notes ring buffer: %s", strerror(errno));
		goto fail;
	}
	/* The service must answer before the first request can come. */
	if (service_start(e))
		goto fail;
	if (attach(e->skel->progs.nvm_fork, &e->skel->links.nvm_fork,
		   "tp_btf/sched_process_fork"))
		goto fail;
	/* Before any task can wait: the waits follow this process's life. */
	if (attach(e->skel->progs.nvm_agent_exit, &e->skel->links.nvm_agent_exit,
		   "tp_btf/sched_process_exit"))
		goto fail;
	/* The exit programs are attached first, and stay until the end:
	 * attaching one while a task waits in an entry program would wait
	 * for that task's RCU read section, i.e. past its deadline. */
	if (entry_attach(e->skel->obj, &e->entry) || hand_links_to_keeper(e))
		goto fail;
	if (o->no_rdma_netlink &&
	    attach(e->skel->progs.nvm_no_rdma_netlink, &e->skel->links.nvm_no_rdma_netlink,
		   "lsm/socket_create"))
		goto fail;
	/* Only wakes the agent: a refusal costs that head start, nothing else. */
	e->skel->links.nvm_exec = bpf_program__attach(e->skel->progs.nvm_exec);
	if (!e->skel->links.nvm_exec)
		nvm_warn("attach tp_btf/sched_process_exec: %s (the agent will not wake ahead of "
			 "new programs' first reads)", strerror(errno));
	if (o->time_scale > 1)
		nvm_info("time scale %g (--time-scale): every deadline and limit below is %g "
			 "times its default", o->time_scale, o->time_scale);
	nvm_info("attached %s (%s rewrite), tp_btf/sched_process_fork, sched_process_exit%s; "
		 "%u request slots; a task waits to be claimed while the agent lives, up to "
		 "%llu ms (%llu ms while every CPU of the agent's holds a waiting task), then "
		 "%llu us for the answer; fork repairs within %llu ms of a patch",
		 e->entry.what, o->in_kernel ? "in-kernel" : "assisted",
		 e->skel->links.nvm_exec ? ", tp_btf/sched_process_exec" : "", e->nslots,
		 (unsigned long long)(e->times.live / 1000000),
		 (unsigned long long)(e->times.soft / 1000000),
		 (unsigned long long)(e->times.answer / 1000),
		 (unsigned long long)(e->times.recent / 1000000));
	nvm_info("an answer's memory I/O takes up to %llu us here: a thread inside one "
		 "process's memory for %llu us counts as stuck there",
		 (unsigned long long)(e->answer_ns / 1000), (unsigned long long)(e->times.stuck / 1000));
	*out = e;
	return 0;
fail:
	if (bell_template >= 0)
		close(bell_template);
	engine_stop(e);
	return -1;
}

int engine_add_target(struct engine *e, uint64_t id)
{
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.targets), &id, &one, BPF_ANY))
		return nvm_err_r(-1, "targets map: %s", strerror(errno));
	__atomic_add_fetch(&e->skel->bss->targets_gen, 1, __ATOMIC_SEQ_CST);
	return 0;
}

int engine_remove_target(struct engine *e, uint64_t id)
{
	bpf_map_delete_elem(bpf_map__fd(e->skel->maps.targets), &id);
	__atomic_add_fetch(&e->skel->bss->targets_gen, 1, __ATOMIC_SEQ_CST);
	return 0;
}

int engine_notes_fd(struct engine *e)
{
	return ring_buffer__epoll_fd(e->notes);
}

void engine_tick(struct engine *e)
{
	ring_buffer__consume(e->notes);
	service_watch(e);
}

void engine_stats(struct engine *e, struct nvm_kstats *k, struct nvm_astats *a)
{
	*k = e->skel->bss->kstats;
#define LOAD(f) a->f = __atomic_load_n(&e->astats.f, __ATOMIC_RELAXED);
	NVM_ASTATS_FIELDS(LOAD)
#undef LOAD
}

void engine_stats_line(struct engine *e, char *buf, unsigned len)
{
	struct nvm_kstats k;
	struct nvm_astats a;
	const char *sep = "";
	size_t off = 0;

	engine_stats(e, &k, &a);
	buf[0] = '\0';
#define LINE(v, f)                                                               \
	if (off < len) {                                                         \
		off += (size_t)snprintf(buf + off, len - off, "%s" #f " %llu", sep,  \
					(unsigned long long)v.f);                \
		sep = ", ";                                                      \
	}
#define K(f) LINE(k, f)
#define A(f) LINE(a, f)
	NVM_KSTATS_FIELDS(K)
	sep = "; agent: ";
	NVM_ASTATS_FIELDS(A)
#undef K
#undef A
#undef LINE
}

void engine_stop(struct engine *e)
{
	if (!e)
		return;
	/* Detach while the service still answers: destroying a link waits for
	 * the programs running on it, which may be waiting for an answer.
	 * Entry first (no new patches), exit last (the ones in flight are
	 * restored; the keeper lets go of its hold on both first), then the
	 * service; the janitor restores anything left. */
	if (e->skel) {
		keeper_let_go(&e->keeper);
		entry_detach_enter(&e->entry);
		bpf_link__destroy(e->skel->links.nvm_fork);
		e->skel->links.nvm_fork = NULL;
		entry_detach_exit(&e->entry);
	}
	if (e->threads)
		service_stop(e);
	if (e->skel)
		service_janitor(e, NULL, true);
	keeper_stop(&e->keeper); /* everything is back */
	if (e->notes)
		ring_buffer__free(e->notes);
	if (e->slots)
		munmap(e->slots, ((size_t)NVM_MAX_SLOTS * sizeof(struct nvm_slot) + e->page - 1) /
					 e->page * e->page);
	redirect_bpf__destroy(e->skel);
	memio_free(e->mem);
	book_free_shared(e->book);
	free(e);
}
