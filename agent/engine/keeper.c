#include "engine/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
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

/* The agent's words to the keeper: one byte each. */
#define KEEPER_HOLD_ENTER 'e' /* with fds: entry links, to hold */
#define KEEPER_HOLD_EXIT  'x' /* with fds: exit links, to hold */
#define KEEPER_LET_GO     'l' /* close the held links */
#define KEEPER_QUIT   'q' /* a clean stop: nothing to put back */
/* The keeper answers each but the last with the same byte, once done. */
/* The keeper answers at once; past this the agent stops without. */
#define KEEPER_ANSWER_MS 5000

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
	if (r == 0)
		nvm_info("keeper: put back pid %u at 0x%llx", tgid, (unsigned long long)addr);
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
		struct nvm_patch_key key = { .mm = r->mm, .addr = r->addr };

		if (r->live && !kpatch_gone(patches_fd, &key, NULL))
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

/* The links the agent handed over (the in-kernel rewrite's entry and exit
 * programs): after the agent's end the keeper lets the entry side go
 * first, and the exit side once every patch is back. */
struct held {
	int fd[NVM_KEEPER_LINKS];
	uint32_t prog_id[NVM_KEEPER_LINKS]; /* 0: not a link (the unit tests') */
	bool enter[NVM_KEEPER_LINKS];
	unsigned n;
};

static void hold(struct held *h, int fd, bool enter)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	if (h->n == NVM_KEEPER_LINKS) {
		close(fd);
		return;
	}
	h->prog_id[h->n] = bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.prog_id;
	h->enter[h->n] = enter;
	h->fd[h->n++] = fd;
}

/* Closes the held links: every one, or only the entry side's. */
static void let_go(struct held *h, bool only_enter)
{
	unsigned kept = 0;

	for (unsigned i = 0; i < h->n; i++) {
		if (only_enter && !h->enter[i]) {
			h->fd[kept] = h->fd[i];
			h->prog_id[kept] = h->prog_id[i];
			h->enter[kept++] = false;
		} else {
			close(h->fd[i]);
		}
	}
	h->n = kept;
}

static bool is_held(const struct held *h, uint32_t prog_id)
{
	for (unsigned i = 0; i < h->n; i++)
		if (h->prog_id[i] == prog_id)
			return true;
	return false;
}

/* Waits until none of the agent's programs exists any more (a program
 * goes once its links are released), for at most limit_ns; the ones the
 * keeper holds links of are not waited for. */
static void wait_programs_gone(const struct keeper_watch *w, const struct held *h,
			       uint64_t limit_ns)
{
	for (uint64_t waited = 0; waited < limit_ns; waited += 10000000) {
		unsigned alive = 0;

		for (unsigned i = 0; i < w->nprogs; i++) {
			int fd = is_held(h, w->prog_ids[i]) ? -1 : bpf_prog_get_fd_by_id(w->prog_ids[i]);

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

/* One word from the agent, with the fds it sends along (held, on the
 * side the word names). Returns
 * the word, or 0 at the agent's end (end of file, or an error other than
 * an interruption: the agent is gone either way). */
static char next_word(int rfd, struct held *h)
{
	union {
		char buf[CMSG_SPACE(NVM_KEEPER_LINKS * sizeof(int))];
		struct cmsghdr align;
	} u;
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf) };
	ssize_t got;

	do
		got = recvmsg(rfd, &m, MSG_CMSG_CLOEXEC);
	while (got < 0 && errno == EINTR);
	if (got != 1)
		return 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (c == KEEPER_HOLD_ENTER || c == KEEPER_HOLD_EXIT)
				hold(h, fd, c == KEEPER_HOLD_ENTER);
			else
				close(fd);
		}
	}
	return c;
}

static void __attribute__((noreturn)) keeper_main(int rfd, const struct keeper_watch *w)
{
	struct sigaction ignore = { .sa_handler = SIG_IGN };
	int keep[] = { rfd, w->patches_fd, w->root_lock_fd };
	struct held h = { .n = 0 };
	struct memio *mem;
	unsigned n;
	char c;

	close_others(keep, 3);
	/* A Ctrl-C reaches the whole process group: the agent stops cleanly
	 * and says so; the keeper waits for that word. */
	sigaction(SIGINT, &ignore, NULL);
	sigaction(SIGTERM, &ignore, NULL);
	sigaction(SIGHUP, &ignore, NULL);
	prctl(PR_SET_NAME, "nvmirage-keep");
	while ((c = next_word(rfd, &h)) != 0) {
		if (c == KEEPER_QUIT)
			_exit(0);
		if (c == KEEPER_LET_GO)
			let_go(&h, false);
		if (send(rfd, &c, 1, MSG_NOSIGNAL) != 1) /* the answer */
			break;
	}
	/* The agent is gone: it writes no more patches. The in-kernel
	 * rewrite's programs are still attached by the links held here (the
	 * agent's own went with it): nothing about them changed with the
	 * agent's end, so a syscall whose path an entry program rewrote puts
	 * its bytes back itself as it returns. Now the entry side goes (no
	 * new patches; an fentry program's trampoline is replaced, and a
	 * syscall still inside the old one returns past its fexit program:
	 * the kernel's rule). Look at once for what stands rewritten (those,
	 * and the syscalls still blocked), and again once the agent's other
	 * programs are gone and every wait in them has ended; then the exit
	 * side goes. */
	nvm_info("keeper: the agent ended without stopping; letting its entry programs go");
	let_go(&h, true);
	mem = memio_new();
	if (!mem)
		_exit(1);
	n = sweep(mem, w->book, w->patches_fd);
	wait_programs_gone(w, &h, PROGRAMS_GONE_MAX_NS);
	sleep_ns(w->settle_ns);
	nvm_info("keeper: %u put back at first look; the agent's other programs are gone", n);
	n += sweep(mem, w->book, w->patches_fd);
	nvm_info("keeper: looked again; letting the exit programs go");
	let_go(&h, false);
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

/* Sends word c (with fds, if n) and waits for the keeper's answer. */
static int tell(struct keeper *k, char c, const int *fds, unsigned n)
{
	union {
		char buf[CMSG_SPACE(NVM_KEEPER_LINKS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd p = { .fd = k->fd, .events = POLLIN };
	char answer;

	if (n) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(n * sizeof(int));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	}
	if (sendmsg(k->fd, &m, MSG_NOSIGNAL) != 1)
		return -1;
	errno = ETIMEDOUT;
	if (poll(&p, 1, KEEPER_ANSWER_MS) != 1 || recv(k->fd, &answer, 1, 0) != 1)
		return -1;
	return answer == c ? 0 : (errno = EPROTO, -1);
}

int keeper_hold(struct keeper *k, const int *fds, unsigned n, bool enter)
{
	const char *side = enter ? "entry" : "exit";

	if (!k->pid || n == 0)
		return 0;
	if (n > NVM_KEEPER_LINKS)
		return nvm_err_r(-1, "keeper: %u links to hold, at most %d", n, NVM_KEEPER_LINKS);
	if (tell(k, enter ? KEEPER_HOLD_ENTER : KEEPER_HOLD_EXIT, fds, n))
		return nvm_err_r(-1, "keeper: hand over the %s links: %s", side, strerror(errno));
	return 0;
}

void keeper_let_go(struct keeper *k)
{
	if (k->pid && tell(k, KEEPER_LET_GO, NULL, 0))
		nvm_warn("keeper: let go of the links: %s (they go when it does)",
			 strerror(errno));
}

void keeper_stop(struct keeper *k)
{
	char c = KEEPER_QUIT;

	if (!k->pid)
		return;
	if (send(k->fd, &c, 1, MSG_NOSIGNAL) != 1)
		nvm_warn("keeper: %s (it is gone, or will look for patches left in place)",
			 strerror(errno));
	close(k->fd);
	waitpid(k->pid, NULL, 0);
	k->pid = 0;
	k->fd = -1;
}
