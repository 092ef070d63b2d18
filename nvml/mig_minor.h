/* The nvidia-caps minor of a MIG capability, as the driver numbers them in
 * /proc/driver/nvidia-caps/mig-minors: config 1, monitor 2, then for each
 * GPU minor (0..31) and GPU instance id (0..14) nine minors, the GPU
 * instance's access first, then its compute instances' (0..7). Shared by
 * the agent, which writes the files and nodes, and nvmirage's NVML, which
 * opens a MIG device's nodes to learn whether the device cgroup allows it. */
#ifndef NVM_MIG_MINOR_H
#define NVM_MIG_MINOR_H

#define NVM_MIG_GPUS 32 /* GPUs the driver's mig-minors names */
#define NVM_MIG_GIS 15  /* GPU instance ids 0..14 */
#define NVM_MIG_CIS 8   /* compute instance ids 0..7 */

/* ci < 0: the GPU instance's own access minor. */
static inline unsigned nvm_mig_minor(unsigned gpu_minor, unsigned gi, int ci)
{
	return 3 + (gpu_minor * NVM_MIG_GIS + gi) * (1 + NVM_MIG_CIS) +
	       (ci < 0 ? 0 : 1 + (unsigned)ci);
}

#endif
