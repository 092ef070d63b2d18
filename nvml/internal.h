/* What the parts of nvmirage's NVML share: the GPUs found at nvmlInit, the
 * system's versions, and the checks every call makes. */
#ifndef NVM_NVML_INTERNAL_H
#define NVM_NVML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "nvml.h"

/* Exported: everything else in the library is hidden. */
#define API __attribute__((visibility("default")))
#define MAX_GPUS 64
#define MAX_CPUS 4096

/* One NVLink's far end. */
struct nvm_link {
	bool up;
	bool to_switch;          /* else to the GPU at bus_id */
	char bus_id[16];
};

struct nvmlDevice_st {
	unsigned minor;
	char bus_id[16]; /* 0008:06:00.0 */
	unsigned domain, bus, dev, fn;
	char name[96], uuid[48], vbios[32], serial[32], part[80], arch[32], brand[32];
	unsigned vendor, device, sub_vendor, sub_device;
	unsigned long long mem_total, mem_reserved;
	unsigned cc_major, cc_minor;
	int numa_node;
	unsigned char cpus[MAX_CPUS / 8];
	unsigned nvlink_version, nvlink_count;
	struct nvm_link links[NVML_NVLINK_MAX_LINKS];
};

/* The library's state: set by nvmlInit (under nvml_lock), read by every
 * other call once nvml_refcount is above 0. */
extern int nvml_refcount;
extern unsigned nvml_ndev;
extern struct nvmlDevice_st nvml_devs[MAX_GPUS];
extern char nvml_driver_version[48], nvml_lib_version[64], nvml_cuda_version[16];

/* Reads the GPU at bdf from the driver files into d (files.c). */
int nvml_load_device(const char *bdf, struct nvmlDevice_st *d);
/* Reads a whole small file; -1 if it cannot be opened. */
int nvml_read_text(const char *path, char *buf, size_t len);
/* The value of "key=value" in text, or "". */
void nvml_extra_value(const char *text, const char *key, char *out, size_t len);

/* s into out of len bytes, or INSUFFICIENT_SIZE, as NVML's string getters. */
nvmlReturn_t nvml_copy_str(char *out, unsigned len, const char *s);

/* A GPU's faults, as the agent renders them in
 * sys/module/nvidia/nvmirage/<bdf>.state, read afresh on every call so that
 * a fault shows at once in a process that initialised long before. */
#define STATE_XIDS 16
struct nvm_state {
	enum { GPU_OK, GPU_LOST, GPU_EXCLUDED } health;
	unsigned ecc_errors;
	bool ecc_pending;
	unsigned nxids;
	struct { unsigned long long seq; unsigned code; } xids[STATE_XIDS];
};
void nvml_read_state(const char *bus_id, struct nvm_state *st);
/* GPU_IS_LOST for a GPU lost, fallen off the bus or excluded since. */
nvmlReturn_t nvml_check_gpu(nvmlDevice_t d);

/* Every call below nvmlInit needs it first, and a handle from this
 * library, of a GPU that is still there. */
#define NEED_INIT()                                                            \
	do {                                                                   \
		if (!nvml_refcount)                                            \
			return NVML_ERROR_UNINITIALIZED;                       \
	} while (0)
#define NEED_DEV(d)                                                            \
	do {                                                                   \
		nvmlReturn_t gpu_;                                             \
		NEED_INIT();                                                   \
		if (!((d) >= nvml_devs && (d) < nvml_devs + nvml_ndev))        \
			return NVML_ERROR_INVALID_ARGUMENT;                    \
		gpu_ = nvml_check_gpu(d);                                      \
		if (gpu_ != NVML_SUCCESS)                                      \
			return gpu_;                                           \
	} while (0)

#endif
