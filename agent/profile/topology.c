/* pcie_topology: the root complexes, their NUMA nodes and CPU affinity,
 * and which devices sit under each. */
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "profile/profile_int.h"

#define DEFAULT_CORES_PER_NUMA 64

static int find_gpu(const struct nvm_model *m, const char *bus_id)
{
	for (unsigned i = 0; i < m->ngpus; i++)
		if (!strcmp(m->gpus[i].bus_id, bus_id))
			return (int)i;
	return -1;
}

int parse_roots(struct ydoc *y, yaml_node_t *topo, unsigned ndevices_listed,
		       struct nvm_model *m)
{
	yaml_node_t *rcs = ydoc_get(y, topo, "root_complexes");
	uint64_t cores_per_numa = DEFAULT_CORES_PER_NUMA;
	yaml_node_t *n = ydoc_get(y, topo, "cores_per_numa");
	char path[128];

	if (!ydoc_is_map(topo))
		return ydoc_fail(y, topo, "pcie_topology", "expected a mapping");
	if (n && ydoc_uint(y, n, "pcie_topology.cores_per_numa", 1024, &cores_per_numa))
		return -1;
	if (!cores_per_numa)
		return ydoc_fail(y, n, "pcie_topology.cores_per_numa", "must be at least 1");
	if (!rcs)
		return ydoc_fail(y, topo, "pcie_topology.root_complexes", "missing (required)");
	if (!ydoc_is_seq(rcs))
		return ydoc_fail(y, rcs, "pcie_topology.root_complexes", "expected a list");
	if (ydoc_seq_len(rcs) > NVM_MAX_ROOTS)
		return ydoc_fail(y, rcs, "pcie_topology.root_complexes",
				 "more than %d root complexes", NVM_MAX_ROOTS);

	for (size_t r = 0; r < ydoc_seq_len(rcs); r++) {
		yaml_node_t *rc = ydoc_seq_at(y, rcs, r), *devs;
		struct nvm_root *root = &m->roots[m->nroots];
		unsigned dom, bus;
		int64_t numa = 0;
		char tail;

		snprintf(path, sizeof(path), "pcie_topology.root_complexes[%zu]", r);
		if (!ydoc_is_map(rc))
			return ydoc_fail(y, rc, path, "expected a mapping");
		memset(root, 0, sizeof(*root));
		n = ydoc_get(y, rc, "id");
		snprintf(path, sizeof(path), "pcie_topology.root_complexes[%zu].id", r);
		if (!n)
			return ydoc_fail(y, rc, path, "missing (required)");
		if (ydoc_str(y, n, path, root->id, sizeof(root->id)))
			return -1;
		if (strlen(root->id) != 10 ||
		    sscanf(root->id, "pci%4x:%2x%c", &dom, &bus, &tail) != 2 ||
		    strspn(root->id + 3, "0123456789abcdefABCDEF:") != 7 || root->id[7] != ':')
			return ydoc_fail(y, n, path, "\"%s\" is not of the form pciDDDD:BB", root->id);
		snprintf(root->id, sizeof(root->id), "pci%04x:%02x", dom, bus);
		for (unsigned k = 0; k < m->nroots; k++)
			if (!strcmp(m->roots[k].id, root->id))
				return ydoc_fail(y, n, path, "%s is listed twice", root->id);

		n = ydoc_get(y, rc, "numa_node");
		snprintf(path, sizeof(path), "pcie_topology.root_complexes[%zu].numa_node", r);
		if (n && ydoc_int(y, n, path, -1, 1023, &numa))
			return -1;
		root->numa_node = (int)numa;

		n = ydoc_get(y, rc, "cpu_affinity");
		snprintf(path, sizeof(path), "pcie_topology.root_complexes[%zu].cpu_affinity", r);
		if (n) {
			char list[1024];
			const char *why;

			if (ydoc_str(y, n, path, list, sizeof(list)))
				return -1;
			if (cpuset_parse_list(&root->cpus, list, &why))
				return ydoc_fail(y, n, path, "\"%s\": %s", list, why);
		} else {
			unsigned first = (unsigned)(numa < 0 ? 0 : numa) * (unsigned)cores_per_numa;

			if (first + cores_per_numa > NVM_MAX_CPUS)
				return ydoc_fail(y, rc, path, "derived CPU range exceeds %d CPUs",
						 NVM_MAX_CPUS);
			cpuset_range(&root->cpus, first, first + (unsigned)cores_per_numa - 1);
		}

		devs = ydoc_get(y, rc, "devices");
		snprintf(path, sizeof(path), "pcie_topology.root_complexes[%zu].devices", r);
		if (devs && !ydoc_is_seq(devs))
			return ydoc_fail(y, devs, path, "expected a list of bus ids");
		for (size_t d = 0; d < ydoc_seq_len(devs); d++) {
			yaml_node_t *dn = ydoc_seq_at(y, devs, d);
			struct nvm_gpu probe;
			char bus_id[32];
			int gi;

			snprintf(path, sizeof(path), "pcie_topology.root_complexes[%zu].devices[%zu]", r, d);
			if (ydoc_str(y, dn, path, bus_id, sizeof(bus_id)))
				return -1;
			if (parse_bus_id(bus_id, &probe))
				return ydoc_fail(y, dn, path,
						 "\"%s\" is not a PCI address of the form DDDD:BB:DD.F", bus_id);
			gi = find_gpu(m, probe.bus_id);
			if (gi < 0) {
				/* Devices cut by num_devices or --gpus are not an error. */
				if (ndevices_listed > m->ngpus)
					continue;
				return ydoc_fail(y, dn, path, "%s is not one of the devices", bus_id);
			}
			if (m->gpus[gi].root >= 0)
				return ydoc_fail(y, dn, path, "%s is already in %s", bus_id,
						 m->roots[m->gpus[gi].root].id);
			m->gpus[gi].root = (int)m->nroots;
		}
		m->nroots++;
	}
	for (unsigned i = 0; i < m->ngpus; i++)
		if (m->gpus[i].root < 0)
			return nvm_err_r(-1, "%s:%d:%d: devices[%u].pci.bus_id: %s is in no root complex of pcie_topology",
					 y->file, m->gpus[i].line, m->gpus[i].col, i, m->gpus[i].bus_id);
	return 0;
}

/* Without pcie_topology, Mokka puts every device under pci0000:00, NUMA 0. */
void default_roots(struct nvm_model *m)
{
	struct nvm_root *r = &m->roots[0];

	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "pci0000:00");
	r->numa_node = 0;
	cpuset_range(&r->cpus, 0, DEFAULT_CORES_PER_NUMA - 1);
	m->nroots = 1;
	for (unsigned i = 0; i < m->ngpus; i++)
		m->gpus[i].root = 0;
}

