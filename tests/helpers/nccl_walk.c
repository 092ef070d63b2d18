/* nccl_walk: finds each RDMA device's PCI place the way NCCL's topology
 * discovery does (src/transport/net_ib, src/graph/xml.cc), and prints it:
 *
 *   realpath(/sys/class/infiniband/<dev>/device), function forced to 0;
 *   realpath(<that>/subsystem) must end in "pci"; the bus id is the last
 *   component; realpath(/sys/class/pci_bus/DDDD:BB/../../<bus id>) must be
 *   the same place; then class, vendor, device, max_link_speed,
 *   max_link_width and numa_node of the function, and the root complex
 *   (the first path component after devices/).
 *
 * One line per device:
 *   mlx5_0 0008:07:00.0 root=pci0008:00 class=0x020700 vendor=0x15b3
 *   device=0x1021 speed=32.0 GT/s PCIe width=16 numa=0 pci_bus=same
 * or "mlx5_0 FAIL: why". Exit 1 if any failed or none was found. */
#define _GNU_SOURCE /* versionsort */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void attr(const char *dir, const char *name, char *out, size_t len)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(out, len, "?");
	if (!(f = fopen(path, "r")))
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

static int walk(const char *dev)
{
	char path[PATH_MAX], pci[PATH_MAX], sub[PATH_MAX], again[PATH_MAX], bus[16];
	char cls[32], vendor[32], device[32], speed[64], width[16], numa[16], root[64] = "?";
	const char *bdf, *at;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", dev);
	if (!realpath(path, pci))
		return printf("%s FAIL: realpath of its device link\n", dev), 1;
	pci[strlen(pci) - 1] = '0'; /* NCCL merges the functions of one card */
	snprintf(path, sizeof(path), "%s/subsystem", pci);
	if (!realpath(path, sub) || strcmp(strrchr(sub, '/') + 1, "pci"))
		return printf("%s FAIL: %s/subsystem is not the pci bus\n", dev, pci), 1;
	bdf = strrchr(pci, '/') + 1;
	snprintf(bus, sizeof(bus), "%.7s", bdf);
	snprintf(path, sizeof(path), "/sys/class/pci_bus/%s/../../%s", bus, bdf);
	if (!realpath(path, again) || strcmp(again, pci))
		return printf("%s FAIL: /sys/class/pci_bus/%s/../../%s is not %s\n", dev, bus, bdf,
			      pci), 1;
	if ((at = strstr(pci, "/devices/")))
		snprintf(root, sizeof(root), "%.*s", (int)strcspn(at + 9, "/"), at + 9);
	attr(pci, "class", cls, sizeof(cls));
	attr(pci, "vendor", vendor, sizeof(vendor));
	attr(pci, "device", device, sizeof(device));
	attr(pci, "max_link_speed", speed, sizeof(speed));
	attr(pci, "max_link_width", width, sizeof(width));
	attr(pci, "numa_node", numa, sizeof(numa));
	printf("%s %s root=%s class=%s vendor=%s device=%s speed=%s width=%s numa=%s pci_bus=same\n",
	       dev, bdf, root, cls, vendor, device, speed, width, numa);
	return 0;
}

int main(void)
{
	struct dirent **names;
	int n = scandir("/sys/class/infiniband", &names, NULL, versionsort), bad = 0;

	if (n <= 0) {
		printf("no RDMA devices in /sys/class/infiniband\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.')
			bad |= walk(names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return bad;
}
