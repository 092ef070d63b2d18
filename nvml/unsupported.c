/* What a profile has no value for: MIG instances, clocks, per-process
 * utilization. MIG mode is reported disabled; the rest answers
 * NOT_SUPPORTED, as NVML does on GPUs that lack the feature, and which
 * Slurm's gpu/nvml plugin copes with. */
#include "internal.h"

API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pending)
{
	NEED_DEV(d);
	if (!cur || !pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cur = *pending = NVML_DEVICE_MIG_DISABLE;
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

#define UNSUPPORTED(name, ...)                                                 \
	API nvmlReturn_t name(nvmlDevice_t d, __VA_ARGS__)                     \
	{                                                                      \
		NEED_DEV(d);                                                   \
		return NVML_ERROR_NOT_SUPPORTED;                               \
	}
UNSUPPORTED(nvmlDeviceGetMigDeviceHandleByIndex, unsigned int i, nvmlDevice_t *m)
UNSUPPORTED(nvmlDeviceGetGpuInstanceId, unsigned int *id)
UNSUPPORTED(nvmlDeviceGetComputeInstanceId, unsigned int *id)
UNSUPPORTED(nvmlDeviceGetAttributes, nvmlDeviceAttributes_t *a)
UNSUPPORTED(nvmlDeviceGetAttributes_v2, nvmlDeviceAttributes_t *a)
UNSUPPORTED(nvmlDeviceGetSupportedMemoryClocks, unsigned int *count, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceGetSupportedGraphicsClocks, unsigned int mem, unsigned int *count, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceSetApplicationsClocks, unsigned int mem, unsigned int gfx)
UNSUPPORTED(nvmlDeviceGetApplicationsClock, nvmlClockType_t t, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceGetClockInfo, nvmlClockType_t t, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceGetMaxClockInfo, nvmlClockType_t t, unsigned int *mhz)
UNSUPPORTED(nvmlDeviceGetProcessUtilization, nvmlProcessUtilizationSample_t *samples, unsigned int *count,
	    unsigned long long since)

API nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t d)
{
	NEED_DEV(d);
	return NVML_ERROR_NOT_SUPPORTED;
}
