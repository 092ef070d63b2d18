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

/* A value that moves within [lo, hi] over period seconds (lo == hi: one
 * that does not move), as the agent renders the profile's ranges. */
struct nvm_dyn {
	bool set;
	double lo, hi, period;
};

/* InfoROM and memory health (health.c); each part only where the profile
 * has it ("" or false: NOT_SUPPORTED). */
struct nvm_health {
	char inforom_image[32], inforom_object[NVML_INFOROM_COUNT][16];
	bool retired, retired_pending;
	unsigned nretired[NVML_PAGE_RETIREMENT_CAUSE_COUNT];
	unsigned long long retired_addr[NVML_PAGE_RETIREMENT_CAUSE_COUNT][16];
	bool remapped, remap_pending, remap_failed, histogram, opmode;
	unsigned remap_corr, remap_unc, remap_banks[5], opmode_current, opmode_pending;
};
/* One health line of the telemetry file (key=value): true if it was one. */
bool nvml_health_line(struct nvm_health *h, const char *key, const char *v);

/* What the profile says a GPU reports at run time, from
 * sys/module/nvidia/nvmirage/<bdf>.telemetry (telemetry.c). Clocks in MHz
 * by nvmlClockType_t, power in mW, temperatures in C, throughput in KB/s. */
#define NVM_CLOCK_TYPES 4
#define NVM_MAX_CLOCKS 256
struct nvm_telemetry {
	bool present;
	double born;                      /* boot-time seconds at render: energy from 0 */
	unsigned phase;                   /* spreads the GPUs' curves apart */
	unsigned clk_max[NVM_CLOCK_TYPES], clk_app[NVM_CLOCK_TYPES];
	unsigned clk_default_app[NVM_CLOCK_TYPES], clk_boost[NVM_CLOCK_TYPES];
	struct nvm_dyn clk[NVM_CLOCK_TYPES];
	unsigned nmem_clocks, mem_clocks[16], ngfx_clocks, gfx_clocks[NVM_MAX_CLOCKS];
	unsigned power_limit, power_default, power_min, power_max;
	struct nvm_dyn power;
	unsigned temp_shutdown, temp_slowdown, temp_gpu_max, temp_mem_max;
	struct nvm_dyn temp_gpu, temp_mem;
	unsigned fans;
	struct nvm_dyn fan;
	unsigned pstate;
	struct nvm_dyn util_gpu, util_mem, util_enc, util_dec, pcie_tx, pcie_rx;
	unsigned pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
	unsigned compute_mode;
	bool display_active, accounting;
	unsigned long long reasons, reasons_supported;
	unsigned long long energy_base;   /* mJ consumed before render */
	unsigned long long mem_used;      /* by the profile's processes, bytes */
	struct nvm_health health;
};

#define NVM_MIG_MAX 7
#define NVM_MIG_PROFILES 8

/* One of the board's GPU instance profiles, as the agent rendered its
 * table ("mig_profiles=", see mig.c). */
struct nvm_mig_prof {
	char name[16];            /* "3g.20gb" */
	unsigned id, slices, size, starts, memory_mb;
	unsigned sms, copy_engines, decoders, encoders, jpegs, ofas;
};

/* A MIG device: a compute instance of a GPU instance of a GPU with MIG on
 * (mig.c). Its handle points here, never into nvml_devs, so the calls that
 * take only whole GPUs refuse it. A GPU instance's handle is its first
 * listed compute instance's entry; the GPU instance fields are the same
 * in each. */
struct nvm_mig_dev {
	struct nvmlDevice_st *parent;
	unsigned gi, ci;
	char profile[16];         /* the GPU instance's: "3g.20gb" */
	char name[24];            /* the compute instance's: "1c.3g.20gb", or profile */
	unsigned profile_id, slices, memory_mb;
	unsigned sms, copy_engines, decoders, encoders, jpegs, ofas; /* the GPU instance's */
	unsigned start, size;     /* its GPU instance's placement, in memory units */
	unsigned ci_slices, ci_start, ci_sms; /* the compute instance's, in slices */
	unsigned gi_ci_used;      /* slices the GPU instance's compute instances take, all */
	char uuid[48];            /* MIG-..., from the parent's and the instance's */
};

struct nvmlDevice_st {
	unsigned minor;
	char bus_id[16]; /* 0008:06:00.0 */
	char pci_path[256]; /* under /sys/devices: pci0008:00/0008:06:00.0 */
	unsigned domain, bus, dev, fn;
	char name[96], uuid[48], vbios[32], serial[32], part[80], arch[32], brand[32];
	unsigned vendor, device, sub_vendor, sub_device;
	unsigned long long mem_total, mem_reserved;
	unsigned cc_major, cc_minor;
	int numa_node;
	unsigned char cpus[MAX_CPUS / 8];
	unsigned nvlink_version, nvlink_count;
	struct nvm_link links[NVML_NVLINK_MAX_LINKS];
	struct nvm_telemetry tel;
	char procs_text[2048];   /* the profile's "process=" lines */
	bool mig_on, mig_pending;
	unsigned nmig;
	struct nvm_mig_dev mig[NVM_MIG_MAX];
	unsigned nmigp;
	struct nvm_mig_prof migp[NVM_MIG_PROFILES];
	unsigned mig_used_units, mig_used_slices; /* by every GPU instance, listed or not */
};

/* Whether the device cgroup denies this process the node at path: its
 * open fails with EPERM (init.c). */
bool nvml_denied(const char *path);
/* The MIG device handle h is, or NULL (mig.c). */
struct nvm_mig_dev *nvml_mig_of(nvmlDevice_t h);
/* The board's profile of that driver profile id, or NULL (mig.c). */
const struct nvm_mig_prof *nvml_mig_prof(const struct nvmlDevice_st *d, unsigned id);
/* SMs of a compute instance of c slices in m's GPU instance (mig.c). */
unsigned nvml_mig_ci_sms(const struct nvmlDevice_st *d, const struct nvm_mig_dev *m, unsigned c);
/* A GPU's "mig=" and "mig_gi=" lines of its driver file into d (mig.c). */
void nvml_load_mig(const char *extra, struct nvmlDevice_st *d);

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

/* The GPU's telemetry file into d->tel and d->procs_text (telemetry.c). */
void nvml_load_telemetry(struct nvmlDevice_st *d);
/* A moving value now: the same in every process at the same second. */
double nvml_dyn_now(const struct nvmlDevice_st *d, const struct nvm_dyn *v);
/* Energy in mJ since the tree was rendered: the integral of the power
 * curve, so it only grows. */
unsigned long long nvml_energy_mj(const struct nvmlDevice_st *d);
/* NOT_SUPPORTED unless the profile gave the GPU telemetry. */
#define NEED_TEL(d)                                                            \
	do {                                                                   \
		if (!(d)->tel.present)                                         \
			return NVML_ERROR_NOT_SUPPORTED;                       \
	} while (0)

/* Processes on a GPU (processes.c): the profile's. */
struct nvm_proc {
	unsigned pid;
	unsigned long long used;
};
unsigned nvml_gpu_processes(const struct nvmlDevice_st *d, bool graphics, struct nvm_proc *out,
			    unsigned max);
int nvml_process_name(unsigned pid, char *out, size_t len);

/* The NVLink field values (link count, per-link speed, state, version),
 * from the profile's nvlink section: true if v is one (nvlink.c). */
bool nvml_nvlink_field(nvmlDevice_t d, nvmlFieldValue_t *v);
/* A field's answer: the unsigned value x. */
static inline void nvml_field_uint(nvmlFieldValue_t *v, unsigned x)
{
	v->valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
	v->value.uiVal = x;
	v->nvmlReturn = NVML_SUCCESS;
}
/* The power, energy and temperature-limit field values, from the
 * profile's telemetry: true if v is one (sensors.c). */
bool nvml_sensor_field(nvmlDevice_t d, nvmlFieldValue_t *v);

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
