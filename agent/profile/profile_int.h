/* The parts of profile parsing (profile.c, device.c, topology.c). */
#ifndef NVM_PROFILE_INT_H
#define NVM_PROFILE_INT_H

#include "profile/model.h"
#include "profile/yamldoc.h"

/* DDDD:BB:DD.F in hex, any case, into g's bus fields (stored lower-case).
 * Returns -1 for anything else, so no '/' or ".." can reach a path. */
int parse_bus_id(const char *s, struct nvm_gpu *g);
/* devices[i], with device_defaults for the keys it does not have. */
int parse_device(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults, unsigned i,
		 const char *driver, struct nvm_gpu *g);
/* pcie_topology; ndevices_listed: devices in the file, before any cut. */
int parse_roots(struct ydoc *y, yaml_node_t *topo, unsigned ndevices_listed,
		struct nvm_model *m);
/* nvlink: {version, links_per_gpu, switch_support, switches, peers}. */
int parse_nvlink(struct ydoc *y, yaml_node_t *nvlink, struct nvm_model *m);
/* devices[i].mig, else device_defaults.mig: mode and GPU instances, on
 * the board's MIG profile table (mig.c); after parse_device (the name
 * picks the board). */
int parse_mig(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults, unsigned i,
	      struct nvm_gpu *g);
/* A GPU instance's compute_instances list (path names it in errors), in
 * place of the one spanning it; none given: that one stays
 * (mig_compute.c). */
int mig_parse_compute(struct ydoc *y, yaml_node_t *list, const char *path, struct nvm_mig_gi *gi);
/* infiniband: the HCAs beside the GPUs, placed on their root complexes
 * (so after parse_roots); m->node_name too (infiniband.c). */
int parse_infiniband(struct ydoc *y, yaml_node_t *ib, struct nvm_model *m);
/* devices[i].failure, else device_defaults.failure (Mokka's), into
 * m->gpus[i].fault. */
int parse_failure(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults, struct nvm_model *m,
		  unsigned i);
/* The run-time sections of devices[i] (each one whole from the device when
 * it has it, else from device_defaults) into m->gpus[i].tel; unknown keys
 * and bad values are refused (telemetry.c). */
int parse_telemetry(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults, struct nvm_model *m,
		    unsigned i);
/* The run-time sections' parsing (telemetry.c, health.c): the device
 * entry i, device_defaults, and where the values go. */
struct tctx {
	struct ydoc *y;
	yaml_node_t *dev, *defaults;
	unsigned i;
	struct nvm_telemetry *t;
};
/* The section name: the device's own, else the defaults'; path names it. */
yaml_node_t *tel_section(struct tctx *c, const char *name, char *path, size_t len);
/* map.key into out, when map has it (left as it is when not); a bad value
 * is refused with its file, line and path.key. */
int tel_uint(struct tctx *c, yaml_node_t *map, const char *path, const char *key, uint64_t max,
	     unsigned *out);
int tel_u64(struct tctx *c, yaml_node_t *map, const char *path, const char *key, uint64_t *out);
int tel_bool(struct tctx *c, yaml_node_t *map, const char *path, const char *key, bool *out);
/* n, one of words (any case), as its position in words. */
int tel_word(struct tctx *c, yaml_node_t *n, const char *path, const char *const *words,
	     unsigned *out);
/* inforom, retired_pages, remapped_rows, gpu_operation_mode (health.c). */
int parse_health(struct tctx *c);
/* Without pcie_topology, Mokka puts every device under pci0000:00, NUMA 0. */
void default_roots(struct nvm_model *m);

#endif
