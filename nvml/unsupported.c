/* What a profile has no value for: per-process utilization, and what an
 * H200 lacks; these answer NOT_SUPPORTED, as NVML does on GPUs that lack
 * the feature, and which Slurm's gpu/nvml plugin copes with. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define UNSUPPORTED(name, ...)                                                 \
	API nvmlReturn_t name(nvmlDevice_t d, __VA_ARGS__)                     \
	{                                                                      \
		NEED_DEV(d);                                                   \
		return NVML_ERROR_NOT_SUPPORTED;                               \
	}
UNSUPPORTED(nvmlDeviceGetProcessUtilization, nvmlProcessUtilizationSample_t *samples, unsigned int *count,
	    unsigned long long since)

/* What nvidia-smi -q asks of a bare-metal H200 that it lacks (N/A there):
 * a PCIe bridge chip on the board, a GPU fabric, a vGPU host, an InfoROM
 * BBX flush recorded. */
UNSUPPORTED(nvmlDeviceGetBridgeChipInfo, nvmlBridgeChipHierarchy_t *h)
UNSUPPORTED(nvmlDeviceGetGpuFabricInfoV, nvmlGpuFabricInfoV_t *info)
UNSUPPORTED(nvmlDeviceGetHostVgpuMode, nvmlHostVgpuMode_t *mode)
UNSUPPORTED(nvmlDeviceGetLastBBXFlushTime, unsigned long long *timestamp, unsigned long *duration_us)
UNSUPPORTED(nvmlDeviceGetVgpuHeterogeneousMode, nvmlVgpuHeterogeneousMode_t *mode)

/* Linux has no driver models (a Windows notion). */
UNSUPPORTED(nvmlDeviceGetDriverModel, nvmlDriverModel_t *current, nvmlDriverModel_t *pending)

/* No MPS server runs on a mock GPU. */
static nvmlReturn_t no_mps(nvmlDevice_t d, unsigned int *count)
{
	NEED_DEV(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v1_t *i) { return no_mps(d, c); }
API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v2_t *i) { return no_mps(d, c); }
API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_mps(d, c); }

/* Field values (NVLink's, power and temperature limits): a field nvmirage
 * does not model answers NOT_SUPPORTED in its own return code, as NVML
 * does per field. */
API nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int n, nvmlFieldValue_t *values)
{
	NEED_DEV(d);
	if (n < 0 || (n && !values))
		return NVML_ERROR_INVALID_ARGUMENT;
	bool trace = getenv("NVMIRAGE_NVML_TRACE") != NULL;

	for (int i = 0; i < n; i++) {
		if (trace)
			fprintf(stderr, "nvmirage nvml: field %u (scope %u)\n", values[i].fieldId, values[i].scopeId);
		if (!nvml_nvlink_field(d, &values[i]) && !nvml_sensor_field(d, &values[i]))
			values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
	}
	return NVML_SUCCESS;
}
