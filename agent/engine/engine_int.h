/* Engine internals shared by engine.c (loading), service.c (the threads that
 * serve requests), answers.c (what they write) and janitor.c (what is left
 * over). */
#ifndef NVM_ENGINE_INT_H
#define NVM_ENGINE_INT_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "lib/clock.h"
#include "engine/doorbell.h"
#include "engine/engine.h"
#include "engine/entry.h"
#include "engine/keeper.h"
#include "engine/memio.h"
#include "engine/patchbook.h"

struct redirect_bpf;
struct ring_buffer;

/* Every time limit of the engine, in ns: the defaults, which fit real
 * hardware, times the time scale (see engine_times in engine.c). */
struct engine_times {
	uint64_t soft;           /* the claim limit while every CPU holds a waiting task;
				  * a fork repair waits this long for a CPU or a slot */
	uint64_t hard;           /* twice that: the most the answer limit may be */
	uint64_t live;           /* any wait, while the agent lives */
	uint64_t answer;         /* and answered this soon once claimed */
	uint64_t stuck;          /* a thread inside a process this long is stuck */
	uint64_t recent;         /* a fork this soon after a patch gets repaired */
	uint64_t rering;         /* an unrung request rings after this */
	uint64_t poll_horizon;   /* a poller is counted on this far ahead */
	uint64_t settle;         /* the keeper's wait for the last program runs */
	uint64_t stale;          /* the janitor restores what was left this long */
};

struct service_thread {
	struct engine *e;
	pthread_t thread;
	int cpu;
	int idx;
	int epfd;
	int wake_fd;                     /* eventfd: "take over polling" */
	bool started;
	int rt;                          /* enum rt_outcome, set by the thread */
	_Atomic uint64_t io_mm;          /* the address space it is inside, or 0 */
	_Atomic uint64_t io_since;       /* since when (ns) */
	_Atomic int tid;                 /* its thread id, for its kernel stack */
	uint64_t watched;                /* io_since of the stay service_watch told */
	char rt_why[256];
};

struct engine {
	struct redirect_bpf *skel;
	struct entry_links entry;        /* the attached entry points */
	struct nvm_rules rules;
	struct engine_opts opts;
	unsigned nslots;
	struct nvm_slot *slots;          /* the mmapped slots map */
	size_t page;
	struct ring_buffer *notes;
	int patches_fd;
	struct doorbell *bells;          /* by CPU, nslots of them */

	pthread_mutex_t lock;            /* the book (see service.c) */
	struct patchbook *book;          /* shared with the keeper */
	struct keeper keeper;
	struct memio *mem;
	struct nvm_astats astats;
	uint64_t answer_ns;              /* an answer's I/O here (memio_answer_ns) */
	struct engine_times times;       /* the limits in force (engine_times) */

	uint64_t notes_since, notes_said, notes_unsaid; /* the log's rate of misses (on_note) */

	atomic_bool stop;
	atomic_int poller;               /* index + 1 of the polling thread, 0: none */
	_Atomic uint64_t linger_until;   /* polling ends then, unless work comes */
	_Atomic uint64_t janitor_due;    /* the janitor's next turn (janitor_turn) */
	unsigned nthreads;
	struct service_thread *threads;
	sem_t threads_ready;             /* each thread posts once it set its policy */
};

/* A compare-and-swap on a slot's word, shared with the kernel side. */
static inline bool slot_cas(__u64 *p, __u64 old, __u64 new)
{
	return __atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST);
}

/* The counters are shared by every thread and read by the main one. */
#define ASTAT_ADD(e, f, n) __atomic_fetch_add(&(e)->astats.f, (n), __ATOMIC_RELAXED)

static inline void astat_max(uint64_t *p, uint64_t v)
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
 * A record being restored is marked busy, so only one thread touches it.
 * While the programs are attached only service threads take it (the
 * janitor runs on one: see janitor.c). */
static inline void book_lock(struct engine *e) { pthread_mutex_lock(&e->lock); }
static inline void book_unlock(struct engine *e) { pthread_mutex_unlock(&e->lock); }

/* answers.c: what an answer writes. */
/* Does what request req (claimed by the caller) asks, in the memory file fd
 * of its task: returns an nvm_result. */
int answer_request(struct engine *e, const struct nvm_slot *req, int fd);
/* Undoes an answer the kernel side stopped waiting for. */
void answer_late(struct engine *e, const struct nvm_slot *req, int fd);
/* Finishes what the kernel side would have done after an answer nobody
 * waited for (NOWAIT or LEFT). */
void answer_unwaited(struct engine *e, const struct nvm_slot *req);
/* Restores the booked patch rec (taken busy by the janitor) if the
 * replacement is still there, and retires it. Returns an nvm_result. */
int answer_restore_rec(struct engine *e, const struct patch_rec *rec, int fd);
/* Gives a record taken busy back, retired (restored, or its process gone)
 * or left live. */
void book_put(struct engine *e, const struct patch_rec *rec, bool retire);
/* Ends the kernel side's entry at key once its bytes are back (see
 * answers.c). */
void end_entry(struct engine *e, const struct nvm_patch_key *key, uint64_t since);

int service_start(struct engine *e);
void service_stop(struct engine *e);
/* Restores patches the kernel side gave up waiting for (all of them, when
 * the programs are detached). Caller: service thread t (janitor_turn), or
 * the main thread once the service threads are stopped, with t NULL (see
 * janitor.c). */
void service_janitor(struct engine *e, struct service_thread *t, bool all);
/* Runs the janitor if its period has passed and no other thread took the
 * turn. Caller: service thread t, between requests. */
void janitor_turn(struct engine *e, struct service_thread *t);
/* Marks thread t as inside address space mm (for stuck_in and the stall
 * watch) before it touches that process's memory, and unmarks it after;
 * false: another thread is stuck there, so t keeps out. t NULL: the main
 * thread at the end, always true. */
bool service_enter(struct engine *e, struct service_thread *t, uint64_t mm);
void service_leave(struct service_thread *t);
void service_watch(struct engine *e);
/* What a request of kind (enum nvm_req_kind; 0: a wait to share another
 * thread's patch) is, for the log. */
const char *service_kind_name(uint32_t kind);

#endif
