/* What nvidia-smi -q asks of features a profile's GPU lacks or has off, as
 * a bare-metal H200 answers: no PCIe bridge chip on the board, no GPU
 * fabric, no vGPU host, no InfoROM BBX flush recorded (all N/A there), the
 * CPU-GPU C2C link off ("Disabled") and no memory protected for
 * confidential computing (0 MiB). */
#include <string.h>

#include "internal.h"

#define NOT_HERE(name, ...)                                                    \
	API nvmlReturn_t name(nvmlDevice_t d, __VA_ARGS__)                     \
	{                                                                      \
		NEED_DEV(d);                                                   \
		return NVML_ERROR_NOT_SUPPORTED;                               \
	}
NOT_HERE(nvmlDeviceGetBridgeChipInfo, nvmlBridgeChipHierarchy_t *h)
NOT_HERE(nvmlDeviceGetGpuFabricInfoV, nvmlGpuFabricInfoV_t *info)
NOT_HERE(nvmlDeviceGetHostVgpuMode, nvmlHostVgpuMode_t *mode)
NOT_HERE(nvmlDeviceGetLastBBXFlushTime, unsigned long long *timestamp, unsigned long *duration_us)
NOT_HERE(nvmlDeviceGetVgpuHeterogeneousMode, nvmlVgpuHeterogeneousMode_t *mode)

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
