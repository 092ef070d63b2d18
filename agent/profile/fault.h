/* GPU and HCA faults on the model: what `nvmirage fault` and a profile's failure
 * settings change (render/ then shows it). */
#ifndef NVM_FAULT_H
#define NVM_FAULT_H

#include "profile/model.h"

/* "none", "lost", "fallen-off-bus", "excluded". */
const char *fault_mode_name(enum nvm_fault_mode mode);

/* The GPU sel names: its index, its bus id (0008:06:00.0, any case, with
 * or without the 8-digit domain NVML prints) or its UUID. Its position in
 * m->gpus, or -1. */
int fault_find_gpu(const struct nvm_model *m, const char *sel);

/* Applies fault what to gpus[i]:
 *   lost            NVML calls on it fail with GPU_IS_LOST
 *   fallen-off-bus  lost, its PCI config space all 0xff, Xid 79
 *   excluded        as the driver's NVreg_ExcludedGpus
 *   ecc             one more uncorrectable ECC error, a row to remap, Xid 48
 *   xid             an Xid event of code xid (1..65535)
 *   clear           no fault at all
 * Returns 0, or -1 with *why saying what is wrong (nothing changed). */
int fault_apply(struct nvm_model *m, unsigned i, const char *what, unsigned xid,
		const char **why);

/* The HCA sel names: mlx5_N or its bus id. Its position in m->ib.hcas,
 * or -1. */
int fault_find_hca(const struct nvm_model *m, const char *sel);

/* Applies fault what to HCA i:
 *   port-down  its port DOWN, physically Disabled (a cable pulled)
 *   clear      as the profile has it
 * Returns 0, or -1 with *why saying what is wrong (nothing changed). */
int fault_apply_hca(struct nvm_model *m, unsigned i, const char *what, const char **why);

#endif
