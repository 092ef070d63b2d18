/* Engine internals shared by engine.c (loading) and service.c (requests). */
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
	uint64_t soft, hard;     /* a request must be claimed, and answered, by then */
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

	atomic_bool stop;
	atomic_int poller;               /* index + 1 of the polling thread, 0: none */
	_Atomic uint64_t linger_until;   /* polling ends then, unless work comes */
	unsigned nthreads;
	struct service_thread *threads;
	sem_t threads_ready;             /* each thread posts once it set its policy */
};

int service_start(struct engine *e);
void service_stop(struct engine *e);
/* Restores patches the kernel side gave up waiting for (all of them, when
 * the programs are detached). Caller: the main thread. */
void service_janitor(struct engine *e, bool all);
/* What a request of kind (enum nvm_req_kind; 0: a wait to share another
 * thread's patch) is, for the log. */
const char *service_kind_name(uint32_t kind);

#endif
