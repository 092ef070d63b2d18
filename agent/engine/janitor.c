/* The janitor: restores what the kernel side left behind (a task that gave
 * up waiting, or was killed inside its syscall), and everything at the
 * end, once the programs are detached.
 *
 * While the programs are attached it runs on a service thread, never on
 * the main thread: it takes the book's lock and the memory files' lock,
 * which the service threads need to answer. A thread holding them must be
 * one no target task can preempt. The main thread is an ordinary one: a
 * target that preempts it there and then waits for an answer, preemption
 * off, keeps it off its CPU with the lock held, and the service thread
 * that would answer waits on the lock, until that wait's deadline (a fork
 * child then runs unrepaired). Priority inheritance cannot help: it raises
 * the holder where it is queued, on the CPU that waits.
 *
 * On a service thread it enters a process's memory as an answer does
 * (service_enter): marked, so no other thread follows it into a process it
 * sleeps in and the stall watch sees it, and kept out of a process another
 * thread sleeps in (that record waits for a later turn). */
#include <string.h>

#include <bpf/bpf.h>

#include "engine/engine_int.h"
#include "engine/kpatches.h"
#include "lib/log.h"
#include "redirect.skel.h"

#define JANITOR_BATCH 64
#define JANITOR_PERIOD_NS (100ULL * 1000 * 1000)

struct sweep {
	struct engine *e;
	struct service_thread *t;
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

	if (state == NVM_PATCH_RESTORED || state == NVM_PATCH_GONE) {
		if (state == NVM_PATCH_GONE || w->all || w->now - p->since > 2 * e->times.recent)
			bpf_map_delete_elem(e->patches_fd, key);
		return;
	}
	if ((!w->all && !old) || !service_enter(e, w->t, key->mm))
		return;
	fd = memio_fd(e->mem, p->tgid, p->tid, key->mm);
	if (fd < 0)
		fd = memio_fd(e->mem, p->tgid, p->tgid, key->mm);
	if (fd < 0) {
		end_entry(e, key, p->since); /* the process is gone */
	} else if (w->all || state == NVM_PATCH_RESTORING) {
		/* (An applied patch of a live process is in use inside a
		 * syscall, unless the programs are detached.) */
		if (p->span < NVM_PATH_READ &&
		    memio_swap(fd, key->addr, p->repl, p->orig, p->span) == 0)
			ASTAT_ADD(e, late_restores, 1);
		end_entry(e, key, p->since);
	}
	memio_put(e->mem, fd);
	service_leave(w->t);
}

/* The janitor restores a booked patch only while it holds the kernel
 * side's entry at its place: the one the kernel side handed over
 * (RESTORING: its task stopped waiting), or, where there is none (the task
 * gave up before the patch was in place, or the entry was ended), one it
 * puts in itself (NVM_PATCH_F_HELD). Without, a task could take a new
 * patch there as soon as the bytes were back, and ending the entry then
 * ended the new patch's: that syscall returned with nothing to restore
 * its bytes, the janitor restored them a while later, and the same could
 * happen again at every turn of a task that opens one path in a loop.
 * HOLD_NOT when another entry is there (a patch in use): a later turn;
 * HOLD_GONE when an exec replaced the patch's address space
 * (NVM_PATCH_GONE): forgotten, nothing written. Once held, the address
 * space is marked recent, so a fork meanwhile has its copy repaired. */
enum hold { HOLD_NOT, HOLD_TAKEN, HOLD_GONE };

static enum hold hold_entry(struct engine *e, const struct nvm_patch_key *key, uint64_t *since)
{
	struct nvm_patch p;
	uint64_t now = now_ns();

	if (kpatch_gone(e->patches_fd, key, since))
		return HOLD_GONE;
	if (bpf_map_lookup_elem(e->patches_fd, key, &p) == 0) {
		if (NVM_PATCH_STATE(p.word) != NVM_PATCH_RESTORING || (p.flags & NVM_PATCH_F_HELD))
			return HOLD_NOT;
	} else {
		memset(&p, 0, sizeof(p));
		p.word = NVM_PATCH_WORD(NVM_PATCH_RESTORING, 0);
		p.flags = NVM_PATCH_F_HELD;
		p.since = now;
		if (bpf_map_update_elem(e->patches_fd, key, &p, BPF_NOEXIST))
			return HOLD_NOT;
	}
	*since = p.since;
	bpf_map_update_elem(bpf_map__fd(e->skel->maps.mm_recent), &key->mm, &now, BPF_ANY);
	return HOLD_TAKEN;
}

/* Restores patches the kernel side left behind (a task that gave up waiting
 * or was killed in its syscall). Candidates are taken under the lock, then
 * restored with it released, a batch at a time. With all (the programs
 * detached), every live one, with no entry to hold. */
void service_janitor(struct engine *e, struct service_thread *t, bool all)
{
	uint64_t now = now_ns(), stale = e->times.stale;
	struct patch_rec batch[JANITOR_BATCH];
	unsigned start = 0;

	if (e->opts.in_kernel) {
		struct sweep w = { .e = e, .t = t, .all = all, .now = now, .stale = stale };

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
			uint64_t since = 0;
			int fd;

			if (!service_enter(e, t, rec->mm)) {
				book_put(e, rec, false); /* for a later turn */
				continue;
			}
			enum hold h = all ? (kpatch_gone(e->patches_fd, &key, &since) ? HOLD_GONE
										     : HOLD_TAKEN)
					  : hold_entry(e, &key, &since);

			if (h != HOLD_TAKEN) {
				service_leave(t);
				/* Gone: its address space went with an exec,
				 * the bytes with it; nothing to write. */
				book_put(e, rec, h == HOLD_GONE);
				if (h == HOLD_GONE)
					end_entry(e, &key, since);
				continue;
			}
			fd = memio_fd(e->mem, rec->tgid, rec->tid, rec->mm);
			if (fd >= 0 && answer_restore_rec(e, rec, fd) == NVM_RES_OK)
				ASTAT_ADD(e, late_restores, 1);
			else if (fd < 0)
				book_put(e, rec, true); /* the process is gone */
			memio_put(e->mem, fd);
			service_leave(t);
			end_entry(e, &key, since);
		}
	}
}

void janitor_turn(struct engine *e, struct service_thread *t)
{
	uint64_t now = now_ns(), due = atomic_load(&e->janitor_due);

	/* One thread per period: the one that moves the due time on. */
	if (now < due || !atomic_compare_exchange_strong(&e->janitor_due, &due,
							 now + JANITOR_PERIOD_NS))
		return;
	service_janitor(e, t, false);
}
