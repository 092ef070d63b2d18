/* Where GPUs sit against each other and the CPUs: the PCIe level two GPUs
 * meet at (what nvidia-smi topo -m prints between them when no NVLink
 * joins them) and the NUMA node a GPU's memory traffic is local to. Both
 * come from the tree's sysfs, as the profile's pcie_topology rendered it. */
#include <string.h>

#include "internal.h"
#include "pci_level.h"

API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
						     nvmlGpuTopologyLevel_t *level)
{
	NEED_DEV(a);
	NEED_DEV(b);
	if (!level)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!a->pci_path[0] || !b->pci_path[0])
		return NVML_ERROR_NOT_SUPPORTED;
	*level = a == b ? NVML_TOPOLOGY_INTERNAL
			: nvm_pci_level(a->pci_path, a->numa_node, b->pci_path, b->numa_node);
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
