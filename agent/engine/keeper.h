/* The keeper: a small process forked when the engine starts, which puts
 * back the bytes of the patches a killed agent left in place.
 *
 * A task's path bytes are rewritten for the length of one syscall. If the
 * agent is killed (SIGKILL, the OOM killer) while one is rewritten, nothing
 * of it is left to put the original back: its programs detach with its
 * files, and the string stays rewritten in that process for good. The
 * keeper sees the agent's end (its socket from the agent reads end of file),
 * and then writes the original bytes back wherever the replacement still
 * stands, from the agent's book (shared memory) and, for patches written in
 * the kernel, the patches map; then it removes the tree the agent left
 * mounted. A clean stop tells it there is nothing to do. */
#ifndef NVM_KEEPER_H
#define NVM_KEEPER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/patchbook.h"

struct keeper {
	pid_t pid; /* 0: not started */
	int fd;    /* the agent's end of the socket */
};

#define NVM_KEEPER_PROGS 128
#define NVM_KEEPER_LINKS 32

/* What the keeper looks after. */
struct keeper_watch {
	const struct patchbook *book; /* a book_new_shared one */
	int patches_fd;               /* the patches map, or -1 */
	/* The agent's programs: an entry program may still write a patch in
	 * the kernel until it is detached, i.e. gone. */
	uint32_t prog_ids[NVM_KEEPER_PROGS];
	unsigned nprogs;
	uint64_t settle_ns; /* the longest a task waits inside a program */
	/* The tree the agent rendered on a file system of its own, removed
	 * once the programs are gone. NULL: none. */
	const char *tree;
	/* The agent's lock on its root, which the keeper holds until it has
	 * removed the tree, so that no new agent renders there meanwhile.
	 * -1: none. */
	int root_lock_fd;
};

/* Forks the keeper. Call while the process has one thread. */
int keeper_start(struct keeper *k, const struct keeper_watch *w);
/* Hands the keeper links (their fds; the caller keeps its own) to hold,
 * of the entry side (enter) or the exit side: the in-kernel rewrite's
 * programs. When the agent is killed, the kernel releases its links one
 * after the other, and a syscall whose path an entry program rewrote just
 * before would meet no exit program to put the bytes back. Held here, the
 * programs stay as they were until the keeper lets the entry side go
 * and, once every patch is back, the exit side. */
int keeper_hold(struct keeper *k, const int *fds, unsigned n, bool enter);
/* The keeper closes every link it holds, and answers once it has: before
 * a clean stop detaches the programs. */
void keeper_let_go(struct keeper *k);
/* A clean stop: every patch is back; the keeper exits and is reaped. */
void keeper_stop(struct keeper *k);

#endif
