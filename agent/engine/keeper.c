#include "engine/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "engine/kpatches.h"
#include "engine/memio.h"
#include "lib/log.h"
#include "render/render.h"

/* Releasing a link of an fentry program waits for an RCU-tasks grace
 * period: a few dozen of them take seconds under emulation. Past this the
 * keeper looks anyway. */
#define PROGRAMS_GONE_MAX_NS (60ULL * 1000 * 1000 * 1000)

/* The agent's end of the socket is moved up to here, inside the fd table
 * memio_new grew up front (so no growth later). A dying process's files are released after all
 * of them are closed, the last closed, i.e. the highest, first: so the
 * keeper hears of the end before the agent's links are released, which
 * can take seconds (above), not after. */
#define KEEPER_FD_MIN (NVM_FD_TABLE_MIN - 24)

/* Writes orig back over the span bytes at addr in the image mm of tgid
 * (through tid, or its process if that thread is gone), if they still are
 * repl. */
static unsigned put_back(struct memio *mem, uint32_t tgid, uint32_t tid, uint64_t mm,
			 uint64_t addr, const char *repl, const char *orig, uint32_t span)
{
	int fd, r;

	if (span == 0 || span >= NVM_PATH_READ)
		return 0;
	fd = memio_fd(mem, tgid, tid, mm);
	if (fd < 0)
		return 0; /* the process is gone, and its memory with it */
	r = memio_swap(fd, addr, repl, orig, span);
	memio_put(mem, fd);
	return r == 0;
}

struct sweep {
	struct memio *mem;
	unsigned n;
};

static void put_back_kpatch(const struct nvm_patch_key *key, const struct nvm_patch *p,
			    void *ctx)
{
	struct sweep *sw = ctx;
	__u32 state = NVM_PATCH_STATE(p->word);

	if (state == NVM_PATCH_APPLIED || state == NVM_PATCH_RESTORING)
		sw->n += put_back(sw->mem, p->tgid, p->tid, key->mm, key->addr, p->repl, p->orig,
				  p->span);
}

/* One look at every patch the agent knew to be in place. A record the
 * agent was writing when it died may be half written: put_back then finds
 * other bytes in memory than its replacement, and writes nothing. */
static unsigned sweep(struct memio *mem, const struct patchbook *book, int patches_fd)
{
	struct sweep sw = { .mem = mem };
	unsigned nrec = book->n < NVM_BOOK_MAX ? book->n : NVM_BOOK_MAX;

	for (unsigned i = 0; i < nrec; i++) {
		const struct patch_rec *r = &book->r[i];

		if (r->live)
			sw.n += put_back(mem, r->tgid, r->tid, r->mm, r->addr, r->repl, r->orig,
					 r->span);
	}
	if (patches_fd >= 0)
		kpatch_each(patches_fd, put_back_kpatch, &sw);
	return sw.n;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Waits until none of the agent's programs exists any more (a program
 * goes once its links are released), for at most limit_ns. */
static void wait_programs_gone(const struct keeper_watch *w, uint64_t limit_ns)
{
	for (uint64_t waited = 0; waited < limit_ns; waited += 10000000) {
		unsigned alive = 0;

		for (unsigned i = 0; i < w->nprogs; i++) {
			int fd = bpf_prog_get_fd_by_id(w->prog_ids[i]);

			if (fd >= 0) {
				close(fd);
				alive++;
			}
		}
		if (!alive)
			return;
		sleep_ns(10000000);
	}
}

/* Nothing redirects into the tree any more: unmount it. The keeper holds
 * the agent's lock on the root, so the tree there is still the agent's. */
static void remove_tree(const struct keeper_watch *w)
{
	if (!w->tree)
		return;
	if (!render_is_tree(w->tree))
		nvm_warn("the agent ended without stopping: its tree at %s is gone already", w->tree);
	else if (render_remove(w->tree) == 0)
		nvm_warn("the agent ended without stopping: removed its tree at %s", w->tree);
}

/* Keeps the fds in keep (and 0 to 2), closes the rest: the agent's
 * sockets and BPF links must go with the agent, not stay with the keeper. */
static void close_others(const int *keep, unsigned n)
{
	unsigned from = 3;

	for (;;) {
		unsigned next = ~0U;

		for (unsigned i = 0; i < n; i++)
			if (keep[i] >= (int)from && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (next > from)
			close_range(from, next == ~0U ? ~0U : next - 1, 0);
		if (next == ~0U)
			return;
		from = next + 1;
	}
}

static void __attribute__((noreturn)) keeper_main(int rfd, const struct keeper_watch *w)
{
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	int keep[] = { rfd, w->patches_fd, w->root_lock_fd };
	struct memio *mem;
	unsigned n;
	ssize_t got;
	char c;


	close_others(keep, 3);
	/* A Ctrl-C reaches the whole process group: the agent stops cleanly
	 * and says so; the keeper waits for that word. */
	sigaction(SIGINT, &ignore, NULL);
	sigaction(SIGTERM, &ignore, NULL);
	sigaction(SIGHUP, &ignore, NULL);
	prctl(PR_SET_NAME, "nvmirage-keep");
	do
		got = read(rfd, &c, 1);
	while (got < 0 && errno == EINTR);
	if (got == 1)
		_exit(0);
	/* The agent is gone: it writes no more patches. Its programs detach
	 * as its files close; until then an entry program may still write
	 * one in the kernel, and a task inside one goes on at its deadline:
	 * look now, and again once the programs are gone and every wait has
	 * ended. */
	mem = memio_new();
	if (!mem)
		_exit(1);
	n = sweep(mem, w->book, w->patches_fd);
	wait_programs_gone(w, PROGRAMS_GONE_MAX_NS);
	sleep_ns(w->settle_ns);
	n += sweep(mem, w->book, w->patches_fd);
	if (n)
		nvm_warn("the agent ended without stopping: put back the original bytes of %u "
			 "rewritten path%s it left", n, n == 1 ? "" : "s");
	remove_tree(w);
	_exit(0);
}

int keeper_start(struct keeper *k, const struct keeper_watch *w)
{
	int p[2];

	k->pid = 0;
	k->fd = -1;
	/* A socket pair, not a pipe: the clean-stop word is sent with
	 * MSG_NOSIGNAL, so a keeper that was killed costs no SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
		return nvm_err_r(-1, "keeper socket: %s", strerror(errno));
	fflush(stderr);
	k->pid = fork();
	if (k->pid < 0) {
		close(p[0]);
		close(p[1]);
		k->pid = 0;
		return nvm_err_r(-1, "fork the keeper: %s", strerror(errno));
	}
	if (k->pid == 0)
		keeper_main(p[0], w);
	close(p[0]);
	k->fd = fcntl(p[1], F_DUPFD_CLOEXEC, KEEPER_FD_MIN);
	if (k->fd >= 0)
		close(p[1]);
	else
		k->fd = p[1]; /* a low limit on open files: heard of later */
	return 0;
}

void keeper_stop(struct keeper *k)
{
	if (!k->pid)
		return;
	if (send(k->fd, "q", 1, MSG_NOSIGNAL) != 1)
		nvm_warn("keeper: %s (it is gone, or will look for patches left in place)",
			 strerror(errno));
	close(k->fd);
	waitpid(k->pid, NULL, 0);
	k->pid = 0;
	k->fd = -1;
}
