/* Reads Mokka's profile schema:
 *   system: {driver_version, nvml_version, cuda_version, num_devices}
 *   device_defaults: {name, brand, architecture, ..., pci: {device_id, subsystem_id}}
 *   devices: [{index, uuid, minor_number, pci: {bus_id}, <any default key>}]
 *   pcie_topology: {cores_per_numa, root_complexes: [{id, numa_node, cpu_affinity, devices}]}
 *   nvlink: {version, links_per_gpu, switch_support, switches, peers}
 *   infiniband: {enabled, hca_type, fw_version, ..., hcas_per_gpu} (infiniband.c)
 *   devices[i].mig, device_defaults.mig: {mode_current, gpu_instances} (mig.c)
 *   devices[i].failure, device_defaults.failure: {mode, xid} (fault.c)
 * Keys it does not use (fabric, ...) are ignored, as Mokka's own
 * profiles carry many of them. */
#include "profile/profile.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "profile/profile_int.h"

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

/* nvmirage's own keys live under "nvmirage:", which Mokka ignores. */
static int parse_extensions(struct ydoc *y, yaml_node_t *root, struct nvm_model *m)
{
	yaml_node_t *ext = ydoc_get(y, root, "nvmirage"), *n;
	struct utsname u;

	uname(&u);
	snprintf(m->module_arch, sizeof(m->module_arch), "%s", u.machine);
	n = ext ? ydoc_get(y, ext, "module_arch") : NULL;
	if (n && ydoc_str(y, n, "nvmirage.module_arch", m->module_arch, sizeof(m->module_arch)))
		return -1;
	return 0;
}

/* The devices list, and how many of it count: all, or system.num_devices,
 * or --gpus (gpus > 0) of those. Sets m->ngpus and *listed. */
static int count_devices(struct ydoc *y, yaml_node_t *root, yaml_node_t *devices,
			 uint64_t num_devices, unsigned gpus, size_t *listed, struct nvm_model *m)
{
	if (!devices)
		return ydoc_fail(y, root, "devices", "missing (required)");
	if (!ydoc_is_seq(devices))
		return ydoc_fail(y, devices, "devices", "expected a list");
	*listed = ydoc_seq_len(devices);
	if (*listed == 0)
		return ydoc_fail(y, devices, "devices", "the list is empty");
	if (*listed > NVM_MAX_GPUS)
		return ydoc_fail(y, devices, "devices", "%zu devices; at most %d are supported",
				 *listed, NVM_MAX_GPUS);
	m->ngpus = (unsigned)*listed;
	if (num_devices) {
		if (num_devices > *listed)
			return ydoc_fail(y, ydoc_get(y, ydoc_get(y, root, "system"), "num_devices"),
					 "system.num_devices", "%llu, but only %zu devices are listed",
					 (unsigned long long)num_devices, *listed);
		m->ngpus = (unsigned)num_devices;
	}
	if (gpus) {
		if (gpus > m->ngpus)
			return nvm_err_r(-1, "%s: --gpus %u, but the profile has %u devices", y->file,
					 gpus, m->ngpus);
		m->ngpus = gpus;
	}
	return 0;
}

/* The document's top level, into m (which the caller cleared). */
static int parse_document(struct ydoc *y, unsigned gpus, struct nvm_model *m)
{
	yaml_node_t *root = ydoc_root(y), *devices, *defaults, *topo;
	uint64_t num_devices;
	size_t listed = 0;

	if (!ydoc_is_map(root))
		return ydoc_fail(y, root, "(document)", "expected a mapping at the top");
	if (parse_system(y, ydoc_get(y, root, "system"), m, &num_devices) ||
	    parse_extensions(y, root, m))
		return -1;
	defaults = ydoc_get(y, root, "device_defaults");
	if (defaults && !ydoc_is_map(defaults))
		return ydoc_fail(y, defaults, "device_defaults", "expected a mapping");
	devices = ydoc_get(y, root, "devices");
	if (count_devices(y, root, devices, num_devices, gpus, &listed, m))
		return -1;
	for (unsigned i = 0; i < m->ngpus; i++)
		if (parse_device(y, ydoc_seq_at(y, devices, i), defaults, i, m->driver_version,
				 &m->gpus[i]) ||
		    parse_mig(y, ydoc_seq_at(y, devices, i), defaults, i, &m->gpus[i]) ||
		    parse_failure(y, ydoc_seq_at(y, devices, i), defaults, m, i) ||
		    parse_telemetry(y, ydoc_seq_at(y, devices, i), defaults, m, i))
			return -1;
	if (check_unique(y, m) || parse_nvlink(y, ydoc_get(y, root, "nvlink"), m))
		return -1;
	topo = ydoc_get(y, root, "pcie_topology");
	if (!topo)
		default_roots(m);
	else if (parse_roots(y, topo, (unsigned)listed, m))
		return -1;
	return parse_infiniband(y, ydoc_get(y, root, "infiniband"), m);
}

int profile_parse(const char *file, const char *text, size_t len, unsigned gpus,
		  struct nvm_model *m)
{
	struct ydoc y;
	int ret;

	memset(m, 0, sizeof(*m));
	snprintf(m->profile_path, sizeof(m->profile_path), "%s", file);
	if (len > NVM_PROFILE_MAX_BYTES)
		return nvm_err_r(-1, "%s: %zu bytes is over the 1 MiB profile limit", file, len);
	if (memchr(text, '\0', len))
		return nvm_err_r(-1, "%s: not a text file (has a NUL byte)", file);
	if (ydoc_load(&y, file, text, len))
		return -1;
	ret = parse_document(&y, gpus, m);
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
	char exe[PATH_MAX];
	const char *env = getenv("NVMIRAGE_PROFILES");
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
	if (!fs_exe_dir(exe, sizeof(exe))) {
		/* build/nvmirage -> profiles/ in the checkout */
		if (snprintf(path, len, "%s/../profiles/%s.yaml", exe, name), file_exists(path))
			return 0;
		/* /usr/bin/nvmirage -> /usr/share/nvmirage/profiles */
		if (snprintf(path, len, "%s/../share/nvmirage/profiles/%s.yaml", exe, name),
		    file_exists(path))
			return 0;
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
