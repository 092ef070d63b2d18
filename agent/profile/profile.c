/* Reads Mokka's profile schema:
 *   system: {driver_version, nvml_version, cuda_version, num_devices}
 *   device_defaults: {name, brand, architecture, ..., pci: {device_id, subsystem_id}}
 *   devices: [{index, uuid, minor_number, pci: {bus_id}, <any default key>}]
 *   pcie_topology: {cores_per_numa, root_complexes: [{id, numa_node, cpu_affinity, devices}]}
 * Keys it does not use (fabric, nvlink, mig, ...) are ignored, as Mokka's own
 * profiles carry many of them. */
#include "profile/profile.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/log.h"
#include "profile/yamldoc.h"

#define DEFAULT_CORES_PER_NUMA 64

/* A device key: its own value if it has one, else device_defaults'. */
struct devctx {
	struct ydoc *y;
	yaml_node_t *dev, *defaults;
	unsigned i;
};

static yaml_node_t *dev_key(struct devctx *c, const char *section,
			    const char *key, char *path, size_t plen)
{
	yaml_node_t *sources[2] = { c->dev, c->defaults };

	for (int s = 0; s < 2; s++) {
		yaml_node_t *n = sources[s];

		if (section)
			n = ydoc_get(c->y, n, section);
		n = ydoc_get(c->y, n, key);
		if (n) {
			if (s == 0)
				snprintf(path, plen, "devices[%u].%s%s%s", c->i,
					 section ? section : "", section ? "." : "", key);
			else
				snprintf(path, plen, "device_defaults.%s%s%s",
					 section ? section : "", section ? "." : "", key);
			return n;
		}
	}
	snprintf(path, plen, "devices[%u].%s%s%s", c->i, section ? section : "",
		 section ? "." : "", key);
	return NULL;
}

static int dev_str(struct devctx *c, const char *section, const char *key,
		   bool required, char *buf, size_t len, const char *dflt)
{
	char path[128];
	yaml_node_t *n = dev_key(c, section, key, path, sizeof(path));

	if (!n) {
		if (required)
			return ydoc_fail(c->y, c->dev, path, "missing (required)");
		snprintf(buf, len, "%s", dflt);
		return 0;
	}
	return ydoc_str(c->y, n, path, buf, len);
}

static int dev_uint(struct devctx *c, const char *section, const char *key,
		    uint64_t max, uint64_t dflt, bool required, uint64_t *out)
{
	char path[128];
	yaml_node_t *n = dev_key(c, section, key, path, sizeof(path));

	if (!n) {
		if (required)
			return ydoc_fail(c->y, c->dev, path, "missing (required)");
		*out = dflt;
		return 0;
	}
	return ydoc_uint(c->y, n, path, max, out);
}

/* DDDD:BB:DD.F in hex, any case; stored lower-case. Rejects anything else
 * (so no '/' or ".." can reach a path). */
static int parse_bus_id(const char *s, struct nvm_gpu *g)
{
	static const char form[] = "hhhh:hh:hh.h";
	unsigned d, b, dev, f;

	if (strlen(s) != sizeof(form) - 1)
		return -1;
	for (size_t i = 0; form[i]; i++) {
		if (form[i] == 'h' ? !isxdigit((unsigned char)s[i]) : s[i] != form[i])
			return -1;
	}
	if (sscanf(s, "%4x:%2x:%2x.%1x", &d, &b, &dev, &f) != 4 || dev > 0x1f || f > 7)
		return -1;
	g->domain = d, g->bus = b, g->device = dev, g->function = f;
	snprintf(g->bus_id, sizeof(g->bus_id), "%04x:%02x:%02x.%x", d, b, dev, f);
	return 0;
}

static bool valid_uuid(const char *s)
{
	static const char form[] = "GPU-hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh";

	if (strlen(s) != sizeof(form) - 1)
		return false;
	for (size_t i = 0; form[i]; i++)
		if (form[i] == 'h' ? !isxdigit((unsigned char)s[i]) : s[i] != form[i])
			return false;
	return true;
}

/* A stable UUID for a profile without one, derived from the bus id. */
static void derive_uuid(const struct nvm_gpu *g, char *buf, size_t len)
{
	uint64_t h = 1469598103934665603ULL, h2;

	for (const char *p = g->bus_id; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h2 = h * 0x9e3779b97f4a7c15ULL;
	snprintf(buf, len, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(h >> 32),
		 (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xffff,
		 (unsigned)(h2 >> 48), (unsigned long long)(h2 & 0xffffffffffffULL));
}

static int parse_device(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults,
			unsigned i, const char *driver, struct nvm_gpu *g)
{
	struct devctx c = { y, dev, defaults, i };
	char path[128], bus[32], mode[32];
	uint64_t v;
	yaml_node_t *n;

	memset(g, 0, sizeof(*g));
	g->line = (int)dev->start_mark.line + 1;
	g->col = (int)dev->start_mark.column + 1;
	g->root = -1;
	if (!ydoc_is_map(dev))
		return ydoc_fail(y, dev, "devices", "each device must be a mapping");
	if (dev_uint(&c, NULL, "index", NVM_MAX_GPUS - 1, i, false, &v))
		return -1;
	g->index = (unsigned)v;
	if (dev_str(&c, NULL, "name", true, g->name, sizeof(g->name), "") ||
	    dev_str(&c, NULL, "brand", false, g->brand, sizeof(g->brand), "NVIDIA") ||
	    dev_str(&c, NULL, "architecture", false, g->architecture,
		    sizeof(g->architecture), "") ||
	    dev_str(&c, NULL, "serial", false, g->serial, sizeof(g->serial), "") ||
	    dev_str(&c, NULL, "board_part_number", false, g->board_part_number,
		    sizeof(g->board_part_number), "") ||
	    dev_str(&c, NULL, "vbios_version", false, g->vbios_version,
		    sizeof(g->vbios_version), "96.00.00.00.01"))
		return -1;

	if (dev_str(&c, "pci", "bus_id", true, bus, sizeof(bus), ""))
		return -1;
	if (parse_bus_id(bus, g)) {
		n = dev_key(&c, "pci", "bus_id", path, sizeof(path));
		return ydoc_fail(y, n, path,
				 "\"%s\" is not a PCI address of the form DDDD:BB:DD.F (hex)", bus);
	}
	if (dev_uint(&c, NULL, "minor_number", UINT32_MAX, 0, true, &v))
		return -1;
	if (v > NVM_MAX_MINOR) {
		n = dev_key(&c, NULL, "minor_number", path, sizeof(path));
		return ydoc_fail(y, n, path, "%llu is outside 0..%d",
				 (unsigned long long)v, NVM_MAX_MINOR);
	}
	g->minor = (unsigned)v;

	n = dev_key(&c, NULL, "uuid", path, sizeof(path));
	if (n) {
		if (ydoc_str(y, n, path, g->uuid, sizeof(g->uuid)))
			return -1;
		if (!valid_uuid(g->uuid))
			return ydoc_fail(y, n, path,
					 "\"%s\" is not GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", g->uuid);
	} else {
		derive_uuid(g, g->uuid, sizeof(g->uuid));
	}

	/* (device << 16) | vendor, as Mokka writes them. */
	if (dev_uint(&c, "pci", "device_id", UINT32_MAX, 0, true, &v))
		return -1;
	g->device_id = (uint16_t)(v >> 16);
	g->vendor_id = (uint16_t)v;
	if (dev_uint(&c, "pci", "subsystem_id", UINT32_MAX,
		     ((uint64_t)g->device_id << 16) | g->vendor_id, false, &v))
		return -1;
	g->subsystem_device = (uint16_t)(v >> 16);
	g->subsystem_vendor = (uint16_t)v;
	if (dev_uint(&c, "pci", "class_code", 0xffffff, 0x030200, false, &v))
		return -1;
	g->class_code = (uint32_t)v;
	if (dev_uint(&c, "pci", "revision", 0xff, 0xa1, false, &v))
		return -1;
	g->revision = (uint8_t)v;
	if (dev_uint(&c, "pci", "link_width", 32, 16, false, &v))
		return -1;
	g->link_width = (unsigned)v;
	if (dev_str(&c, "pci", "link_speed", false, g->link_speed,
		    sizeof(g->link_speed), "32.0 GT/s PCIe"))
		return -1;

	if (dev_uint(&c, "compute_capability", "major", 99, 0, false, &v))
		return -1;
	g->cc_major = (unsigned)v;
	if (dev_uint(&c, "compute_capability", "minor", 99, 0, false, &v))
		return -1;
	g->cc_minor = (unsigned)v;
	if (dev_uint(&c, "memory", "total_bytes", UINT64_MAX, 0, false, &g->memory_total) ||
	    dev_uint(&c, "memory", "reserved_bytes", UINT64_MAX, 0, false,
		     &g->memory_reserved))
		return -1;
	if (dev_uint(&c, NULL, "irq", 1023, 0, false, &v))
		return -1;
	g->irq = v ? (unsigned)v : 150 + g->minor; /* plausible MSI vector */
	if (dev_uint(&c, NULL, "dma_bits", 64, 52, false, &v))
		return -1;
	g->dma_bits = (unsigned)v;

	/* GSP firmware line: only when the profile says firmware is in use. */
	if (dev_str(&c, "gsp_firmware", "mode", false, mode, sizeof(mode), "") ||
	    dev_str(&c, "gsp_firmware", "version", false, g->gsp_firmware,
		    sizeof(g->gsp_firmware), ""))
		return -1;
	if (!strcasecmp(mode, "disabled") || !strcasecmp(mode, "off"))
		g->gsp_firmware[0] = '\0';
	else if (!g->gsp_firmware[0] && mode[0])
		snprintf(g->gsp_firmware, sizeof(g->gsp_firmware), "%s", driver);
	return 0;
}

static int find_gpu(const struct nvm_model *m, const char *bus_id)
{
	for (unsigned i = 0; i < m->ngpus; i++)
		if (!strcmp(m->gpus[i].bus_id, bus_id))
			return (int)i;
	return -1;
}

static int parse_roots(struct ydoc *y, yaml_node_t *topo, unsigned ndevices_listed,
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
static void default_roots(struct nvm_model *m)
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

static int check_unique(struct ydoc *y, const struct nvm_model *m)
{
	for (unsigned i = 0; i < m->ngpus; i++) {
		for (unsigned j = 0; j < i; j++) {
			const struct nvm_gpu *a = &m->gpus[i], *b = &m->gpus[j];
			const char *what = !strcmp(a->bus_id, b->bus_id) ? "pci.bus_id"
					 : a->minor == b->minor		  ? "minor_number"
					 : !strcasecmp(a->uuid, b->uuid)	  ? "uuid"
					 : a->index == b->index		  ? "index"
									  : NULL;

			if (what)
				return nvm_err_r(-1, "%s:%d:%d: devices[%u].%s: same as devices[%u] (line %d)",
						 y->file, a->line, a->col, i, what, j, b->line);
		}
	}
	return 0;
}

static int parse_system(struct ydoc *y, yaml_node_t *sys, struct nvm_model *m,
			uint64_t *num_devices)
{
	yaml_node_t *n;
	uint64_t major = 0, minor = 0;

	if (!sys)
		return ydoc_fail(y, ydoc_root(y), "system", "missing (required)");
	if (!ydoc_is_map(sys))
		return ydoc_fail(y, sys, "system", "expected a mapping");
	n = ydoc_get(y, sys, "driver_version");
	if (!n)
		return ydoc_fail(y, sys, "system.driver_version", "missing (required)");
	if (ydoc_str(y, n, "system.driver_version", m->driver_version, sizeof(m->driver_version)))
		return -1;
	if (strspn(m->driver_version, "0123456789.") != strlen(m->driver_version) ||
	    !isdigit((unsigned char)m->driver_version[0]))
		return ydoc_fail(y, n, "system.driver_version",
				 "\"%s\" is not a version like 570.124.06", m->driver_version);
	n = ydoc_get(y, sys, "nvml_version");
	snprintf(m->nvml_version, sizeof(m->nvml_version), "12.%s", m->driver_version);
	if (n && ydoc_str(y, n, "system.nvml_version", m->nvml_version, sizeof(m->nvml_version)))
		return -1;
	if ((n = ydoc_get(y, sys, "cuda_version_major")) &&
	    ydoc_uint(y, n, "system.cuda_version_major", 99, &major))
		return -1;
	if ((n = ydoc_get(y, sys, "cuda_version_minor")) &&
	    ydoc_uint(y, n, "system.cuda_version_minor", 99, &minor))
		return -1;
	snprintf(m->cuda_version, sizeof(m->cuda_version), "%u.%u", (unsigned)major,
		 (unsigned)minor);
	n = ydoc_get(y, sys, "cuda_version");
	if (n && ydoc_str(y, n, "system.cuda_version", m->cuda_version, sizeof(m->cuda_version)))
		return -1;
	*num_devices = 0;
	n = ydoc_get(y, sys, "num_devices");
	if (n && ydoc_uint(y, n, "system.num_devices", NVM_MAX_GPUS, num_devices))
		return -1;
	return 0;
}

int profile_parse(const char *file, const char *text, size_t len, unsigned gpus,
		  struct nvm_model *m)
{
	struct ydoc y;
	yaml_node_t *root, *devices, *defaults, *topo, *ext;
	uint64_t num_devices;
	size_t listed;
	int ret = -1;

	memset(m, 0, sizeof(*m));
	snprintf(m->profile_path, sizeof(m->profile_path), "%s", file);
	if (len > NVM_PROFILE_MAX_BYTES)
		return nvm_err_r(-1, "%s: %zu bytes is over the 1 MiB profile limit", file, len);
	if (memchr(text, '\0', len))
		return nvm_err_r(-1, "%s: not a text file (has a NUL byte)", file);
	if (ydoc_load(&y, file, text, len))
		goto out;
	root = ydoc_root(&y);
	if (!ydoc_is_map(root)) {
		ydoc_fail(&y, root, "(document)", "expected a mapping at the top");
		goto out;
	}
	if (parse_system(&y, ydoc_get(&y, root, "system"), m, &num_devices))
		goto out;

	{
		struct utsname u;

		uname(&u);
		snprintf(m->module_arch, sizeof(m->module_arch), "%s", u.machine);
	}
	/* nvmirage's own keys live under "nvmirage:", which Mokka ignores. */
	ext = ydoc_get(&y, root, "nvmirage");
	if (ext) {
		yaml_node_t *n = ydoc_get(&y, ext, "module_arch");

		if (n && ydoc_str(&y, n, "nvmirage.module_arch", m->module_arch,
				  sizeof(m->module_arch)))
			goto out;
	}

	defaults = ydoc_get(&y, root, "device_defaults");
	if (defaults && !ydoc_is_map(defaults)) {
		ydoc_fail(&y, defaults, "device_defaults", "expected a mapping");
		goto out;
	}
	devices = ydoc_get(&y, root, "devices");
	if (!devices) {
		ydoc_fail(&y, root, "devices", "missing (required)");
		goto out;
	}
	if (!ydoc_is_seq(devices)) {
		ydoc_fail(&y, devices, "devices", "expected a list");
		goto out;
	}
	listed = ydoc_seq_len(devices);
	if (listed == 0) {
		ydoc_fail(&y, devices, "devices", "the list is empty");
		goto out;
	}
	if (listed > NVM_MAX_GPUS) {
		ydoc_fail(&y, devices, "devices", "%zu devices; at most %d are supported",
			  listed, NVM_MAX_GPUS);
		goto out;
	}
	m->ngpus = (unsigned)listed;
	if (num_devices) {
		if (num_devices > listed) {
			ydoc_fail(&y, ydoc_get(&y, ydoc_get(&y, root, "system"), "num_devices"),
				  "system.num_devices", "%llu, but only %zu devices are listed",
				  (unsigned long long)num_devices, listed);
			goto out;
		}
		m->ngpus = (unsigned)num_devices;
	}
	if (gpus) {
		if (gpus > m->ngpus) {
			nvm_err("%s: --gpus %u, but the profile has %u devices", file, gpus, m->ngpus);
			goto out;
		}
		m->ngpus = gpus;
	}
	for (unsigned i = 0; i < m->ngpus; i++)
		if (parse_device(&y, ydoc_seq_at(&y, devices, i), defaults, i,
				 m->driver_version, &m->gpus[i]))
			goto out;
	if (check_unique(&y, m))
		goto out;
	topo = ydoc_get(&y, root, "pcie_topology");
	if (topo) {
		if (parse_roots(&y, topo, (unsigned)listed, m))
			goto out;
	} else {
		default_roots(m);
	}
	ret = 0;
out:
	ydoc_free(&y);
	return ret;
}

static bool file_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int profile_resolve(const char *name, char *path, size_t len)
{
	char exe[PATH_MAX], *slash;
	const char *env = getenv("NVMIRAGE_PROFILES");
	ssize_t n;
	size_t nl = strlen(name);

	if (strchr(name, '/') || (nl > 5 && !strcmp(name + nl - 5, ".yaml"))) {
		snprintf(path, len, "%s", name);
		if (!file_exists(path))
			return nvm_err_r(-1, "%s: no such profile file", name);
		return 0;
	}
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return nvm_err_r(-1, "\"%s\" is not a profile name (letters, digits, - and _)", name);
	if (env && (snprintf(path, len, "%s/%s.yaml", env, name), file_exists(path)))
		return 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			/* build/nvmirage -> profiles/ in the checkout */
			if (snprintf(path, len, "%s/../profiles/%s.yaml", exe, name),
			    file_exists(path))
				return 0;
			/* /usr/bin/nvmirage -> /usr/share/nvmirage/profiles */
			if (snprintf(path, len, "%s/../share/nvmirage/profiles/%s.yaml", exe, name),
			    file_exists(path))
				return 0;
		}
	}
	if (snprintf(path, len, "/usr/share/nvmirage/profiles/%s.yaml", name), file_exists(path))
		return 0;
	return nvm_err_r(-1, "no profile named \"%s\" (looked in $NVMIRAGE_PROFILES, the "
			     "profiles/ folder next to the binary and /usr/share/nvmirage/profiles)",
			 name);
}

int profile_load(const char *name, unsigned gpus, struct nvm_model *m)
{
	char path[PATH_MAX];
	struct stat st;
	char *text;
	FILE *f;
	size_t got;
	int ret;

	if (profile_resolve(name, path, sizeof(path)))
		return -1;
	f = fopen(path, "rb");
	if (!f)
		return nvm_err_r(-1, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || st.st_size > NVM_PROFILE_MAX_BYTES) {
		fclose(f);
		return nvm_err_r(-1, "%s: %lld bytes is over the 1 MiB profile limit", path,
				 (long long)st.st_size);
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		fclose(f);
		return nvm_err_r(-1, "out of memory");
	}
	got = fread(text, 1, (size_t)st.st_size, f);
	fclose(f);
	text[got] = '\0';
	ret = profile_parse(path, text, got, gpus, m);
	free(text);
	return ret;
}
