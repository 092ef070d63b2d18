/* Loading nvmirage's NVML for the look-alike, and the small lookups its
 * forms share. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "smi/api.h"
#include "lib/fsutil.h"

/* The library next to this binary (or installed beside it), so the
 * look-alike uses nvmirage's NVML; else the one the dynamic linker finds
 * (in a target, the tree's). */
static void *open_nvml(void)
{
	char path[PATH_MAX];
	void *h = fs_find_beside("libnvidia-ml.so.1", path, sizeof(path)) ? NULL
									 : dlopen(path, RTLD_NOW);

	return h ? h : dlopen("libnvidia-ml.so.1", RTLD_NOW);
}

int smi_api_open(struct smi_api *api, char *err, size_t len)
{
	void *h = open_nvml();

	memset(api, 0, sizeof(*api));
	if (!h) {
		snprintf(err, len, "cannot load libnvidia-ml.so.1: %s", dlerror());
		return -1;
	}
#define SMI_BIND(member, fn) *(void **)&api->member = dlsym(h, #fn);
	SMI_NVML_CALLS(SMI_BIND)
#undef SMI_BIND
	if (!api->init || !api->shutdown || !api->count || !api->handle) {
		snprintf(err, len, "libnvidia-ml.so.1 lacks nvmlInit_v2, nvmlShutdown, "
				   "nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2");
		return -1;
	}
	return 0;
}

#define MAX_PROCS 64

static unsigned add_procs(nvmlReturn_t (*get)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *),
			  nvmlDevice_t d, char type, struct smi_proc *out, unsigned n, unsigned max)
{
	nvmlProcessInfo_t infos[MAX_PROCS];
	unsigned count = MAX_PROCS;

	if (!get || get(d, &count, infos) != NVML_SUCCESS)
		return n;
	for (unsigned i = 0; i < count && n < max; i++, n++) {
		out[n].pid = infos[i].pid;
		out[n].used = infos[i].usedGpuMemory;
		out[n].type = type;
	}
	return n;
}

unsigned smi_processes(const struct smi_api *api, nvmlDevice_t d, struct smi_proc *out,
		       unsigned max)
{
	unsigned n = add_procs(api->compute_procs, d, 'C', out, 0, max);

	return add_procs(api->graphics_procs, d, 'G', out, n, max);
}

bool smi_field(const struct smi_api *api, nvmlDevice_t d, unsigned id, unsigned *out)
{
	nvmlFieldValue_t v = { .fieldId = id };

	if (SMI(api, fields, d, 1, &v) != NVML_SUCCESS || v.nvmlReturn != NVML_SUCCESS)
		return false;
	*out = v.value.uiVal;
	return true;
}

const char *smi_enabled(nvmlEnableState_t s)
{
	return s == NVML_FEATURE_ENABLED ? "Enabled" : "Disabled";
}

const char *smi_compute_mode(nvmlComputeMode_t m)
{
	switch (m) {
	case NVML_COMPUTEMODE_DEFAULT: return "Default";
	case NVML_COMPUTEMODE_EXCLUSIVE_THREAD: return "E. Thread";
	case NVML_COMPUTEMODE_PROHIBITED: return "Prohibited";
	case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS: return "E. Process";
	default: return "N/A";
	}
}
