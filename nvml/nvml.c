/* nvmirage's libnvidia-ml.so.1: an NVML that reports exactly the GPUs the
 * calling process sees in /proc/driver/nvidia. The GPUs are the entries of
 * /proc/driver/nvidia/gpus, with the values of their information files and
 * PCI sysfs attributes; what no driver file carries (memory, architecture,
 * serial, ...) comes from /sys/module/nvidia/nvmirage, which the tree
 * provides under the same redirect. A process outside the target cgroups
 * sees no driver and gets NVML_ERROR_DRIVER_NOT_LOADED from nvmlInit. */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "nvml.h"

#define API __attribute__((visibility("default")))
#define MAX_GPUS 64

struct nvmlDevice_st {
	unsigned minor;
	char bus_id[16]; /* 0008:06:00.0 */
	unsigned domain, bus, dev, fn;
	char name[96], uuid[48], vbios[32], serial[32], part[80], arch[32], brand[32];
	unsigned vendor, device, sub_vendor, sub_device;
	unsigned long long mem_total, mem_reserved;
	unsigned cc_major, cc_minor;
	int numa_node;
	unsigned char cpus[4096 / 8];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int refcount;
static unsigned ndev;
static struct nvmlDevice_st devs[MAX_GPUS];
static char driver_version[48], nvml_version[64], cuda_version[16];

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

static void chomp(char *s)
{
	s[strcspn(s, "\n")] = '\0';
}

/* "Key:<whitespace>value" lines of an information file. */
static void info_value(const char *text, const char *key, char *out, size_t len)
{
	const char *p = strstr(text, key);

	out[0] = '\0';
	if (!p)
		return;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
}

/* "key=value" lines of the nvmirage extras. */
static void extra_value(const char *text, const char *key, char *out, size_t len)
{
	char want[64];
	const char *p = text;

	out[0] = '\0';
	snprintf(want, sizeof(want), "%s=", key);
	while (p && *p) {
		if (!strncmp(p, want, strlen(want))) {
			p += strlen(want);
			snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
			return;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

static unsigned sysfs_hex(const char *bdf, const char *attr)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, attr);
	return read_text(path, buf, sizeof(buf)) ? 0 : (unsigned)strtoul(buf, NULL, 16);
}

static void read_cpus(struct nvmlDevice_st *d)
{
	char path[256], buf[4096], *p;

	memset(d->cpus, 0, sizeof(d->cpus));
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/nvidia/%s/local_cpulist", d->bus_id);
	if (read_text(path, buf, sizeof(buf)))
		return;
	for (p = buf; *p && *p != '\n';) {
		unsigned long a = strtoul(p, &p, 10), b = a;

		if (*p == '-')
			b = strtoul(p + 1, &p, 10);
		for (unsigned long c = a; c <= b && c < 4096; c++)
			d->cpus[c / 8] |= (unsigned char)(1u << (c % 8));
		if (*p == ',')
			p++;
		else
			break;
	}
}

static int load_device(const char *bdf, struct nvmlDevice_st *d)
{
	char path[256], text[4096], extra[4096], v[128];

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", bdf);
	if (read_text(path, text, sizeof(text)))
		return -1;
	snprintf(d->bus_id, sizeof(d->bus_id), "%s", bdf);
	if (sscanf(bdf, "%x:%x:%x.%x", &d->domain, &d->bus, &d->dev, &d->fn) != 4)
		return -1;
	info_value(text, "Model:", d->name, sizeof(d->name));
	info_value(text, "GPU UUID:", d->uuid, sizeof(d->uuid));
	info_value(text, "Video BIOS:", d->vbios, sizeof(d->vbios));
	info_value(text, "Device Minor:", v, sizeof(v));
	d->minor = (unsigned)strtoul(v, NULL, 10);
	d->vendor = sysfs_hex(bdf, "vendor");
	d->device = sysfs_hex(bdf, "device");
	d->sub_vendor = sysfs_hex(bdf, "subsystem_vendor");
	d->sub_device = sysfs_hex(bdf, "subsystem_device");
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bdf);
	d->numa_node = read_text(path, v, sizeof(v)) ? -1 : atoi(v);
	read_cpus(d);

	snprintf(path, sizeof(path), "/sys/module/nvidia/nvmirage/%s", bdf);
	if (read_text(path, extra, sizeof(extra)))
		extra[0] = '\0';
	extra_value(extra, "serial", d->serial, sizeof(d->serial));
	extra_value(extra, "board_part_number", d->part, sizeof(d->part));
	extra_value(extra, "architecture", d->arch, sizeof(d->arch));
	extra_value(extra, "brand", d->brand, sizeof(d->brand));
	extra_value(extra, "memory_total", v, sizeof(v));
	d->mem_total = strtoull(v, NULL, 10);
	extra_value(extra, "memory_reserved", v, sizeof(v));
	d->mem_reserved = strtoull(v, NULL, 10);
	extra_value(extra, "cc_major", v, sizeof(v));
	d->cc_major = (unsigned)atoi(v);
	extra_value(extra, "cc_minor", v, sizeof(v));
	d->cc_minor = (unsigned)atoi(v);
	return 0;
}

static int by_minor(const void *a, const void *b)
{
	const struct nvmlDevice_st *x = a, *y = b;

	return x->minor < y->minor ? -1 : x->minor > y->minor;
}

/* Whether the device cgroup denies this process the node at path. NVML
 * opens /dev/nvidiactl, then each GPU's /dev/nvidiaN: EPERM is the device
 * cgroup's answer (Slurm's ConstrainDevices, a pod's device list). A node
 * that opens, or fails otherwise (no driver behind it: ENXIO; missing:
 * ENOENT, which NVML running as root would re-create), is not denied. */
static bool denied(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EPERM;
}

/* The GPUs this process may use: every entry of /proc/driver/nvidia/gpus
 * (a real node lists them all, whatever the device cgroup says) whose
 * /dev/nvidiaN the device cgroup allows, numbered 0..n-1 in minor order,
 * as NVML numbers the GPUs it can open. nvidiactl denied: NVML cannot
 * initialise (NVML_ERROR_UNKNOWN, as measured on a real node). */
static nvmlReturn_t discover(void)
{
	DIR *dir = opendir("/proc/driver/nvidia/gpus");
	struct dirent *e;
	char text[512], extra[512], node[64];

	if (!dir)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (denied("/dev/nvidiactl")) {
		closedir(dir);
		return NVML_ERROR_UNKNOWN;
	}
	ndev = 0;
	while ((e = readdir(dir)) && ndev < MAX_GPUS) {
		if (strlen(e->d_name) < 5 || load_device(e->d_name, &devs[ndev]))
			continue;
		snprintf(node, sizeof(node), "/dev/nvidia%u", devs[ndev].minor);
		if (!denied(node))
			ndev++;
	}
	closedir(dir);
	qsort(devs, ndev, sizeof(devs[0]), by_minor);
	if (read_text("/sys/module/nvidia/version", driver_version, sizeof(driver_version)) &&
	    read_text("/proc/driver/nvidia/version", text, sizeof(text)) == 0) {
		/* "... Kernel Module for ARCH  570.124.06  Release Build ..." */
		char *p = strstr(text, "  ");

		if (p)
			sscanf(p, " %47s", driver_version);
	}
	chomp(driver_version);
	if (read_text("/sys/module/nvidia/nvmirage/system", extra, sizeof(extra)))
		extra[0] = '\0';
	extra_value(extra, "nvml_version", nvml_version, sizeof(nvml_version));
	if (!nvml_version[0])
		snprintf(nvml_version, sizeof(nvml_version), "12.%s", driver_version);
	extra_value(extra, "cuda_version", cuda_version, sizeof(cuda_version));
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlInit_v2(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	if (refcount == 0)
		r = discover();
	if (r == NVML_SUCCESS)
		refcount++;
	pthread_mutex_unlock(&lock);
	return r;
}

API nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
API nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return nvmlInit_v2(); }

API nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&lock);
	if (refcount == 0)
		r = NVML_ERROR_UNINITIALIZED;
	else
		refcount--;
	pthread_mutex_unlock(&lock);
	return r;
}

API const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_MEMORY: return "Insufficient Memory";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
	default: return "Unknown Error";
	}
}

/* Every call below needs nvmlInit first, and a handle from this library. */
#define NEED_INIT() do { if (!refcount) return NVML_ERROR_UNINITIALIZED; } while (0)
#define NEED_DEV(d) do { NEED_INIT(); if (!valid(d)) return NVML_ERROR_INVALID_ARGUMENT; } while (0)

static int valid(nvmlDevice_t d)
{
	return d >= devs && d < devs + ndev;
}

static nvmlReturn_t copy_str(char *out, unsigned len, const char *s)
{
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(out, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	NEED_INIT();
	return copy_str(v, len, driver_version);
}

API nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len)
{
	NEED_INIT();
	return copy_str(v, len, nvml_version);
}

API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	unsigned major = 0, minor = 0;

	NEED_INIT();
	if (!v)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sscanf(cuda_version, "%u.%u", &major, &minor) < 1)
		return NVML_ERROR_NOT_SUPPORTED;
	*v = (int)(major * 1000 + minor * 10); /* 12.8 -> 12080 */
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	NEED_INIT();
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = ndev;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	NEED_INIT();
	if (!d || i >= ndev)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = &devs[i];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d)
{
	return nvmlDeviceGetHandleByIndex_v2(i, d);
}

static nvmlReturn_t find(nvmlDevice_t *d, int (*match)(const struct nvmlDevice_st *, const char *),
			 const char *key)
{
	NEED_INIT();
	if (!d || !key)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < ndev; i++)
		if (match(&devs[i], key)) {
			*d = &devs[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

static int uuid_is(const struct nvmlDevice_st *d, const char *k) { return !strcasecmp(d->uuid, k); }
static int serial_is(const struct nvmlDevice_st *d, const char *k) { return d->serial[0] && !strcmp(d->serial, k); }

/* Accepts "0008:06:00.0", "00000008:06:00.0", any case. */
static int bus_is(const struct nvmlDevice_st *d, const char *k)
{
	unsigned dom, bus, dev, fn = 0;

	if (sscanf(k, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) < 3)
		return 0;
	return dom == d->domain && bus == d->bus && dev == d->dev && fn == d->fn;
}

API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d) { return find(d, uuid_is, uuid); }
API nvmlReturn_t nvmlDeviceGetHandleBySerial(const char *s, nvmlDevice_t *d) { return find(d, serial_is, s); }
API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *b, nvmlDevice_t *d) { return find(d, bus_is, b); }
API nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *b, nvmlDevice_t *d) { return find(d, bus_is, b); }

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int n) { NEED_DEV(d); return copy_str(s, n, d->name); }
API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int n) { NEED_DEV(d); return copy_str(s, n, d->uuid); }
API nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *s, unsigned int n) { NEED_DEV(d); return copy_str(s, n, d->vbios); }

API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *s, unsigned int n)
{
	NEED_DEV(d);
	return d->serial[0] ? copy_str(s, n, d->serial) : NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t d, char *s, unsigned int n)
{
	NEED_DEV(d);
	return d->part[0] ? copy_str(s, n, d->part) : NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t d, nvmlBrandType_t *b)
{
	NEED_DEV(d);
	if (!b)
		return NVML_ERROR_INVALID_ARGUMENT;
	*b = !strcasecmp(d->brand, "Tesla") ? NVML_BRAND_TESLA
	   : !strcasecmp(d->brand, "Quadro") ? NVML_BRAND_QUADRO
	   : !strcasecmp(d->brand, "GeForce") ? NVML_BRAND_GEFORCE
	   : !strcasecmp(d->brand, "NVIDIA") ? NVML_BRAND_NVIDIA : NVML_BRAND_UNKNOWN;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, nvmlDeviceArchitecture_t *a)
{
	static const struct { const char *name; unsigned id; } archs[] = {
		{ "Kepler", NVML_DEVICE_ARCH_KEPLER }, { "Maxwell", NVML_DEVICE_ARCH_MAXWELL },
		{ "Pascal", NVML_DEVICE_ARCH_PASCAL }, { "Volta", NVML_DEVICE_ARCH_VOLTA },
		{ "Turing", NVML_DEVICE_ARCH_TURING }, { "Ampere", NVML_DEVICE_ARCH_AMPERE },
		{ "Ada Lovelace", NVML_DEVICE_ARCH_ADA }, { "Ada", NVML_DEVICE_ARCH_ADA },
		{ "Hopper", NVML_DEVICE_ARCH_HOPPER }, { "Blackwell", NVML_DEVICE_ARCH_BLACKWELL },
	};

	NEED_DEV(d);
	if (!a)
		return NVML_ERROR_INVALID_ARGUMENT;
	*a = NVML_DEVICE_ARCH_UNKNOWN;
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
		if (!strcasecmp(d->arch, archs[i].name))
			*a = archs[i].id;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
	NEED_DEV(d);
	if (!major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->cc_major)
		return NVML_ERROR_NOT_SUPPORTED;
	*major = (int)d->cc_major;
	*minor = (int)d->cc_minor;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	*m = d->minor;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i)
{
	NEED_DEV(d);
	if (!i)
		return NVML_ERROR_INVALID_ARGUMENT;
	*i = (unsigned)(d - devs);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	NEED_DEV(d);
	if (!p)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(p, 0, sizeof(*p));
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.%X", d->domain, d->bus, d->dev, d->fn);
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.%X", d->domain, d->bus, d->dev, d->fn);
	p->domain = d->domain;
	p->bus = d->bus;
	p->device = d->dev;
	p->pciDeviceId = (d->device << 16) | d->vendor;
	p->pciSubSystemId = (d->sub_device << 16) | d->sub_vendor;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }
API nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }

/* No process runs on a mock GPU: all but the reserved memory is free. */
API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->mem_total)
		return NVML_ERROR_NOT_SUPPORTED;
	m->total = d->mem_total;
	m->used = d->mem_reserved;
	m->free = d->mem_total - d->mem_reserved;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (!d->mem_total)
		return NVML_ERROR_NOT_SUPPORTED;
	m->total = d->mem_total;
	m->reserved = d->mem_reserved;
	m->used = 0;
	m->free = d->mem_total - d->mem_reserved;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t d, nvmlBAR1Memory_t *b)
{
	NEED_DEV(d);
	if (!b)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* Data-center GPUs map their whole memory through BAR1. */
	b->bar1Total = d->mem_total;
	b->bar1Used = 0;
	b->bar1Free = d->mem_total;
	return d->mem_total ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
	NEED_DEV(d);
	if (!node)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d->numa_node < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*node = (unsigned)d->numa_node;
	return NVML_SUCCESS;
}

/* The CPUs of local_cpulist, as an array of unsigned longs. */
API nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int n, unsigned long *set)
{
	NEED_DEV(d);
	if (!set || !n)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(set, 0, n * sizeof(*set));
	for (unsigned c = 0; c < 4096 && c / (8 * sizeof(long)) < n; c++)
		if (d->cpus[c / 8] >> (c % 8) & 1)
			set[c / (8 * sizeof(long))] |= 1UL << (c % (8 * sizeof(long)));
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	*m = NVML_FEATURE_ENABLED; /* a mock GPU is always ready */
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pending)
{
	NEED_DEV(d);
	if (!cur || !pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cur = *pending = 0; /* NVML_DEVICE_MIG_DISABLE */
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *count)
{
	NEED_DEV(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	return NVML_SUCCESS;
}

/* Running processes: none, on every GPU. */
static nvmlReturn_t no_processes(nvmlDevice_t d, unsigned int *count, void *infos)
{
	(void)infos;
	NEED_DEV(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_processes(d, c, i); }
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_processes(d, c, i); }
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_processes(d, c, i); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_processes(d, c, i); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_processes(d, c, i); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_processes(d, c, i); }

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	NEED_DEV(d);
	if (!u)
		return NVML_ERROR_INVALID_ARGUMENT;
	u->gpu = u->memory = 0;
	return NVML_SUCCESS;
}

/* What the profile has no value for: clocks, NVLink, MIG instances,
 * process utilization. Slurm's gpu/nvml plugin calls these and copes with
 * NOT_SUPPORTED, as it does on GPUs that lack the feature. */
#define UNSUPPORTED(name, ...)                                                 \
	API nvmlReturn_t name(nvmlDevice_t d, __VA_ARGS__)                     \
	{                                                                      \
		NEED_DEV(d);                                                   \
		return NVML_ERROR_NOT_SUPPORTED;                               \
	}
UNSUPPORTED(nvmlDeviceGetNvLinkState, unsigned int link, nvmlEnableState_t *a)
UNSUPPORTED(nvmlDeviceGetNvLinkRemotePciInfo, unsigned int link, nvmlPciInfo_t *p)
UNSUPPORTED(nvmlDeviceGetNvLinkRemotePciInfo_v2, unsigned int link, nvmlPciInfo_t *p)
UNSUPPORTED(nvmlDeviceGetMigDeviceHandleByIndex, unsigned int i, nvmlDevice_t *m)
UNSUPPORTED(nvmlDeviceGetGpuInstanceId, unsigned int *id)
UNSUPPORTED(nvmlDeviceGetComputeInstanceId, unsigned int *id)
UNSUPPORTED(nvmlDeviceGetSupportedMemoryClocks, unsigned int *count, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceGetSupportedGraphicsClocks, unsigned int mem, unsigned int *count, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceSetApplicationsClocks, unsigned int mem, unsigned int gfx)
UNSUPPORTED(nvmlDeviceGetApplicationsClock, nvmlClockType_t t, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceGetClockInfo, nvmlClockType_t t, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceGetMaxClockInfo, nvmlClockType_t t, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceGetProcessUtilization, void *samples, unsigned int *count, unsigned long long since)

API nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t d)
{
	NEED_DEV(d);
	return NVML_ERROR_NOT_SUPPORTED;
}
