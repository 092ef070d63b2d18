/* The node a profile describes: GPUs, their PCI placement, the driver. */
#ifndef NVM_MODEL_H
#define NVM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/cpuset.h"

#define NVM_MAX_GPUS 64
#define NVM_MAX_ROOTS 64
#define NVM_MAX_MINOR 254 /* 255 is nvidiactl, 254 nvidia-modeset */
#define NVM_MAX_NVLINKS 18 /* NVML_NVLINK_MAX_LINKS */

/* A GPU's faults (nvmirage fault, or the profile's failure settings). */
enum nvm_fault_mode {
	NVM_FAULT_NONE,
	NVM_FAULT_LOST,      /* NVML: GPU_IS_LOST */
	NVM_FAULT_FALLEN,    /* lost, and its PCI config space reads all 0xff (Xid 79) */
	NVM_FAULT_EXCLUDED,  /* as NVreg_ExcludedGpus: "GPU Excluded: Yes", not in NVML */
};

#define NVM_MAX_XIDS 16 /* the last Xid events of a GPU that NVML can still deliver */

struct nvm_xid {
	uint64_t seq;            /* node-wide, from 1: NVML delivers those past the last seen */
	unsigned code;
};

struct nvm_fault {
	enum nvm_fault_mode mode;
	unsigned ecc_errors;     /* uncorrectable ECC errors, volatile and aggregate */
	bool ecc_pending;        /* rows to remap (pages to retire) at the next reset */
	unsigned xid_total;      /* Xid events so far */
	unsigned nxids;          /* of which the last nxids are in xids */
	struct nvm_xid xids[NVM_MAX_XIDS]; /* oldest first */
};

/* A value that moves within [lo, hi] over period seconds; lo == hi: one
 * that stays. */
struct nvm_range {
	bool set;
	double lo, hi, period;
};

#define NVM_MAX_RETIRED 16
#define NVM_MAX_PROCS 16
#define NVM_MAX_GFX_CLOCKS 128

/* What a GPU reports at run time (Mokka's clocks, supported_clocks,
 * clocks_throttle_reasons, power, thermal, fan, performance_state,
 * utilization, dynamic_metrics, pcie, compute_mode, display, accounting,
 * processes), for nvmirage's NVML. Clocks in MHz by NVML's clock type
 * (graphics, SM, memory, video), power in mW, temperatures in C. */
struct nvm_telemetry {
	bool present;                /* the profile has any of these sections */
	unsigned clk_cur[4], clk_max[4], clk_app[4], clk_default_app[4];
	unsigned nmem_clocks, mem_clocks[16];
	unsigned ngfx_clocks, gfx_clocks[NVM_MAX_GFX_CLOCKS]; /* at the first memory clock */
	uint64_t reasons;            /* clocks event reasons in force (NVML's bits) */
	unsigned power_limit, power_default, power_min, power_max;
	struct nvm_range power;
	uint64_t energy_base_mj;     /* energy already consumed when the tree is rendered */
	unsigned temp_shutdown, temp_slowdown, temp_gpu_max, temp_mem_max;
	struct nvm_range temp_gpu, temp_mem;
	unsigned fans;
	struct nvm_range fan;
	unsigned pstate;
	struct nvm_range util_gpu, util_mem, util_enc, util_dec;
	unsigned pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
	unsigned pcie_tx_kbs, pcie_rx_kbs;
	unsigned compute_mode;       /* NVML's: 0 default .. 3 exclusive process */
	bool display_active, accounting;
	uint64_t memory_used;        /* bytes, besides the reserved */
	unsigned nprocs;
	struct { unsigned pid; uint64_t used_bytes; char type; char name[64]; } procs[NVM_MAX_PROCS];
	/* health.c: each part is answered only where the profile has it. */
	char inforom_image[32];      /* "": no InfoROM image version */
	char inforom_object[3][16];  /* OEM, ECC, power objects; "": N/A */
	bool retired;                /* retired_pages given (pre-Ampere page retirement) */
	unsigned nretired[2];        /* single-bit, double-bit pages */
	uint64_t retired_addr[2][NVM_MAX_RETIRED];
	bool retired_pending;        /* pending_blacklist or pending_retirement */
	bool remapped;               /* remapped_rows given (Ampere and later) */
	unsigned remap_corr, remap_unc;
	bool remap_pending, remap_failed;
	bool histogram;              /* availability_histogram given */
	unsigned remap_banks[5];     /* max, high, partial, low, none */
	int opmode_current, opmode_pending; /* NVML's all_on 0, compute 1, low_dp 2; -1: N/A */
};

#define NVM_MIG_MAX_GI 7 /* GPU instances on a 7-slice board */

/* One of a board's MIG GPU instance profiles (mig.c's tables). */
struct nvm_mig_profile {
	const char *name;        /* "3g.20gb" */
	unsigned id;             /* the ID column of nvidia-smi mig -lgip */
	unsigned slices;         /* compute slices, of 7 */
	unsigned size;           /* memory units, of 8; starts are multiples of it */
	unsigned starts;         /* how many placements: start = k * size, k < starts */
	unsigned memory_mb;
	unsigned sms, copy_engines, decoders, encoders, jpegs, ofas;
};

#define NVM_MIG_MAX_CI 7 /* compute instances in a GPU instance: one per slice */

/* A compute instance: a GPU instance's MIG device. */
struct nvm_mig_ci {
	unsigned id;             /* lowest free when made, as the driver numbers them */
	unsigned slices, start;  /* in compute slices of its GPU instance */
};

/* A GPU instance and its compute instances (by default the one spanning
 * it, id 0, as nvidia-mig-parted makes them), ordered by id. */
struct nvm_mig_gi {
	unsigned id;             /* GPU instance id: from its placement (mig.c) */
	unsigned start;          /* first memory unit */
	const struct nvm_mig_profile *profile;
	unsigned nci;
	struct nvm_mig_ci ci[NVM_MIG_MAX_CI];
};

/* A GPU's MIG state: mode, and its GPU instances. */
struct nvm_mig {
	const struct nvm_mig_profile *table; /* the board's profiles (mig.c); NULL: none */
	bool enabled, pending;   /* mode current, pending */
	unsigned ngi;
	struct nvm_mig_gi gi[NVM_MIG_MAX_GI];
};

struct nvm_gpu {
	unsigned index;
	char name[96];
	char brand[32];
	char architecture[32];
	char uuid[48];
	char serial[32];
	char board_part_number[32];
	char vbios_version[32];
	char gsp_firmware[32];   /* empty: GSP firmware not in use */
	char bus_id[16];         /* canonical: "0008:06:00.0" */
	unsigned domain, bus, device, function;
	unsigned minor;
	uint16_t vendor_id, device_id, subsystem_vendor, subsystem_device;
	uint32_t class_code;     /* 0x030200: 3D controller */
	uint8_t revision;
	unsigned irq;
	unsigned dma_bits;
	unsigned cc_major, cc_minor;
	uint64_t memory_total, memory_reserved;
	unsigned link_width;
	char link_speed[24];     /* "32.0 GT/s PCIe" */
	int root;                /* index into nvm_model.roots */
	struct nvm_fault fault;
	struct nvm_telemetry tel;
	struct nvm_mig mig;
	int line, col;           /* where the device is in the profile */
};

struct nvm_root {
	char id[16];             /* "pci0008:00" */
	int numa_node;           /* -1: none */
	struct nvm_cpuset cpus;  /* the profile's affinity */
};

/* The profile's nvlink section: how many links each GPU has and where they
 * go. Links to peers come first, then links to NVSwitches; the rest are
 * down. version 0: the GPUs have no NVLink. */
struct nvm_nvlink {
	unsigned version;        /* NVLink generation, 1..5 */
	unsigned links;          /* links per GPU, at most NVM_MAX_NVLINKS */
	bool switched;           /* links not to a peer go to NVSwitches */
	/* Links between gpus[i] and gpus[j] (positions in the model). */
	uint8_t peer[NVM_MAX_GPUS][NVM_MAX_GPUS];
};

#define NVM_MAX_HCAS 64

/* One InfiniBand HCA: an mlx5 PCI function beside a GPU, on its root
 * complex (as on GB200/GB300 trays, where GPU and NIC hang off one CPU). */
struct nvm_hca {
	unsigned index;          /* mlx5_<index>, uverbs<index>, umad<index> */
	char bus_id[16];         /* "0008:07:00.0" */
	unsigned domain, bus;
	unsigned gpu;            /* position in gpus of the GPU it sits beside */
	uint64_t guid;           /* node GUID; mlx5's port and system image GUIDs too */
	unsigned lid;
	char node_desc[65];
	bool port_down;          /* nvmirage fault port-down */
};

/* The profile's infiniband section (Mokka's schema): every HCA alike but
 * for its place, GUID and LID. nhcas 0: none. */
struct nvm_infiniband {
	unsigned nhcas;
	unsigned device_id;      /* the PCI device id hca_type names: MT4129 is 0x1021 */
	char fw_version[32];
	char board_id[32];
	unsigned hw_rev;
	bool ethernet;           /* link_layer Ethernet, else InfiniBand */
	unsigned rate_gbps;      /* of the 4X port: 100, 200, 400, 800 */
	unsigned port_state;     /* the kernel's: 1 DOWN .. 5 ACTIVE_DEFER */
	unsigned phys_state;     /* 1 Sleep .. 7 Phy Test */
	struct nvm_hca hcas[NVM_MAX_HCAS];
};

struct nvm_model {
	char profile_path[4096];
	char driver_version[32];
	char nvml_version[32];
	char cuda_version[16];
	char module_arch[16];    /* in the version banner: x86_64, aarch64 */
	unsigned ngpus;
	struct nvm_gpu gpus[NVM_MAX_GPUS];
	unsigned nroots;
	struct nvm_root roots[NVM_MAX_ROOTS];
	struct nvm_nvlink nvlink;
	struct nvm_infiniband ib;
	char node_name[65];      /* $NODE_NAME, else the host name: HCA GUIDs and LIDs */
	uint64_t xid_seq;        /* the last Xid event's sequence number */
	/* The character device majors of nvidia-uvm and nvidia-caps, which
	 * the driver gets from the kernel's dynamic range (238 and 241 on a
	 * real node): chosen among the ones free on this machine when device
	 * nodes are rendered (render_dynamic_majors); 0 until then. */
	unsigned uvm_major, caps_major;
};

/* The CPU affinity a GPU reports: its root complex's CPUs, intersected with
 * `online` unless `online` is NULL; when nothing is left, all of `online`
 * (Slurm will not use a GPU whose CPUs are all absent). */
void model_gpu_cpus(const struct nvm_model *m, const struct nvm_gpu *g,
		    const struct nvm_cpuset *online, struct nvm_cpuset *out);
/* The same for any device on root complex root (an HCA beside a GPU). */
void model_root_cpus(const struct nvm_model *m, int root, const struct nvm_cpuset *online,
		     struct nvm_cpuset *out);

#endif
