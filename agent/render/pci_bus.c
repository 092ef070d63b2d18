/* The PCI buses of the profile's devices, where sysfs lists them:
 * /sys/devices/<root>/pci_bus/<domain:bus>/ and a /sys/class/pci_bus link
 * to each, beside the host's own. NCCL finds a device's PCI path as
 * realpath("/sys/class/pci_bus/DDDD:BB/../../DDDD:BB:DD.F"), so every bus a
 * GPU or an HCA sits on must be there, under its root complex. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lib/fsutil.h"
#include "render/render.h"

/* A bus of the profile's: "0008:06", on root complex root. */
struct bus {
	char name[8];
	int root;
};

static unsigned add_bus(struct bus *buses, unsigned n, unsigned domain, unsigned bus, int root)
{
	char name[16];

	snprintf(name, sizeof(name), "%04x:%02x", domain, bus);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(buses[i].name, name))
			return n;
	snprintf(buses[n].name, sizeof(buses[n].name), "%s", name);
	buses[n].root = root;
	return n + 1;
}

int render_pci_buses(const struct nvm_model *m, const char *host, const char *tree)
{
	static struct bus buses[NVM_MAX_GPUS + NVM_MAX_HCAS];
	char dir[PATH_MAX], real[128], target[128];
	unsigned n = 0;

	for (unsigned i = 0; i < m->ngpus; i++)
		n = add_bus(buses, n, m->gpus[i].domain, m->gpus[i].bus, m->gpus[i].root);
	for (unsigned i = 0; i < m->ib.nhcas; i++)
		n = add_bus(buses, n, m->ib.hcas[i].domain, m->ib.hcas[i].bus,
			    m->gpus[m->ib.hcas[i].gpu].root);
	snprintf(dir, sizeof(dir), "%s/sys/class/pci_bus", tree);
	if (fs_mkdirs(dir))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		const char *rc = m->roots[buses[i].root].id;

		snprintf(dir, sizeof(dir), "%s/sys/devices/%s/pci_bus/%s", tree, rc, buses[i].name);
		if (fs_mkdirs(dir))
			return -1;
		snprintf(target, sizeof(target), "../../devices/%s/pci_bus/%s", rc, buses[i].name);
		snprintf(dir, sizeof(dir), "%s/sys/class/pci_bus", tree);
		if (fs_symlink(target, dir, buses[i].name))
			return -1;
	}
	/* The host's buses stay visible, in both places. */
	for (unsigned r = 0; r < m->nroots; r++) {
		snprintf(dir, sizeof(dir), "%s/sys/devices/%s/pci_bus", tree, m->roots[r].id);
		snprintf(real, sizeof(real), "/sys/devices/%s/pci_bus", m->roots[r].id);
		if (fs_mkdirs(dir) || render_mirror_host_dir(m, host, real, dir))
			return -1;
	}
	snprintf(dir, sizeof(dir), "%s/sys/class/pci_bus", tree);
	return render_mirror_host_dir(m, host, "/sys/class/pci_bus", dir);
}
