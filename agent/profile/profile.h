/* GPU profiles: Mokka's YAML schema read into a validated nvm_model. */
#ifndef NVM_PROFILE_H
#define NVM_PROFILE_H

#include <stddef.h>

#include "profile/model.h"

#define NVM_PROFILE_MAX_BYTES (1 << 20)

/* Which profile, and how many of its GPUs (0: all): --profile, --gpus. */
struct profile_opts {
	const char *profile;
	unsigned gpus;
};

/* Finds a profile by name (profiles/NAME.yaml next to the binary, the
 * installed copy, $NVMIRAGE_PROFILES) or takes it as a path when it has a
 * '/' or ends in .yaml. Returns 0 and the path, or -1 (reported). */
int profile_resolve(const char *name_or_path, char *path, size_t len);

/* Parses and validates text. gpus > 0 keeps only the first gpus devices
 * (after system.num_devices). Returns 0, or -1 after reporting the first
 * problem as FILE:LINE:COL: key.path: what is wrong. */
int profile_parse(const char *file, const char *text, size_t len, unsigned gpus,
		  struct nvm_model *m);

/* profile_resolve + read (at most 1 MiB) + profile_parse. */
int profile_load(const char *name_or_path, unsigned gpus, struct nvm_model *m);

#endif
