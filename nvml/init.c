/* nvmlInit and nvmlShutdown: which GPUs this process sees. The GPUs are
 * the entries of /proc/driver/nvidia/gpus the calling process sees (a
 * process outside the target cgroups sees no driver: DRIVER_NOT_LOADED),
 * less those its device cgroup denies it, as on a real node. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;
int nvml_refcount;
unsigned nvml_ndev;
struct nvmlDevice_st nvml_devs[MAX_GPUS];
char nvml_driver_version[48], nvml_lib_version[64], nvml_cuda_version[16];

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
bool nvml_denied(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EPERM;
}

/* "... Kernel Module for ARCH  570.124.06  Release Build ..." when
 * /sys/module/nvidia/version is missing. */
static void read_versions(void)
{
	char text[512], extra[512];

	if (nvml_read_text("/sys/module/nvidia/version", nvml_driver_version,
			   sizeof(nvml_driver_version)) &&
	    nvml_read_text("/proc/driver/nvidia/version", text, sizeof(text)) == 0) {
		char *p = strstr(text, "  ");

		if (p)
			sscanf(p, " %47s", nvml_driver_version);
	}
	nvml_driver_version[strcspn(nvml_driver_version, "\n")] = '\0';
	if (nvml_read_text("/sys/module/nvidia/nvmirage/system", extra, sizeof(extra)))
		extra[0] = '\0';
	nvml_extra_value(extra, "nvml_version", nvml_lib_version, sizeof(nvml_lib_version));
	if (!nvml_lib_version[0])
		snprintf(nvml_lib_version, sizeof(nvml_lib_version), "12.%s", nvml_driver_version);
	nvml_extra_value(extra, "cuda_version", nvml_cuda_version, sizeof(nvml_cuda_version));
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
	struct nvm_state st;
	char node[64];

	if (!dir)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (nvml_denied("/dev/nvidiactl")) {
		closedir(dir);
		return NVML_ERROR_UNKNOWN;
	}
	nvml_ndev = 0;
	while ((e = readdir(dir)) && nvml_ndev < MAX_GPUS) {
		struct nvmlDevice_st *d = &nvml_devs[nvml_ndev];

		if (strlen(e->d_name) < 5 || nvml_load_device(e->d_name, d))
			continue;
		/* An excluded GPU is not the driver's (NVreg_ExcludedGpus). */
		nvml_read_state(d->bus_id, &st);
		if (st.health == GPU_EXCLUDED)
			continue;
		snprintf(node, sizeof(node), "/dev/nvidia%u", d->minor);
		if (!nvml_denied(node))
			nvml_ndev++;
	}
	closedir(dir);
	qsort(nvml_devs, nvml_ndev, sizeof(nvml_devs[0]), by_minor);
	read_versions();
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlInit_v2(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&nvml_lock);
	if (nvml_refcount == 0)
		r = discover();
	if (r == NVML_SUCCESS)
		nvml_refcount++;
	pthread_mutex_unlock(&nvml_lock);
	return r;
}

API nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
API nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return nvmlInit_v2(); }

API nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t r = NVML_SUCCESS;

	pthread_mutex_lock(&nvml_lock);
	if (nvml_refcount == 0)
		r = NVML_ERROR_UNINITIALIZED;
	else
		nvml_refcount--;
	pthread_mutex_unlock(&nvml_lock);
	return r;
}
