/* Where GPUs sit against each other and the CPUs: the PCIe level two GPUs
 * meet at (what nvidia-smi topo -m prints between them when no NVLink
 * joins them) and the NUMA node a GPU's memory traffic is local to. Both
 * come from the tree's sysfs, as the profile's pcie_topology rendered it. */
#include <string.h>

#include "internal.h"

/* The number of leading path components a and b share ("pci0000:00/..."). */
static unsigned shared_components(const char *a, const char *b)
{
	unsigned n = 0;

	for (;;) {
		size_t la = strcspn(a, "/"), lb = strcspn(b, "/");

		if (!la || la != lb || strncmp(a, b, la))
			return n;
		n++;
		if (!a[la] || !b[lb])
			return n;
		a += la + 1;
		b += lb + 1;
	}
}

API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
						     nvmlGpuTopologyLevel_t *level)
{
	unsigned shared;

	NEED_DEV(a);
	NEED_DEV(b);
	if (!level)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!a->pci_path[0] || !b->pci_path[0])
		return NVML_ERROR_NOT_SUPPORTED;
	if (a == b) {
		*level = NVML_TOPOLOGY_INTERNAL;
		return NVML_SUCCESS;
	}
	/* Components shared below the root complex are PCIe bridges both
	 * GPUs sit behind; none means they meet at the host bridge. */
	shared = shared_components(a->pci_path, b->pci_path);
	if (shared >= 3)
		*level = NVML_TOPOLOGY_MULTIPLE;
	else if (shared == 2)
		*level = NVML_TOPOLOGY_SINGLE;
	else if (shared == 1)
		*level = NVML_TOPOLOGY_HOSTBRIDGE;
	else if (a->numa_node >= 0 && a->numa_node == b->numa_node)
		*level = NVML_TOPOLOGY_NODE;
	else
		*level = NVML_TOPOLOGY_SYSTEM;
	return NVML_SUCCESS;
}

/* The NUMA node of the GPU's root complex, as a node mask. Node and socket
 * scope are the same here: the profiles have one node per socket. */
API nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t d, unsigned int size, unsigned long *set,
					     nvmlAffinityScope_t scope)
{
	const unsigned bits = 8 * sizeof(*set);

	NEED_DEV(d);
	if (!set || !size || scope > NVML_AFFINITY_SCOPE_SOCKET)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d->numa_node < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(set, 0, size * sizeof(*set));
	if ((unsigned)d->numa_node / bits < size)
		set[d->numa_node / bits] |= 1UL << (d->numa_node % bits);
	return NVML_SUCCESS;
}

/* Only where the GPU's memory is a NUMA node of its own (NVML: "platforms
 * where the GPUs are NUMA nodes"); no profile models one, so never. The
 * NUMA node a GPU is attached to is nvmlDeviceGetMemoryAffinity's. */
API nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
	NEED_DEV(d);
	if (!node)
		return NVML_ERROR_INVALID_ARGUMENT;
	return NVML_ERROR_NOT_SUPPORTED;
}
