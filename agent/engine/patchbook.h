/* The agent's record of every patch it wrote: where, the original bytes and
 * the replacement, so a restore writes back exactly what was there, and a
 * fork child's copy can be repaired. Restored patches stay "recent" for a
 * while for forks that copied them. Not thread-safe: the caller locks. */
#ifndef NVM_PATCHBOOK_H
#define NVM_PATCHBOOK_H

#include <stdbool.h>
#include <stdint.h>

#include "redirect.h"

#define NVM_BOOK_MAX 4096

struct patch_rec {
	uint64_t mm, addr;
	uint32_t tgid, tid;   /* a task of the image, to reopen its mem file */
	uint32_t span;
	bool live;            /* in place now; else restored, kept as recent */
	bool busy;            /* a thread is restoring it */
	uint64_t when_ns;     /* written, or restored */
	char orig[NVM_PATH_READ];
	char repl[NVM_PATH_READ];
};

struct patchbook {
	unsigned n;
	struct patch_rec r[NVM_BOOK_MAX];
};

/* An empty book in memory shared with child processes (the keeper reads
 * it after the agent's end), or NULL. */
struct patchbook *book_new_shared(void);
void book_free_shared(struct patchbook *b);
struct patch_rec *book_find(struct patchbook *b, uint64_t mm, uint64_t addr);
/* A new live record (replacing a recent one at the same place). NULL if full. */
struct patch_rec *book_add(struct patchbook *b, uint64_t mm, uint64_t addr);
void book_retire(struct patch_rec *r, uint64_t now_ns);
/* Forgets records restored more than keep_ns ago. */
void book_expire(struct patchbook *b, uint64_t now_ns, uint64_t keep_ns);

#endif
