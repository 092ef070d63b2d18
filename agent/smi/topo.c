/* nvidia-smi topo -m: how each pair of GPUs is connected (the NVLinks
 * between them, else where they meet on PCIe), each GPU's CPU and NUMA
 * affinity, and its own NUMA id where its memory is a node; then the
 * node's NICs (the RDMA devices of /sys/class/infiniband), placed against
 * every GPU and each other by where they meet on PCIe, as nvidia-smi
 * finds them. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smi/forms.h"
#include "pci_level.h"

#define MAX_NICS 64

#define MAX_LINKS NVML_NVLINK_MAX_LINKS

/* A GPU's active NVLinks: how many go to switches, and the bus id at the
 * far end of each that goes to a GPU. */
struct links {
	unsigned to_switch, to_gpu;
	char peer[MAX_LINKS][32];
};

static void read_links(const struct smi_api *api, nvmlDevice_t d, struct links *l)
{
	memset(l, 0, sizeof(*l));
	for (unsigned i = 0; i < MAX_LINKS; i++) {
		nvmlEnableState_t up;
		nvmlIntNvLinkDeviceType_t type;
		nvmlPciInfo_t pci;

		if (SMI(api, link_state, d, i, &up) != NVML_SUCCESS || up != NVML_FEATURE_ENABLED)
			continue;
		if (SMI(api, link_remote_type, d, i, &type) != NVML_SUCCESS)
			continue;
		if (type == NVML_NVLINK_DEVICE_TYPE_SWITCH)
			l->to_switch++;
		else if (type == NVML_NVLINK_DEVICE_TYPE_GPU &&
			 SMI(api, link_remote_pci, d, i, &pci) == NVML_SUCCESS)
			snprintf(l->peer[l->to_gpu++], sizeof(l->peer[0]), "%s", pci.busId);
	}
}

static const char *level_name(nvmlGpuTopologyLevel_t t)
{
	static const char *const level[] = { " X ", "PIX", "PXB", "PHB", "NODE", "SYS" };

	return t / 10 <= 5 ? level[t / 10] : "N/A";
}

/* The cell between GPUs a and b: NV<links> over NVLink (every link of both
 * to the same NVSwitch fabric counts, the fewer side's), else the PCIe
 * level. */
static void cell(const struct smi_api *api, const struct smi_gpu *a, const struct links *la,
		 const struct smi_gpu *b, const struct links *lb, const char *bbus, char *out,
		 size_t len)
{
	nvmlGpuTopologyLevel_t t;
	unsigned direct = 0;

	if (a->dev == b->dev) {
		snprintf(out, len, " X ");
		return;
	}
	for (unsigned i = 0; i < la->to_gpu; i++)
		direct += !strcmp(la->peer[i], bbus);
	if (direct || (la->to_switch && lb->to_switch)) {
		unsigned sw = la->to_switch < lb->to_switch ? la->to_switch : lb->to_switch;

		snprintf(out, len, "NV%u", direct + sw);
		return;
	}
	snprintf(out, len, "%s",
		 SMI(api, common_ancestor, a->dev, b->dev, &t) == NVML_SUCCESS ? level_name(t) : "N/A");
}

/* A CPU or node mask as nvidia-smi prints it: "0-55,112-167". */
static void ranges(const unsigned long *set, unsigned words, char *out, size_t len)
{
	const unsigned bits = 8 * sizeof(*set);
	size_t at = 0;

	out[0] = '\0';
	for (unsigned c = 0; c < words * bits;) {
		unsigned end;

		if (!(set[c / bits] >> (c % bits) & 1)) {
			c++;
			continue;
		}
		for (end = c; end + 1 < words * bits && set[(end + 1) / bits] >> ((end + 1) % bits) & 1;)
			end++;
		at += (size_t)snprintf(out + at, at < len ? len - at : 0, end > c ? "%s%u-%u" : "%s%u",
				       at ? "," : "", c, end);
		c = end + 1;
	}
	if (!out[0])
		snprintf(out, len, "N/A");
}

/* Where a PCI function sits: its sysfs path below /sys/devices and its
 * NUMA node (-1 when unknown). */
struct place {
	char path[PATH_MAX];
	int numa;
};

static void place_of(const char *bdf, struct place *p)
{
	char link[PATH_MAX], target[PATH_MAX], v[16] = "-1";
	const char *at;
	ssize_t n;
	FILE *f;

	p->path[0] = '\0';
	p->numa = -1;
	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", bdf);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return;
	target[n] = '\0';
	at = strstr(target, "devices/");
	snprintf(p->path, sizeof(p->path), "%s", at ? at + strlen("devices/") : target);
	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s/numa_node", bdf);
	if ((f = fopen(link, "r"))) {
		if (fgets(v, sizeof(v), f))
			p->numa = atoi(v);
		fclose(f);
	}
}

/* NVML's bus id ("00000008:06:00.0") as sysfs names it ("0008:06:00.0"). */
static void sysfs_bdf(const char *bus_id, char *out, size_t len)
{
	unsigned dom, bus, dev, fn;

	if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4)
		snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	else
		out[0] = '\0';
}

struct nic {
	char name[64];
	struct place at;
};

static int by_name(const void *a, const void *b)
{
	return strverscmp(((const struct nic *)a)->name, ((const struct nic *)b)->name);
}

/* The RDMA devices with a PCI function, in name order: nvidia-smi's NICs. */
static unsigned read_nics(struct nic *nics)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	unsigned n = 0;

	while (d && (e = readdir(d)) && n < MAX_NICS) {
		char link[PATH_MAX], target[PATH_MAX];
		const char *bdf;
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/sys/class/infiniband/%s/device", e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue; /* no PCI function (a software device) */
		target[len] = '\0';
		bdf = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
		snprintf(nics[n].name, sizeof(nics[n].name), "%s", e->d_name);
		place_of(bdf, &nics[n].at);
		n++;
	}
	if (d)
		closedir(d);
	qsort(nics, n, sizeof(*nics), by_name);
	return n;
}

/* The cell between two places, where either is a NIC. */
static const char *pci_cell(const struct place *a, const struct place *b)
{
	if (!a->path[0] || !b->path[0])
		return "N/A";
	return level_name(nvm_pci_level(a->path, a->numa, b->path, b->numa));
}

int smi_topo(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n)
{
	static struct links links[64];
	static struct nic nics[MAX_NICS];
	static struct place gplace[64];
	char bus[64][32], bdf[32];
	unsigned nnics = read_nics(nics);

	for (unsigned i = 0; i < n && i < 64; i++) {
		nvmlPciInfo_t pci;

		read_links(api, gpus[i].dev, &links[i]);
		snprintf(bus[i], sizeof(bus[i]), "%s",
			 SMI(api, pci, gpus[i].dev, &pci) == NVML_SUCCESS ? pci.busId : "");
		sysfs_bdf(bus[i], bdf, sizeof(bdf));
		place_of(bdf, &gplace[i]);
	}
	printf("\t\033[4m");
	for (unsigned i = 0; i < n; i++)
		printf("GPU%u\t", gpus[i].index);
	for (unsigned k = 0; k < nnics; k++)
		printf("NIC%u\t", k);
	printf("CPU Affinity\tNUMA Affinity\tGPU NUMA ID\033[0m\n");
	for (unsigned i = 0; i < n && i < 64; i++) {
		unsigned long cpus[4096 / 64], nodes[16];
		char cpu[1024], node[256], gpu_node[16] = "N/A";
		unsigned id;

		printf("GPU%u\t", gpus[i].index);
		for (unsigned j = 0; j < n && j < 64; j++) {
			char c[16];

			cell(api, &gpus[i], &links[i], &gpus[j], &links[j], bus[j], c, sizeof(c));
			printf("%s\t", c);
		}
		for (unsigned k = 0; k < nnics; k++)
			printf("%s\t", pci_cell(&gplace[i], &nics[k].at));
		if (SMI(api, cpu_affinity, gpus[i].dev, 4096 / 64, cpus) == NVML_SUCCESS)
			ranges(cpus, 4096 / 64, cpu, sizeof(cpu));
		else
			snprintf(cpu, sizeof(cpu), "N/A");
		if (SMI(api, memory_affinity, gpus[i].dev, 16, nodes, NVML_AFFINITY_SCOPE_NODE) ==
		    NVML_SUCCESS)
			ranges(nodes, 16, node, sizeof(node));
		else
			snprintf(node, sizeof(node), "N/A");
		if (SMI(api, gpu_numa, gpus[i].dev, &id) == NVML_SUCCESS)
			snprintf(gpu_node, sizeof(gpu_node), "%u", id);
		printf("%s\t%s\t\t%s\n", cpu, node, gpu_node);
	}
	/* A NIC's row leaves the affinity columns empty, as nvidia-smi's. */
	for (unsigned k = 0; k < nnics; k++) {
		printf("NIC%u\t", k);
		for (unsigned i = 0; i < n && i < 64; i++)
			printf("%s\t", pci_cell(&nics[k].at, &gplace[i]));
		for (unsigned l = 0; l < nnics; l++)
			printf("%s\t", l == k ? " X " : pci_cell(&nics[k].at, &nics[l].at));
		printf("\t\t\t\n");
	}
	printf("\nLegend:\n\n"
	       "  X    = Self\n"
	       "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
	       "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
	       "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
	       "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
	       "  PIX  = Connection traversing at most a single PCIe bridge\n"
	       "  NV#  = Connection traversing a bonded set of # NVLinks\n");
	if (nnics) {
		printf("\nNIC Legend:\n\n");
		for (unsigned k = 0; k < nnics; k++)
			printf("  NIC%u: %s\n", k, nics[k].name);
		printf("\n");
	}
	return 0;
}
