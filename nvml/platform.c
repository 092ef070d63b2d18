/* What nvidia-smi -q asks of features a profile's GPU has off, as a
 * bare-metal H200 answers: the CPU-GPU C2C link off ("Disabled") and no
 * memory protected for confidential computing (0 MiB). Those it lacks are
 * in unsupported.c. */
#include <string.h>

#include "internal.h"

API nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t d, nvmlC2cModeInfo_v1_t *info)
{
	NEED_DEV(d);
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	info->isC2cEnabled = 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetConfComputeProtectedMemoryUsage(nvmlDevice_t d, nvmlMemory_t *mem)
{
	NEED_DEV(d);
	if (!mem)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(mem, 0, sizeof(*mem));
	return NVML_SUCCESS;
}
