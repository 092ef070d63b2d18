/* Renders a model into a driver tree: proc/, sys/, dev/ and the aliases. */
#ifndef NVM_RENDER_H
#define NVM_RENDER_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/model.h"
#include "render/rules.h"

/* Marks a directory as a tree nvmirage rendered, so that re-rendering (which
 * replaces it) never touches a directory it did not make. */
#define NVM_TREE_MARK ".nvmirage-tree"
/* Where the tree goes unless told: short, as every alias under it must fit
 * in the bytes of the path it stands for. */
#define NVM_DEFAULT_ROOT "/run/nvm"

struct render_opts {
	const char *root;     /* absolute; the tree ends up exactly here */
	bool device_nodes;    /* dev/nvidiaN, nvidiactl, nvidia-modeset (root only) */
	bool clip_cpus;       /* intersect affinities with the online CPUs */
	const char *host;     /* where the host's /sys is read from; "/" normally */
	/* A file system of the tree's own (a tmpfs, mounted at root; root
	 * only): the device nodes then open, as /run and other tmpfs mounts
	 * with nodev would refuse any open of a device (EACCES) before a
	 * device cgroup is even asked. */
	bool own_fs;
	/* The driver's user space, delivered into the tree and redirected to
	 * from where the container toolkit would put it (NULL: none): NVML,
	 * and the nvidia-smi to run by that name. */
	const char *nvml_lib;
	const char *nvidia_smi;
};

/* Builds the rules, writes the tree into a temporary directory next to root
 * and renames it into place (swapping with an older tree). On failure the old
 * tree is untouched and nothing is left behind. */
int render_tree(const struct nvm_model *m, const struct render_opts *o,
		struct nvm_rules *rules);

/* Removes a tree made by render_tree (checks the mark first; unmounts a
 * tree on a file system of its own). */
int render_remove(const char *root);
/* Whether root holds a tree nvmirage rendered (its mark file is there). */
bool render_is_tree(const char *root);

/* Per-file content, exposed for the renderer's parts and for tests. */
int render_proc(const struct nvm_model *m, const char *tree);
int render_sysfs(const struct nvm_model *m, const struct render_opts *o,
		 const char *tree);
int render_devices(const struct nvm_model *m, const char *tree);
/* The MIG files (render_mig.c): capabilities, nvidia-caps/mig-minors;
 * nothing unless a GPU has MIG on (render_has_mig). */
int render_mig(const struct nvm_model *m, const char *tree);
bool render_has_mig(const struct nvm_model *m);
/* After gpus[i]'s GPU instances changed from before: the new instances'
 * nvidia-caps nodes (when nodes) and capability directories, each renamed
 * in whole, then NVML's file of the GPU (one rename), then the gone
 * instances' directories and nodes; so whatever NVML lists exists. */
int render_mig_refresh(const struct nvm_model *m, unsigned i, const struct nvm_mig *before,
		       const char *root, bool nodes);
/* A GPU instance's nvidia-caps nodes in root/dev/nvidia-caps, its own
 * and each compute instance's: made, or removed when !make. */
int render_mig_nodes(const struct nvm_model *m, const char *root, unsigned gpu_minor,
		     const struct nvm_mig_gi *gi, bool make);
/* A character device node dir/name (the agent must be root). */
int render_node(const char *dir, const char *name, unsigned major, unsigned minor,
		unsigned mode);
/* /dev/infiniband: the HCAs' uverbs, umad and issm nodes and rdma_cm. */
int render_ib_devices(const struct nvm_model *m, const char *tree);
int render_aliases(const struct nvm_rules *rs, const char *tree);

/* Chooses the dynamic majors of nvidia-uvm and nvidia-caps (m->uvm_major,
 * m->caps_major) among the ones free in proc_devices (/proc/devices), as
 * the kernel would hand them out. Returns 0 or -1 (reported). */
int render_dynamic_majors(struct nvm_model *m, const char *proc_devices);

/* One PCI function as sysfs shows it: a GPU, or an HCA beside one. */
struct render_pci_fn {
	const char *bus_id;
	uint16_t vendor, device, sub_vendor, sub_device;
	uint32_t class_code;
	uint8_t revision;
	unsigned irq;
	const char *link_speed;  /* "32.0 GT/s PCIe" */
	unsigned link_width;
	const char *driver;      /* its driver's name under /sys/bus/pci/drivers */
};
/* What every function's CPU affinity is cut to: the host's online CPUs
 * (clip, NULL: none), in a mask of mask_bits. */
struct render_pci_ctx {
	const struct nvm_model *m;
	const struct nvm_cpuset *clip;
	unsigned mask_bits;
};
/* f's 256 bytes of configuration space. */
void render_pci_config_of(const struct render_pci_fn *f, unsigned char cfg[256]);
/* f's device directory dir, on root complex root, with config cfg. */
int render_pci_function(const struct render_pci_fn *f, const unsigned char cfg[256],
			const struct render_pci_ctx *c, int root, const char *dir);
/* Links every entry of the host's directory real (read under host) into
 * dir, but those the tree has already and the profile's devices; a link
 * points at its resolved real path, so it stays valid from inside the
 * tree. */
int render_mirror_host_dir(const struct nvm_model *m, const char *host, const char *real,
			   const char *dir);
/* The links of a function on root complex rc: /sys/bus/pci/devices/<bus_id>
 * and /sys/bus/pci/drivers/<driver>/<bus_id>. */
int render_pci_links(const char *tree, const char *rc, const char *bus_id, const char *driver);
/* The HCAs of m->ib: their PCI functions, infiniband*, the classes, the
 * mlx5_core driver and the modules (render_ib.c). */
int render_ib(const struct render_pci_ctx *c, const char *tree);
/* The PCI buses of the profile's devices as /sys/class/pci_bus has them
 * (with the host's), and pci_bus/ under each root complex. */
int render_pci_buses(const struct nvm_model *m, const char *host, const char *tree);

/* The 256 bytes of PCI configuration space of g (all 0xff once it has
 * fallen off the bus). */
void render_pci_config(const struct nvm_gpu *g, unsigned char cfg[256]);
/* Its revision as sysfs shows it: the config space's (pciutils reads the
 * sysfs file; a GPU that has fallen off the bus shows "rev ff"). */
unsigned render_pci_revision(const struct nvm_gpu *g);
/* The driver's information file of g ("GPU Excluded: Yes" when excluded). */
size_t render_information_text(const struct nvm_gpu *g, char *buf, size_t len);
/* What NVML reads of g's faults on every call, in
 * sys/module/nvidia/nvmirage/<bdf>.state: "mode=lost\necc_errors=1\n
 * ecc_pending=1\nxids=3:79 4:48\n". */
size_t render_gpu_state_text(const struct nvm_gpu *g, char *buf, size_t len);

/* What nvmirage's NVML reads of gpus[i] once, at nvmlInit, in
 * sys/module/nvidia/nvmirage/<bdf>: identity, memory, NVLinks, MIG. The
 * text is shorter than NVM_NVML_TEXT (NVML's buffer) or is cut there. */
#define NVM_NVML_TEXT 4096
size_t render_nvml_gpu_text(const struct nvm_model *m, unsigned i, char *buf, size_t len);

/* What nvmirage's NVML reads of g's telemetry (clocks, power, thermal,
 * utilization, processes...), in sys/module/nvidia/nvmirage/<bdf>.telemetry;
 * empty when the profile gives none. */
size_t render_telemetry_text(const struct nvm_gpu *g, char *buf, size_t len);

/* Re-renders what a fault changes of gpus[i] in the tree at root: its
 * information file, its PCI config space and its NVML state, each file
 * replaced by one rename, so a reader sees it whole, before or after. */
int render_gpu_refresh(const struct nvm_model *m, unsigned i, const char *root);
/* The same for ib.hcas[i]: its port's state and phys_state. */
int render_hca_refresh(const struct nvm_model *m, unsigned i, const char *root);
/* Its port's state and phys_state files ("4: ACTIVE\n", "5: LinkUp\n"),
 * a fault's where it has one. */
void render_hca_port_state(const struct nvm_infiniband *ib, const struct nvm_hca *h, char *state,
			   size_t slen, char *phys, size_t plen);

#endif
