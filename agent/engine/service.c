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
 * task on another CPU rings, and wakes every 200 ms, when it takes the
 * janitor's turn if no other thread did in the last 100 ms (janitor.c says
 * why the janitor is theirs). So idle threads wake no more often for it.
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

#include "engine/engine_int.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/realtime.h"
#include "redirect.skel.h"

#define THREADS_PER_CPU 2 /* see the top of the file */

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

/* How long thread t has been inside the memory of the address space it
 * names in io_mm (0 when none). The clock is read after since, which the
 * thread may have set a moment ago. */
static int64_t inside_ns(struct service_thread *t, uint64_t *mm)
{
	uint64_t since;

	*mm = atomic_load(&t->io_mm);
	if (!*mm)
		return 0;
	since = atomic_load(&t->io_since);
	return (int64_t)(now_ns() - since);
}

/* Whether thread tid of this process is asleep in the kernel (state D or
 * S in /proc/self/task/<tid>/stat), not running or waiting for a CPU (R). */
static bool asleep(int tid)
{
	char path[64], stat[512];
	const char *paren;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (fs_read(path, stat, sizeof(stat) - 1) <= 0)
		return true; /* cannot tell: as before, take it as stuck */
	paren = strrchr(stat, ')');
	return !paren || paren[1] != ' ' || paren[2] != 'R';
}

/* Whether another thread has been inside address space mm for longer than
 * an answer takes (e->times.stuck) and is asleep there: on that process's
 * memory lock, which this one would wait for too. Refusing at once keeps
 * this thread for other processes and lets the waiting task go on instead
 * of holding its CPU. A thread that is only waiting for a CPU (a virtual
 * machine's host took it away) is not stuck: it goes on when it runs, and
 * refusing would turn every request of that process into a miss meanwhile. */
static bool stuck_in(struct engine *e, struct service_thread *self, uint64_t mm)
{
	for (unsigned i = 0; i < e->nthreads; i++) {
		uint64_t in_mm;
		int64_t in = inside_ns(&e->threads[i], &in_mm);

		if (&e->threads[i] != self && in_mm == mm && in > (int64_t)e->times.stuck &&
		    asleep(atomic_load(&e->threads[i].tid)))
			return true;
	}
	return false;
}

bool service_enter(struct engine *e, struct service_thread *t, uint64_t mm)
{
	if (!t)
		return true; /* the main thread at the end: the service is stopped */
	if (stuck_in(e, t, mm))
		return false;
	atomic_store(&t->io_since, now_ns());
	atomic_store(&t->io_mm, mm);
	return true;
}

void service_leave(struct service_thread *t)
{
	if (t)
		atomic_store(&t->io_mm, 0);
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

/* Claims the request in slot i if one waits there (WAITING, or LEFT by a
 * task that no longer waits): true, with a stable copy of it in req (the
 * kernel side only reads the slot once it is claimed). */
static bool claim(struct engine *e, unsigned i, struct nvm_slot *req, bool *nowait)
{
	struct nvm_slot *s = &e->slots[i];
	uint64_t word = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE), waited;

	if (NVM_SLOT_STATE(word) != NVM_SLOT_WAITING && NVM_SLOT_STATE(word) != NVM_SLOT_LEFT)
		return false;
	if (!slot_cas(&s->word, word, NVM_SLOT_WORD(NVM_SLOT_SEQ(word), NVM_SLOT_CLAIMED)))
		return false;
	*req = *s;
	req->word = NVM_SLOT_WORD(NVM_SLOT_SEQ(word), NVM_SLOT_CLAIMED);
	*nowait = (req->flags & NVM_REQ_NOWAIT) || NVM_SLOT_STATE(word) == NVM_SLOT_LEFT;
	/* How long the task waited for a thread to claim it: mostly the
	 * wake-up of an agent thread when none was polling. */
	waited = (now_ns() - req->posted_ns) / 1000;
	ASTAT_ADD(e, requests, 1);
	ASTAT_ADD(e, claim_us_total, waited);
	astat_max(&e->astats.claim_us_max, waited);
	return true;
}

/* How long an answer took: opening the memory file, then the I/O. */
struct answer_time {
	uint64_t open_ns, io_ns;
};

/* Does what req asks in its task's memory, with this thread marked as
 * inside that process meanwhile (see stuck_in) and no longer counted as
 * the poller (see leave_polling). Returns an nvm_result; *fd is the memory
 * file used, for the caller to give back. */
static int answer(struct engine *e, struct service_thread *t, const struct nvm_slot *req,
		  int *fd, struct answer_time *took)
{
	uint64_t t0, t1, t2;
	bool was_poller;
	int res;

	*fd = -1;
	*took = (struct answer_time){ 0 };
	if (!service_enter(e, t, req->mm)) {
		ASTAT_ADD(e, stuck_refused, 1);
		return NVM_RES_FAILED;
	}
	was_poller = leave_polling(e, t);
	t0 = now_ns();
	*fd = memio_fd(e->mem, req->tgid, req->tid, req->mm);
	t1 = now_ns();
	res = *fd < 0 ? NVM_RES_FAILED : answer_request(e, req, *fd);
	service_leave(t);
	t2 = now_ns();
	resume_polling(e, t, was_poller);
	*took = (struct answer_time){ .open_ns = t1 - t0, .io_ns = t2 - t1 };
	if (res == NVM_RES_FAILED)
		ASTAT_ADD(e, errors, 1);
	astat_max(&e->astats.answer_us_max, (t2 - t0) / 1000);
	return res;
}

/* Past the kernel side's limit the task has stopped waiting: says where
 * the time went (opening the memory file, or the I/O). Called once the
 * answer is published: the log's lock is shared with the main thread,
 * which a target can keep off its CPU (see janitor.c), so no task may wait
 * on a log line. */
static void tell_slow(struct engine *e, const struct nvm_slot *req, const struct answer_time *took)
{
	uint64_t all = took->open_ns + took->io_ns;

	if (all > e->times.answer)
		nvm_warn("slow answer: %s for pid %u took %llu us (memory file %llu us, then %llu us)",
			 service_kind_name(req->kind), req->tid, (unsigned long long)all / 1000,
			 (unsigned long long)took->open_ns / 1000, (unsigned long long)took->io_ns / 1000);
}

/* Says, once per stay, where in the kernel a thread has been inside a
 * process's memory for longer than an answer may take: its kernel stack,
 * read while it is still there (the slow-answer line that follows once it
 * is out says only how long it took). Called from the agent's main loop. */
void service_watch(struct engine *e)
{
	for (unsigned i = 0; i < e->nthreads; i++) {
		struct service_thread *t = &e->threads[i];
		uint64_t mm, since = atomic_load(&t->io_since);
		int64_t in = inside_ns(t, &mm);
		char path[64], stack[2048];

		if (!mm || in <= (int64_t)e->times.answer || t->watched == since)
			continue;
		t->watched = since;
		snprintf(path, sizeof(path), "/proc/self/task/%d/stack", atomic_load(&t->tid));
		if (fs_read(path, stack, sizeof(stack)) <= 0)
			continue;
		for (char *c = stack; *c; c++)
			if (*c == '\n')
				*c = ' ';
		nvm_warn("slow answer under way: thread %u inside a process's memory for %llu us; its kernel "
			 "stack: %s", i, (unsigned long long)in / 1000, stack);
	}
}

/* Hands the result to the kernel side: DONE for a task that waits (which
 * frees the slot), or the slot freed here when nobody waits. An answer the
 * task stopped waiting for meanwhile is undone. */
static void publish(struct engine *e, unsigned i, const struct nvm_slot *req, bool nowait,
		    int res, int fd)
{
	struct nvm_slot *s = &e->slots[i];
	uint64_t seq = NVM_SLOT_SEQ(req->word);

	s->result = res;
	if (nowait) {
		answer_unwaited(e, req);
		slot_cas(&s->word, req->word, NVM_SLOT_WORD(seq + 1, NVM_SLOT_FREE));
	} else if (!slot_cas(&s->word, req->word, NVM_SLOT_WORD(seq, NVM_SLOT_DONE)) &&
		   fd >= 0 && res == NVM_RES_OK) {
		answer_late(e, req, fd);
	}
}

/* Whether to leave the request in slot s unclaimed for now: another
 * thread is asleep in its process's memory (on the process's memory lock,
 * which this one would wait for too), and answering "failed" at once, as
 * answer() would, makes the read a miss. The thread that is in serves the
 * request once it is out, if that comes within the answer limit of the
 * request's posting and some CPU holds no waiting task; past that it is
 * refused as before, so that the waiting task frees its CPU (the lock's
 * holder may be queued behind it there). (The slot's fields are read
 * unclaimed: only a hint.) */
static bool leave_for_later(struct engine *e, struct service_thread *t, const struct nvm_slot *s)
{
	uint64_t word = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);

	if (NVM_SLOT_STATE(word) != NVM_SLOT_WAITING || s->kind != NVM_REQ_PATCH ||
	    (s->flags & NVM_REQ_NOWAIT) || now_ns() - s->posted_ns > e->times.answer ||
	    __atomic_load_n(&e->skel->bss->spinners, __ATOMIC_RELAXED) >=
		    e->skel->rodata->nr_cpus_online)
		return false;
	return stuck_in(e, t, s->mm);
}

/* Claims and answers the request in slot i if one waits there. */
static bool serve_slot(struct engine *e, struct service_thread *t, unsigned i)
{
	struct answer_time took;
	struct nvm_slot req;
	bool nowait;
	int fd, res;

	if (leave_for_later(e, t, &e->slots[i]))
		return false;
	if (!claim(e, i, &req, &nowait))
		return false;
	res = answer(e, t, &req, &fd, &took);
	publish(e, i, &req, nowait, res, fd);
	memio_put(e->mem, fd);
	tell_slow(e, &req, &took);
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
			 "polling %u us after work", e->nthreads, THREADS_PER_CPU, NVM_RT_PRIORITY,
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

	atomic_store(&t->tid, (int)gettid());
	/* The policy is set here, by the thread, because what makes it
	 * possible (its cpu cgroup) is per thread. */
	t->rt = realtime_self(NVM_RT_PRIORITY, t->rt_why, sizeof(t->rt_why));
	sem_post(&e->threads_ready);
	while (!atomic_load(&e->stop)) {
		int n, owner = 0;
		bool served;

		/* After the last wake's work, before sleeping: never between a
		 * waiting task's doorbell and its answer. */
		janitor_turn(e, t);
		n = epoll_wait(t->epfd, &ev, 1, 200);
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

