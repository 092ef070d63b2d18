/* The NVML calls nvmirage's nvidia-smi look-alike makes, looked up in
 * whichever libnvidia-ml.so.1 it loads (nvmirage's). A call the library
 * lacks answers FUNCTION_NOT_FOUND, and the look-alike prints N/A, as
 * nvidia-smi does for what a GPU does not report. */
#ifndef NVM_SMI_API_H
#define NVM_SMI_API_H

#include <stdbool.h>

#include "nvml.h"

/* X(member, exported name): the member has the exported function's type. */
#define SMI_NVML_CALLS(X)                                                        \
	X(init, nvmlInit_v2)                                                     \
	X(shutdown, nvmlShutdown)                                                \
	X(count, nvmlDeviceGetCount_v2)                                          \
	X(handle, nvmlDeviceGetHandleByIndex_v2)                                 \
	X(driver, nvmlSystemGetDriverVersion)                                    \
	X(cuda, nvmlSystemGetCudaDriverVersion_v2)                               \
	X(process_name, nvmlSystemGetProcessName)                                \
	X(name, nvmlDeviceGetName)                                               \
	X(uuid, nvmlDeviceGetUUID)                                               \
	X(serial, nvmlDeviceGetSerial)                                           \
	X(vbios, nvmlDeviceGetVbiosVersion)                                      \
	X(minor, nvmlDeviceGetMinorNumber)                                       \
	X(board_id, nvmlDeviceGetBoardId)                                        \
	X(multi_gpu, nvmlDeviceGetMultiGpuBoard)                                 \
	X(part_number, nvmlDeviceGetBoardPartNumber)                             \
	X(brand, nvmlDeviceGetBrand)                                             \
	X(arch, nvmlDeviceGetArchitecture)                                       \
	X(pci, nvmlDeviceGetPciInfo_v3)                                          \
	X(memory, nvmlDeviceGetMemoryInfo_v2)                                    \
	X(bar1, nvmlDeviceGetBAR1MemoryInfo)                                     \
	X(persistence, nvmlDeviceGetPersistenceMode)                             \
	X(display_mode, nvmlDeviceGetDisplayMode)                                \
	X(display_active, nvmlDeviceGetDisplayActive)                            \
	X(accounting, nvmlDeviceGetAccountingMode)                               \
	X(accounting_size, nvmlDeviceGetAccountingBufferSize)                    \
	X(mig, nvmlDeviceGetMigMode)                                             \
	X(mig_max, nvmlDeviceGetMaxMigDeviceCount)                               \
	X(mig_handle, nvmlDeviceGetMigDeviceHandleByIndex)                       \
	X(ecc_mode, nvmlDeviceGetEccMode)                                        \
	X(ecc_total, nvmlDeviceGetTotalEccErrors)                                \
	X(ecc_count, nvmlDeviceGetMemoryErrorCounter)                            \
	X(inforom_image, nvmlDeviceGetInforomImageVersion)                       \
	X(inforom, nvmlDeviceGetInforomVersion)                                  \
	X(fans, nvmlDeviceGetNumFans)                                            \
	X(fan, nvmlDeviceGetFanSpeed)                                            \
	X(temperature, nvmlDeviceGetTemperature)                                 \
	X(pstate, nvmlDeviceGetPerformanceState)                                 \
	X(power, nvmlDeviceGetPowerUsage)                                        \
	X(power_cap, nvmlDeviceGetEnforcedPowerLimit)                            \
	X(power_limit, nvmlDeviceGetPowerManagementLimit)                        \
	X(power_default, nvmlDeviceGetPowerManagementDefaultLimit)               \
	X(power_range, nvmlDeviceGetPowerManagementLimitConstraints)             \
	X(fields, nvmlDeviceGetFieldValues)                                      \
	X(utilization, nvmlDeviceGetUtilizationRates)                            \
	X(encoder, nvmlDeviceGetEncoderUtilization)                              \
	X(decoder, nvmlDeviceGetDecoderUtilization)                              \
	X(compute_mode, nvmlDeviceGetComputeMode)                                \
	X(clock, nvmlDeviceGetClockInfo)                                         \
	X(max_clock, nvmlDeviceGetMaxClockInfo)                                  \
	X(app_clock, nvmlDeviceGetApplicationsClock)                             \
	X(default_app_clock, nvmlDeviceGetDefaultApplicationsClock)              \
	X(boost_clock, nvmlDeviceGetMaxCustomerBoostClock)                       \
	X(pcie_gen, nvmlDeviceGetCurrPcieLinkGeneration)                         \
	X(pcie_gen_max, nvmlDeviceGetMaxPcieLinkGeneration)                      \
	X(pcie_width, nvmlDeviceGetCurrPcieLinkWidth)                            \
	X(pcie_width_max, nvmlDeviceGetMaxPcieLinkWidth)                         \
	X(compute_procs, nvmlDeviceGetComputeRunningProcesses_v3)                \
	X(graphics_procs, nvmlDeviceGetGraphicsRunningProcesses_v3)              \
	X(cpu_affinity, nvmlDeviceGetCpuAffinity)                                \
	X(memory_affinity, nvmlDeviceGetMemoryAffinity)                          \
	X(gpu_numa, nvmlDeviceGetNumaNodeId)                                     \
	X(common_ancestor, nvmlDeviceGetTopologyCommonAncestor)                  \
	X(link_state, nvmlDeviceGetNvLinkState)                                  \
	X(link_remote_pci, nvmlDeviceGetNvLinkRemotePciInfo_v2)                  \
	X(link_remote_type, nvmlDeviceGetNvLinkRemoteDeviceType)

struct smi_api {
#define SMI_MEMBER(member, fn) __typeof__(fn) *member;
	SMI_NVML_CALLS(SMI_MEMBER)
#undef SMI_MEMBER
};

/* Calls NVML's fn through api, or FUNCTION_NOT_FOUND where it is missing. */
#define SMI(api, member, ...)                                                    \
	((api)->member ? (api)->member(__VA_ARGS__) : NVML_ERROR_FUNCTION_NOT_FOUND)

/* Loads nvmirage's libnvidia-ml.so.1 (beside this binary, else the one the
 * dynamic linker finds: in a target, the tree's) and looks the calls up.
 * -1, with the reason in err, if there is no library or it lacks the calls
 * every form needs (init, shutdown, count, handle). */
int smi_api_open(struct smi_api *api, char *err, size_t len);

/* One GPU as the forms print it. */
struct smi_gpu {
	unsigned index;
	nvmlDevice_t dev;
};

/* NVML's processes on a GPU (compute, then graphics), at most max, with
 * each's type letter ('C', 'G'): the count. */
struct smi_proc {
	unsigned pid;
	unsigned long long used; /* bytes */
	char type;
};
unsigned smi_processes(const struct smi_api *api, nvmlDevice_t d, struct smi_proc *out,
		       unsigned max);

/* A GPU-scope field value as an unsigned: false where NVML has none. */
bool smi_field(const struct smi_api *api, nvmlDevice_t d, unsigned id, unsigned *out);

/* nvidia-smi's names for enums. */
const char *smi_enabled(nvmlEnableState_t s);        /* Enabled, Disabled */
const char *smi_compute_mode(nvmlComputeMode_t m);   /* Default, E. Process... */

#endif
