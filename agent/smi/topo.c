/* nvidia-smi topo -m: how each pair of GPUs is connected (the NVLinks
 * between them, else where they meet on PCIe), each GPU's CPU and NUMA
 * affinity, and its own NUMA id where its memory is a node. */
#include <stdio.h>
#include <string.h>

#include "smi/forms.h"

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

/* The cell between GPUs a and b: NV<links> over NVLink (every link of both
 * to the same NVSwitch fabric counts, the fewer side's), else the PCIe
 * level. */
static void cell(const struct smi_api *api, const struct smi_gpu *a, const struct links *la,
		 const struct smi_gpu *b, const struct links *lb, const char *bbus, char *out,
		 size_t len)
{
	static const char *const level[] = { [0] = " X ", [1] = "PIX", [2] = "PXB", [3] = "PHB",
					     [4] = "NODE", [5] = "SYS" };
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
	if (SMI(api, common_ancestor, a->dev, b->dev, &t) == NVML_SUCCESS && t / 10 <= 5)
		snprintf(out, len, "%s", level[t / 10]);
	else
		snprintf(out, len, "N/A");
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

int smi_topo(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n)
{
	static struct links links[64];
	char bus[64][32];

	for (unsigned i = 0; i < n && i < 64; i++) {
		nvmlPciInfo_t pci;

		read_links(api, gpus[i].dev, &links[i]);
		snprintf(bus[i], sizeof(bus[i]), "%s",
			 SMI(api, pci, gpus[i].dev, &pci) == NVML_SUCCESS ? pci.busId : "");
	}
	printf("\t\033[4m");
	for (unsigned i = 0; i < n; i++)
		printf("GPU%u\t", gpus[i].index);
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
	printf("\nLegend:\n\n"
	       "  X    = Self\n"
	       "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
	       "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
	       "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
	       "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
	       "  PIX  = Connection traversing at most a single PCIe bridge\n"
	       "  NV#  = Connection traversing a bonded set of # NVLinks\n");
	return 0;
}
