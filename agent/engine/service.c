/* The patch service: threads that answer the kernel side's requests by
 * rewriting and restoring path bytes through /proc/<pid>/mem.
 *
 * Why threads on every CPU, each pinned and real-time: a task waiting for an
 * answer holds its CPU with preemption off, so the thread that answers must
 * run on another CPU, and run there at once. With threads on every CPU,
 * whichever CPU is not waiting has one, and SCHED_FIFO lets it preempt the
 * ordinary task running there. After work a thread keeps polling for
 * linger_us (one thread at a time), which keeps one CPU serving during bursts;
 * idle, every thread sleeps in epoll on its CPU's doorbell, which a waiting
 * task on another CPU rings.
 *
 * Why THREADS_PER_CPU: writing another process's memory can sleep on that
 * process's memory lock (its other threads' mmap, fork or exit hold it),
 * for as long as the holder waits for a CPU. A thread asleep there cannot
 * answer anyone else; a second thread on the same CPU can. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "engine/engine_int.h"
#include "engine/kpatches.h"
#include "lib/log.h"
#include "lib/realtime.h"
#include "redirect.skel.h"

#define THREADS_PER_CPU 2 /* see the top of the file */

static bool cas(__u64 *p, __u64 old, __u64 new)
{
	return __atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST);
}

/* The counters are shared by every thread and read by the main one. */
#define ASTAT_ADD(e, f, n) __atomic_fetch_add(&(e)->astats.f, (n), __ATOMIC_RELAXED)

static void astat_max(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED))
		;
}

/* Locking: e->lock guards the book only, and is never held across memory
 * I/O. Reading another process's memory can sleep (its mmap lock taken by
 * a fork, its exec in progress): a thread asleep with the book locked would
 * stop every other thread from answering, while tasks spin on their CPUs.
 * A record being restored is marked busy, so only one thread touches it. */
static void book_lock(struct engine *e) { pthread_mutex_lock(&e->lock); }
static void book_unlock(struct engine *e) { pthread_mutex_unlock(&e->lock); }

/* Marks the live record at (mm, addr) busy and copies it. */
static bool take_rec(struct engine *e, uint64_t mm, uint64_t addr, struct patch_rec *copy)
{
	struct patch_rec *rec;
	bool ok = false;

	book_lock(e);
	rec = book_find(e->book, mm, addr);
	if (rec && rec->live && !rec->busy) {
		rec->busy = true;
		*copy = *rec;
		ok = true;
	}
	book_unlock(e);
	return ok;
}

/* Ends what take_rec began: retired (restored, or its process is gone), or
 * left live for another try. */
static void put_rec(struct engine *e, const struct patch_rec *copy, bool retire)
{
	struct patch_rec *rec;

	book_lock(e);
	rec = book_find(e->book, copy->mm, copy->addr);
	if (rec && rec->busy) {
		rec->busy = false;
		if (retire)
			book_retire(rec, now_ns());
	}
	book_unlock(e);
}

/* Ends the kernel side's entry at key, once its bytes are back (or gone
 * with its process): an in-kernel record stays, RESTORED, for fork children
 * that copied the replacement (as the kernel side keeps its own); any other
 * entry is removed. An entry still RESTORING is one the kernel side handed
 * over (its wait is over): it comes off nr_handed, exactly once, under the
 * book's lock. The address space is marked recent for nvm_fork. */
static void end_entry(struct engine *e, const struct nvm_patch_key *key)
{
	struct nvm_patch p;
	bool handed = false, ended;
	uint64_t now = now_ns();

	book_lock(e);
	if (bpf_map_lookup_elem(e->patches_fd, key, &p)) {
		book_unlock(e);
		return;
	}
	handed = NVM_PATCH_STATE(p.word) == NVM_PATCH_RESTORING;
	if (handed && (p.flags & NVM_PATCH_F_INKERNEL)) {
		p.word = NVM_PATCH_WORD(NVM_PATCH_RESTORED, 0);
		p.since = now;
		ended = !bpf_map_update_elem(e->patches_fd, key, &p, BPF_EXIST);
	} else {
		ended = !bpf_map_delete_elem(e->patches_fd, key);
	}
	if (ended && handed)
		__atomic_fetch_sub(&e->skel->bss->nr_handed, 1, __ATOMIC_SEQ_CST);
	book_unlock(e);
	bpf_map_update_elem(bpf_map__fd(e->skel->maps.mm_recent), &key->mm, &now, BPF_ANY);
}

static int handle_patch(struct engine *e, const struct nvm_slot *s, int fd)
{
	char cur[NVM_PATH_READ + 1], repl[NVM_PATH_READ];
	unsigned span = s->span;
	bool exact = s->flags & NVM_REQ_EXACT;
	int rule = (int)s->rule;
	struct patch_rec *rec;

	if (s->flags & NVM_REQ_UNREAD) {
		/* Read what the kernel could not, and match it here. */
		if (memio_read_str(fd, s->addr, cur, sizeof(cur)) < 0)
			return NVM_RES_FAILED;
		rule = rules_match(&e->rules, cur, &span, &exact);
		if (rule < 0) {
			ASTAT_ADD(e, nomatch, 1);
			return NVM_RES_NOMATCH;
		}
	} else {
		if (span == 0 || span >= NVM_PATH_READ || s->rule >= e->rules.n)
			return NVM_RES_FAILED;
		/* The bytes must still be what the kernel matched, up to and
		 * including the boundary after the prefix. */
		if (memio_read(fd, s->addr, cur, span + 1) || memcmp(cur, s->path, span + 1))
			return NVM_RES_FAILED;
	}
	if (rules_replacement(&e->rules.r[rule], span, exact, repl))
		return NVM_RES_FAILED;

	/* Booked before it is written, so a fork that copies the bytes in
	 * between finds the record to repair its copy by. */
	book_lock(e);
	rec = book_add(e->book, s->mm, s->addr);
	if (rec) {
		rec->tgid = s->tgid, rec->tid = s->tid, rec->span = span;
		memcpy(rec->orig, cur, span);
		memcpy(rec->repl, repl, span);
		rec->when_ns = now_ns();
	}
	book_unlock(e);
	if (!rec)
		return NVM_RES_FAILED;
	/* cur was read just now, from the parked task: write right after it. */
	if (memio_write(fd, s->addr, repl, span)) {
		book_lock(e);
		rec = book_find(e->book, s->mm, s->addr);
		if (rec)
			book_retire(rec, 0);
		book_unlock(e);
		return NVM_RES_FAILED;
	}
	ASTAT_ADD(e, patched, 1);
	nvm_debug("patched pid %u %.*s -> %.*s", s->tid, (int)span, cur, (int)span, repl);
	return NVM_RES_OK;
}

/* Writes the original bytes back if the replacement is still there. The
 * record was taken with take_rec; this puts it back, retired. */
static int restore_rec(struct engine *e, const struct patch_rec *rec, int fd)
{
	int r = memio_swap(fd, rec->addr, rec->repl, rec->orig, rec->span);

	put_rec(e, rec, true);
	if (r) {
		ASTAT_ADD(e, errors, 1);
		nvm_warn("restore in pid %u at 0x%llx: %s", rec->tgid,
			 (unsigned long long)rec->addr,
			 r > 0 ? "memory no longer holds the patch; left as is" : strerror(errno));
		return NVM_RES_FAILED;
	}
	ASTAT_ADD(e, restored, 1);
	return NVM_RES_OK;
}

/* The kernel side could not put back the bytes of a patch it wrote itself
 * (the page no longer took the write): the record is in the patches map. */
static int restore_kpatch(struct engine *e, const struct nvm_slot *s, int fd)
{
	struct nvm_patch p;
	int r;

	if (!kpatch_get(e->patches_fd, s->mm, s->addr, &p) ||
	    NVM_PATCH_STATE(p.word) != NVM_PATCH_RESTORING || p.span >= NVM_PATH_READ)
		return NVM_RES_FAILED;
	r = memio_swap(fd, s->addr, p.repl, p.orig, p.span);
	if (r < 0) {
		ASTAT_ADD(e, errors, 1);
		return NVM_RES_FAILED;
	}
	if (r == 0)
		ASTAT_ADD(e, restored, 1);
	return NVM_RES_OK; /* r > 0: the process changed the bytes: left as they are */
}

static int handle_restore(struct engine *e, const struct nvm_slot *s, int fd)
{
	struct patch_rec rec;

	if (!take_rec(e, s->mm, s->addr, &rec))
		return restore_kpatch(e, s, fd);
	return restore_rec(e, &rec, fd);
}

struct fork_repair {
	struct engine *e;
	__u64 parent_mm;
	int fd; /* the child's memory */
};

/* Repairs, in a fork child, the bytes of its parent's patch at addr, if
 * the child still holds the replacement there (memio_swap checks). */
static void repair_child(struct engine *e, int fd, __u64 addr, const char *repl,
			 const char *orig, unsigned span)
{
	if (span < NVM_PATH_READ && memio_swap(fd, addr, repl, orig, span) == 0)
		ASTAT_ADD(e, fork_repairs, 1);
}

static void repair_child_kpatch(const struct nvm_patch_key *key, const struct nvm_patch *p,
				void *ctx)
{
	struct fork_repair *f = ctx;

	if (key->mm == f->parent_mm)
		repair_child(f->e, f->fd, key->addr, p->repl, p->orig, p->span);
}

/* A fork child copied its parent's memory while patches were (or had just
 * been) in place: wherever the child still holds a replacement, put the
 * original back. The parent's records are copied first, so the child's
 * memory is read with the book unlocked. The kernel side's own records
 * (in-kernel rewrite) are in the patches map. */
static int handle_forkfix(struct engine *e, const struct nvm_slot *s, int fd)
{
	struct fork_repair f = { .e = e, .parent_mm = s->parent_mm, .fd = fd };
	struct patch_rec *recs = NULL;
	unsigned n = 0, cap = 0;

	book_lock(e);
	for (unsigned i = 0; i < e->book->n; i++) {
		if (e->book->r[i].mm != s->parent_mm)
			continue;
		if (n == cap) {
			struct patch_rec *more = realloc(recs, (cap ? 2 * cap : 8) * sizeof(*recs));

			if (!more)
				break;
			recs = more, cap = cap ? 2 * cap : 8;
		}
		recs[n++] = e->book->r[i];
	}
	book_unlock(e);
	for (unsigned i = 0; i < n; i++)
		repair_child(e, fd, recs[i].addr, recs[i].repl, recs[i].orig, recs[i].span);
	free(recs);
	if (e->opts.in_kernel)
		kpatch_each(e->patches_fd, repair_child_kpatch, &f);
	return NVM_RES_OK;
}

/* Takes back a write the kernel side stopped waiting for. */
static void undo_late(struct engine *e, const struct nvm_slot *s, int fd)
{
	struct nvm_patch_key key = { .mm = s->mm, .addr = s->addr };
	struct patch_rec rec;

	ASTAT_ADD(e, late, 1);
	if (s->kind == NVM_REQ_PATCH && take_rec(e, s->mm, s->addr, &rec))
		restore_rec(e, &rec, fd);
	if (s->kind == NVM_REQ_RESTORE)
		end_entry(e, &key);
}

/* A poller about to touch a process's memory stops being the poller: it may
 * sleep there, and the kernel side must not count on it meanwhile (a task
 * would wait on the CPU this thread left). Another thread can take polling
 * over; if none did, this one takes it back afterwards. */
static bool leave_polling(struct engine *e, struct service_thread *t)
{
	int me = t->idx + 1;

	if (atomic_load(&e->poller) != me)
		return false;
	e->skel->bss->agent_poll_until = 0;
	return atomic_compare_exchange_strong(&e->poller, &me, 0);
}

static void resume_polling(struct engine *e, struct service_thread *t, bool was_poller)
{
	int none = 0;

	if (was_poller)
		atomic_compare_exchange_strong(&e->poller, &none, t->idx + 1);
}

/* Whether another thread has been inside address space mm for longer than
 * an answer takes (e->times.stuck): it sleeps on that process's memory lock,
 * and so would this one. Refusing at once keeps this thread for other
 * processes and lets the waiting task go on instead of holding its CPU. */
static bool stuck_in(struct engine *e, struct service_thread *self, uint64_t mm)
{
	for (unsigned i = 0; i < e->nthreads; i++) {
		struct service_thread *o = &e->threads[i];
		uint64_t since;

		if (o == self || atomic_load(&o->io_mm) != mm)
			continue;
		/* The clock is read after since, which another thread may
		 * have set a moment ago. */
		since = atomic_load(&o->io_since);
		if ((int64_t)(now_ns() - since) > (int64_t)e->times.stuck)
			return true;
	}
	return false;
}

const char *service_kind_name(uint32_t kind)
{
	switch (kind) {
	case 0: return "share";
	case NVM_REQ_PATCH: return "patch";
	case NVM_REQ_RESTORE: return "restore";
	case NVM_REQ_FORKFIX: return "fork repair";
	}
	return "request";
}

/* Claims and answers the request in slot i if it is waiting. */
static bool serve_slot(struct engine *e, struct service_thread *t, unsigned i)
{
	struct nvm_slot *s = &e->slots[i];
	uint64_t word = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
	uint64_t seq = NVM_SLOT_SEQ(word);
	struct nvm_slot req;
	uint64_t waited, t0, t1, t2;
	int fd, res;
	bool was_poller = false, nowait;

	if (NVM_SLOT_STATE(word) != NVM_SLOT_WAITING && NVM_SLOT_STATE(word) != NVM_SLOT_LEFT)
		return false;
	if (!cas(&s->word, word, NVM_SLOT_WORD(seq, NVM_SLOT_CLAIMED)))
		return false;
	req = *s; /* stable: the kernel side only reads the slot now */
	nowait = (req.flags & NVM_REQ_NOWAIT) || NVM_SLOT_STATE(word) == NVM_SLOT_LEFT;

	/* How long the task waited for a thread to claim it: mostly the
	 * wake-up of an agent thread when none was polling. */
	waited = (now_ns() - req.posted_ns) / 1000;
	ASTAT_ADD(e, requests, 1);
	ASTAT_ADD(e, claim_us_total, waited);
	astat_max(&e->astats.claim_us_max, waited);

	if (stuck_in(e, t, req.mm)) {
		ASTAT_ADD(e, stuck_refused, 1);
		fd = -1;
		res = NVM_RES_FAILED;
		goto answer;
	}
	was_poller = leave_polling(e, t);
	atomic_store(&t->io_since, now_ns());
	atomic_store(&t->io_mm, req.mm);
	t0 = now_ns();
	fd = memio_fd(e->mem, req.tgid, req.tid, req.mm);
	t1 = now_ns();
	if (fd < 0) {
		res = NVM_RES_FAILED;
	} else {
		switch (req.kind) {
		case NVM_REQ_PATCH: res = handle_patch(e, &req, fd); break;
		case NVM_REQ_RESTORE: res = handle_restore(e, &req, fd); break;
		case NVM_REQ_FORKFIX: res = handle_forkfix(e, &req, fd); break;
		default: res = NVM_RES_FAILED;
		}
	}
	atomic_store(&t->io_mm, 0);
	t2 = now_ns();
	/* Past the kernel side's limit the task has stopped waiting: say
	 * where the time went (opening the memory file, or the I/O). */
	if (t2 - t0 > e->times.answer)
		nvm_warn("slow answer: %s for pid %u took %llu us (memory file %llu us, then %llu us)",
			 service_kind_name(req.kind), req.tid, (unsigned long long)(t2 - t0) / 1000,
			 (unsigned long long)(t1 - t0) / 1000, (unsigned long long)(t2 - t1) / 1000);
	if (res == NVM_RES_FAILED)
		ASTAT_ADD(e, errors, 1);
	astat_max(&e->astats.answer_us_max, (now_ns() - req.posted_ns) / 1000 - waited);
answer:
	s->result = res;
	if (nowait) {
		/* Nobody waits for this answer: free the slot, and finish what
		 * the kernel side would have done. */
		struct nvm_patch_key key = { .mm = req.mm, .addr = req.addr };

		if (req.kind == NVM_REQ_RESTORE)
			end_entry(e, &key);
		cas(&s->word, NVM_SLOT_WORD(seq, NVM_SLOT_CLAIMED), NVM_SLOT_WORD(seq + 1, NVM_SLOT_FREE));
	} else if (!cas(&s->word, NVM_SLOT_WORD(seq, NVM_SLOT_CLAIMED),
			NVM_SLOT_WORD(seq, NVM_SLOT_DONE)) &&
		   fd >= 0 && res == NVM_RES_OK) {
		undo_late(e, &req, fd);
	}
	memio_put(e->mem, fd);
	resume_polling(e, t, was_poller);
	return true;
}

static bool serve_all(struct engine *e, struct service_thread *t)
{
	bool any = false;

	for (unsigned i = 0; i < e->nslots; i++)
		any |= serve_slot(e, t, i);
	return any;
}

/* Real-time threads that run more than 95% of a second are throttled (the
 * kernel's sched_rt_runtime_us), which would stop a poller in the middle of
 * a wait it should answer. So a poller polls for at most 15 ms, then hands
 * polling to the thread of the next CPU and stops once that one has taken
 * over: polling moves between CPUs and never stops while work goes on. */
#define MAX_STINT_NS (15ULL * 1000 * 1000)
#define HANDOFF_WAIT_NS (5ULL * 1000 * 1000)

static void hand_off(struct engine *e, struct service_thread *t)
{
	unsigned n = e->nthreads; /* grows while the threads start */
	/* The threads of one CPU are neighbours: the next CPU's first one. */
	unsigned first = (unsigned)t->idx - (unsigned)t->idx % THREADS_PER_CPU;
	struct service_thread *next = &e->threads[(first + THREADS_PER_CPU) % (n ? n : 1)];
	uint64_t one = 1;

	if (next != t && write(next->wake_fd, &one, sizeof(one)) != sizeof(one))
		nvm_debug("hand-off: %s", strerror(errno));
}

/* Keeps serving by polling for linger_us after the last request, and tells
 * the kernel side it is polling (so the last free CPU may wait too). The
 * caller owns e->poller; ownership ends here, or passes to another thread. */
static void linger(struct engine *e, struct service_thread *t)
{
	uint64_t now = now_ns(), stint_end = now + MAX_STINT_NS;
	volatile __u64 *poll_until = &e->skel->bss->agent_poll_until;
	int me = t->idx + 1;
	unsigned idle = 0;
	bool asked = false;

	while (!atomic_load(&e->stop)) {
		if (atomic_load(&e->poller) != me)
			return; /* taken over: the new poller keeps poll_until fresh */
		if (serve_all(e, t)) {
			now = now_ns();
			/* Shared, so a thread that takes over polling does not
			 * start the linger time again. */
			atomic_store(&e->linger_until, now + (uint64_t)e->opts.linger_us * 1000);
			doorbell_drain(&e->bells[t->cpu]);
		} else if (++idle % 32 == 0) {
			now = now_ns();
			if (now > atomic_load(&e->linger_until))
				break;
		} else {
			continue;
		}
		if (now > stint_end && !asked) {
			hand_off(e, t);
			asked = true;
		}
		if (now > stint_end + HANDOFF_WAIT_NS)
			break; /* nobody could take over: rest anyway */
		/* Short, so a thread that stops running (preempted,
		 * throttled) is soon no longer counted on. */
		*poll_until = now + e->times.poll_horizon;
	}
	if (atomic_compare_exchange_strong(&e->poller, &me, 0)) {
		*poll_until = 0;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		serve_all(e, t);
	}
}

#define RT_PRIORITY 50

/* Says once what scheduling the threads got, and why. */
static void log_policy(struct engine *e)
{
	unsigned rt = 0, moved = 0;
	const char *why = NULL;

	for (unsigned i = 0; i < e->nthreads; i++) {
		struct service_thread *t = &e->threads[i];

		rt += t->rt != RT_REFUSED;
		moved += t->rt == RT_MOVED;
		if (t->rt != RT_OK && !why)
			why = t->rt_why;
	}
	e->astats.realtime_threads = rt;
	if (moved)
		nvm_info("patch service: %s", why);
	if (rt == e->nthreads)
		nvm_info("patch service: %u threads, %d pinned to each CPU, SCHED_FIFO %d, "
			 "polling %u us after work", e->nthreads, THREADS_PER_CPU, RT_PRIORITY,
			 e->opts.linger_us);
	else
		nvm_warn("patch service: only %u of %u threads got SCHED_FIFO (%s): a waiting "
			 "task's answer may wait for a time slice, and under load paths can go "
			 "unredirected", rt, e->nthreads, why);
}

static void *service_main(void *arg)
{
	struct service_thread *t = arg;
	struct engine *e = t->e;
	struct epoll_event ev;

	/* The policy is set here, by the thread, because what makes it
	 * possible (its cpu cgroup) is per thread. */
	t->rt = realtime_self(RT_PRIORITY, t->rt_why, sizeof(t->rt_why));
	sem_post(&e->threads_ready);
	while (!atomic_load(&e->stop)) {
		int n = epoll_wait(t->epfd, &ev, 1, 200), owner = 0;
		bool served;

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && ev.data.fd == t->wake_fd) {
			uint64_t v;

			if (read(t->wake_fd, &v, sizeof(v)) == sizeof(v)) {
				/* Take polling over from whoever has it. */
				owner = atomic_load(&e->poller);
				if (owner && owner != t->idx + 1 &&
				    atomic_compare_exchange_strong(&e->poller, &owner, t->idx + 1)) {
					linger(e, t);
					continue;
				}
			}
		}
		doorbell_drain(&e->bells[t->cpu]);
		served = serve_all(e, t);
		/* No request, but a target exec'd: poll for what it will read. */
		if (!served && __atomic_exchange_n(&e->skel->bss->agent_warm, 0, __ATOMIC_ACQ_REL))
			served = true;
		owner = 0;
		if (served && e->opts.linger_us &&
		    atomic_compare_exchange_strong(&e->poller, &owner, t->idx + 1)) {
			atomic_store(&e->linger_until, now_ns() + (uint64_t)e->opts.linger_us * 1000);
			linger(e, t);
		}
	}
	return NULL;
}

int service_start(struct engine *e)
{
	cpu_set_t online;
	unsigned n = 0;

	sem_init(&e->threads_ready, 0, 0);
	sched_getaffinity(0, sizeof(online), &online);
	e->threads = calloc((size_t)CPU_COUNT(&online) * THREADS_PER_CPU, sizeof(*e->threads));
	e->bells = calloc(e->nslots, sizeof(*e->bells));
	if (!e->threads || !e->bells)
		return nvm_err_r(-1, "out of memory");
	for (unsigned cpu = 0; cpu < e->nslots; cpu++) {
		e->bells[cpu].fd = -1;
		if (!CPU_ISSET(cpu, &online))
			continue;
		if (doorbell_open(&e->bells[cpu], bpf_map__fd(e->skel->maps.bells), cpu, e->page))
			return -1;
		e->skel->bss->bell_cpus[e->skel->bss->nr_bells++] = (__u16)cpu;
	}
	for (int k = 0; k < CPU_SETSIZE * THREADS_PER_CPU &&
			n < (unsigned)CPU_COUNT(&online) * THREADS_PER_CPU; k++) {
		int cpu = k / THREADS_PER_CPU;
		struct service_thread *t = &e->threads[n];
		struct epoll_event ev = { .events = EPOLLIN };
		pthread_attr_t attr;
		cpu_set_t one;

		if (cpu >= (int)e->nslots || !CPU_ISSET(cpu, &online))
			continue;
		t->e = e;
		t->cpu = cpu;
		t->idx = (int)n;
		t->epfd = epoll_create1(EPOLL_CLOEXEC);
		t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		ev.data.fd = e->bells[cpu].fd;
		if (t->epfd < 0 || t->wake_fd < 0 ||
		    epoll_ctl(t->epfd, EPOLL_CTL_ADD, e->bells[cpu].fd, &ev))
			return nvm_err_r(-1, "epoll on the doorbell: %s", strerror(errno));
		ev.data.fd = t->wake_fd;
		if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->wake_fd, &ev))
			return nvm_err_r(-1, "epoll on the hand-off: %s", strerror(errno));
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		if (pthread_create(&t->thread, &attr, service_main, t)) {
			pthread_attr_destroy(&attr);
			return nvm_err_r(-1, "cannot start a service thread: %s", strerror(errno));
		}
		pthread_attr_destroy(&attr);
		t->started = true;
		e->nthreads = ++n;
	}
	for (unsigned i = 0; i < n; i++)
		while (sem_wait(&e->threads_ready) && errno == EINTR)
			;
	log_policy(e);
	return 0;
}

void service_stop(struct engine *e)
{
	atomic_store(&e->stop, true);
	for (unsigned i = 0; i < e->nthreads; i++) {
		if (e->threads[i].started)
			pthread_join(e->threads[i].thread, NULL);
		if (e->threads[i].epfd >= 0)
			close(e->threads[i].epfd);
		if (e->threads[i].wake_fd >= 0)
			close(e->threads[i].wake_fd);
	}
	free(e->threads);
	for (unsigned cpu = 0; e->bells && cpu < e->nslots; cpu++)
		doorbell_close(&e->bells[cpu], e->page);
	free(e->bells);
	e->bells = NULL;
	sem_destroy(&e->threads_ready);
	e->threads = NULL;
	e->nthreads = 0;
}

#define JANITOR_BATCH 64

struct sweep {
	struct engine *e;
	bool all;
	uint64_t now, stale;
};

/* One in-kernel record: forgotten once no fork can need it; restored here
 * when its task gave up on the agent's restore, or when the programs are
 * gone; dropped with its process. */
static void sweep_kpatch(const struct nvm_patch_key *key, const struct nvm_patch *p, void *ctx)
{
	struct sweep *w = ctx;
	struct engine *e = w->e;
	uint32_t state = NVM_PATCH_STATE(p->word);
	bool old = w->now - p->since > w->stale;
	int fd;

	if (state == NVM_PATCH_RESTORED) {
		if (w->all || w->now - p->since > 2 * e->times.recent)
			bpf_map_delete_elem(e->patches_fd, key);
		return;
	}
	if (!w->all && !old)
		return;
	fd = memio_fd(e->mem, p->tgid, p->tid, key->mm);
	if (fd < 0)
		fd = memio_fd(e->mem, p->tgid, p->tgid, key->mm);
	if (fd < 0) {
		end_entry(e, key); /* the process is gone */
		return;
	}
	/* An applied patch of a live process is in use inside a syscall,
	 * unless the programs are detached. */
	if (w->all || state == NVM_PATCH_RESTORING) {
		if (p->span < NVM_PATH_READ &&
		    memio_swap(fd, key->addr, p->repl, p->orig, p->span) == 0)
			ASTAT_ADD(e, late_restores, 1);
		end_entry(e, key);
	}
	memio_put(e->mem, fd);
}

/* Restores patches the kernel side left behind (a task that gave up waiting
 * or was killed in its syscall). Candidates are taken under the lock, then
 * restored with it released, a batch at a time. */
void service_janitor(struct engine *e, bool all)
{
	uint64_t now = now_ns(), stale = e->times.stale;
	struct patch_rec batch[JANITOR_BATCH];
	unsigned start = 0;

	if (e->opts.in_kernel) {
		struct sweep w = { .e = e, .all = all, .now = now, .stale = stale };

		kpatch_each(e->patches_fd, sweep_kpatch, &w);
	}

	for (;;) {
		unsigned n = 0, i;

		book_lock(e);
		for (i = start; i < e->book->n && n < JANITOR_BATCH; i++) {
			struct patch_rec *rec = &e->book->r[i];
			struct nvm_patch_key key = { .mm = rec->mm, .addr = rec->addr };
			struct nvm_patch p;

			if (!rec->live || rec->busy || (!all && now - rec->when_ns < stale))
				continue;
			/* Still in use by a task inside a syscall: leave it. */
			if (!all && bpf_map_lookup_elem(e->patches_fd, &key, &p) == 0 &&
			    NVM_PATCH_STATE(p.word) == NVM_PATCH_APPLIED)
				continue;
			rec->busy = true;
			batch[n++] = *rec;
		}
		start = i;
		if (n == 0)
			book_expire(e->book, now, 2 * e->times.recent);
		book_unlock(e);
		if (n == 0)
			return;
		for (i = 0; i < n; i++) {
			struct patch_rec *rec = &batch[i];
			struct nvm_patch_key key = { .mm = rec->mm, .addr = rec->addr };
			int fd = memio_fd(e->mem, rec->tgid, rec->tid, rec->mm);

			if (fd >= 0 && restore_rec(e, rec, fd) == NVM_RES_OK)
				ASTAT_ADD(e, late_restores, 1);
			else if (fd < 0)
				put_rec(e, rec, true); /* the process is gone */
			memio_put(e->mem, fd);
			end_entry(e, &key);
		}
	}
}
