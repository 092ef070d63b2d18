/* Loading the redirect rules into the kernel side's maps (see rules_map.c). */
#ifndef NVM_RULES_MAP_H
#define NVM_RULES_MAP_H

#include "render/rules.h"

struct redirect_bpf;

/* Into skel, loaded: the rules, the tree root at root (paths already
 * rewritten to an alias), and the in-kernel replacements. Returns 0, or -1
 * (reported). */
int rules_map_load(struct redirect_bpf *skel, const struct nvm_rules *rules, const char *root);

#endif
