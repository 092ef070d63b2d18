/* The kernel side's records of the patches it wrote itself (in-kernel
 * rewrite): entries of the patches map flagged NVM_PATCH_F_INKERNEL, which
 * hold the original bytes and the replacement. The agent reads them where
 * its own book has nothing: to restore what the kernel could not, to
 * repair fork children, and to clean up after tasks that died. */
#ifndef NVM_KPATCHES_H
#define NVM_KPATCHES_H

#include <stdbool.h>
#include <stdint.h>

#include "redirect.h"

/* The in-kernel record at (mm, addr): true if there is one. */
bool kpatch_get(int patches_fd, __u64 mm, __u64 addr, struct nvm_patch *out);

/* Whether the kernel side's entry at key, of any patch, says an exec
 * replaced its address space (NVM_PATCH_GONE): then nothing is to be
 * written there. since, if not NULL, gets the entry's. */
bool kpatch_gone(int patches_fd, const struct nvm_patch_key *key, uint64_t *since);

/* Calls fn for every in-kernel record (all of them, in one pass over the
 * map). Returns 0, or -1 if the map could not be read. */
typedef void (*kpatch_fn)(const struct nvm_patch_key *key, const struct nvm_patch *p, void *ctx);
int kpatch_each(int patches_fd, kpatch_fn fn, void *ctx);

#endif
