/* A GPU's MIG layout on the model: what a profile's mig block sets up and
 * `nvmirage mig` changes at runtime (render/ then shows it). The rules of
 * the layout are nvml/mig_layout.h's, which nvmirage's NVML shares. */
#ifndef NVM_MIG_H
#define NVM_MIG_H

#include <stddef.h>

#include "profile/model.h"

/* The board's GPU instance profiles by the GPU's name ("NVIDIA A100-SXM4-
 * 40GB"), ended by one with no name; NULL: no MIG here (mig_tables.c). */
const struct nvm_mig_profile *mig_board_table(const char *name);

/* Adds a GPU instance of profile p at start, or where the driver would
 * put it when start < 0 (an A100 asked for 3g.20gb, 2g.10gb and two
 * 1g.5gb puts them at 4, 0, 2 and 3). NULL, or why not (nothing added). */
const char *mig_add_instance(struct nvm_mig *mig, const struct nvm_mig_profile *p, int start);

/* Adds a compute instance of c slices to gi at start (in its slices), or
 * at the lowest free placement when start < 0, with the lowest free id.
 * NULL, or why not (nothing added). */
const char *mig_add_compute(struct nvm_mig_gi *gi, unsigned c, int start);

/* A compute instance's profile name: "1c.3g.20gb", or the GPU instance's
 * ("3g.20gb") when it spans it. */
void mig_compute_name(const struct nvm_mig_gi *gi, const struct nvm_mig_ci *ci, char *out,
		      size_t len);

/* Orders the GPU instances by id, as NVML lists MIG devices. */
void mig_sort(struct nvm_mig *mig);

/* The board's profile named name ("3g.20gb", any case) or numbered so
 * ("9", the ID nvidia-smi mig -lgip prints); NULL if it has none. */
const struct nvm_mig_profile *mig_find_profile(const struct nvm_mig *mig, const char *name);

/* "3g.20gb,1g.5gb" (names or ids, placed as the driver places them, or
 * NAME:START for a placement): adds them all, or none and says why. */
int mig_create(struct nvm_mig *mig, const char *list, char *why, size_t len);

/* "ID[,ID...]" GPU instance ids, or "all": removes them all, or none and
 * says why. */
int mig_destroy(struct nvm_mig *mig, const char *list, char *why, size_t len);

/* The layout as NVML lists it: "3g.20gb@4(gi1) 2g.10gb@0(gi3) ..." */
void mig_describe(const struct nvm_mig *mig, char *out, size_t len);

#endif
