/* Where two PCI devices meet, as NVML's topology levels name it, from
 * their sysfs paths below /sys/devices ("pci0000:00/0000:18:00.0", root
 * complex first) and their NUMA nodes. Shared by nvmirage's NVML and its
 * nvidia-smi look-alike (which places the NICs with it). */
#ifndef NVM_PCI_LEVEL_H
#define NVM_PCI_LEVEL_H

#include <string.h>

#include "nvml.h"

/* The number of leading path components a and b share. */
static inline unsigned nvm_pci_shared(const char *a, const char *b)
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

/* Components shared below the root complex are PCIe bridges both devices
 * sit behind; none means they meet at the host bridge; no shared root
 * means across root complexes, of one NUMA node or not. */
static inline nvmlGpuTopologyLevel_t nvm_pci_level(const char *a, int numa_a, const char *b,
						   int numa_b)
{
	unsigned shared = nvm_pci_shared(a, b);

	if (!strcmp(a, b))
		return NVML_TOPOLOGY_INTERNAL;
	if (shared >= 3)
		return NVML_TOPOLOGY_MULTIPLE;
	if (shared == 2)
		return NVML_TOPOLOGY_SINGLE;
	if (shared == 1)
		return NVML_TOPOLOGY_HOSTBRIDGE;
	return numa_a >= 0 && numa_a == numa_b ? NVML_TOPOLOGY_NODE : NVML_TOPOLOGY_SYSTEM;
}

#endif
