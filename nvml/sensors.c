/* Temperatures, power and energy, fans, performance state, utilization,
 * PCIe throughput and link, and the GPU's modes, from the profile's
 * telemetry (telemetry.c). A GPU whose profile gives none answers
 * NOT_SUPPORTED, as NVML does where a GPU lacks the sensor. */
#include <math.h>

#include "internal.h"

#define SAMPLE_US 1000000 /* the sampling period NVML reports with utilization */

static unsigned now_u(const struct nvmlDevice_st *d, const struct nvm_dyn *v)
{
	return (unsigned)lround(nvml_dyn_now(d, v));
}

API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensor, unsigned int *t)
{
	NEED_DEV(d);
	if (!t || sensor != NVML_TEMPERATURE_GPU)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	if (!d->tel.temp_gpu.set)
		return NVML_ERROR_NOT_SUPPORTED;
	*t = now_u(d, &d->tel.temp_gpu);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t which,
						   unsigned int *t)
{
	unsigned v;

	NEED_DEV(d);
	if (!t)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	switch (which) {
	case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN: v = d->tel.temp_shutdown; break;
	case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN: v = d->tel.temp_slowdown; break;
	case NVML_TEMPERATURE_THRESHOLD_MEM_MAX: v = d->tel.temp_mem_max; break;
	case NVML_TEMPERATURE_THRESHOLD_GPU_MAX: v = d->tel.temp_gpu_max; break;
	default: return NVML_ERROR_NOT_SUPPORTED; /* acoustic: GeForce only */
	}
	if (!v)
		return NVML_ERROR_NOT_SUPPORTED;
	*t = v;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	NEED_DEV(d);
	if (!mw)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	if (!d->tel.power.set)
		return NVML_ERROR_NOT_SUPPORTED;
	*mw = now_u(d, &d->tel.power);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
	NEED_DEV(d);
	if (!mj)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	if (!d->tel.power.set)
		return NVML_ERROR_NOT_SUPPORTED;
	*mj = nvml_energy_mj(d);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t d, nvmlEnableState_t *mode)
{
	NEED_DEV(d);
	if (!mode)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	*mode = d->tel.power_limit ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

#define TEL(d, field) ((d) && (d)->tel.present ? (d)->tel.field : 0)

/* A fixed value of the profile's (a power limit, a PCIe link's); 0 is
 * one the profile does not give. */
static nvmlReturn_t fixed_value(nvmlDevice_t d, unsigned v, unsigned int *out)
{
	NEED_DEV(d);
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	if (!v)
		return NVML_ERROR_NOT_SUPPORTED;
	*out = v;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw)
{
	return fixed_value(d, TEL(d, power_limit), mw);
}

API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw)
{
	return fixed_value(d, TEL(d, power_limit), mw);
}

API nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int *mw)
{
	return fixed_value(d, TEL(d, power_default), mw);
}

API nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d, unsigned int *lo,
							      unsigned int *hi)
{
	NEED_DEV(d);
	if (!lo || !hi)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	if (!d->tel.power_max)
		return NVML_ERROR_NOT_SUPPORTED;
	*lo = d->tel.power_min;
	*hi = d->tel.power_max;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t d, unsigned int *n)
{
	NEED_DEV(d);
	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	*n = d->tel.fans;
	return NVML_SUCCESS;
}

/* Data-center GPUs are cooled by the chassis: no fan, NOT_SUPPORTED. */
API nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t d, unsigned int fan, unsigned int *pct)
{
	NEED_DEV(d);
	if (!pct)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	if (!d->tel.fans || !d->tel.fan.set)
		return NVML_ERROR_NOT_SUPPORTED;
	if (fan >= d->tel.fans)
		return NVML_ERROR_INVALID_ARGUMENT;
	*pct = now_u(d, &d->tel.fan);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned int *pct)
{
	return nvmlDeviceGetFanSpeed_v2(d, 0, pct);
}

API nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, nvmlPstates_t *p)
{
	NEED_DEV(d);
	if (!p)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	*p = (nvmlPstates_t)d->tel.pstate;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t d, nvmlPstates_t *p)
{
	return nvmlDeviceGetPerformanceState(d, p);
}

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	NEED_DEV(d);
	if (!u)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* Without telemetry: an idle GPU, as before. */
	u->gpu = d->tel.present ? now_u(d, &d->tel.util_gpu) : 0;
	u->memory = d->tel.present ? now_u(d, &d->tel.util_mem) : 0;
	return NVML_SUCCESS;
}

static nvmlReturn_t engine_util(nvmlDevice_t d, const struct nvm_dyn *v, unsigned int *u,
				unsigned int *period)
{
	NEED_DEV(d);
	if (!u || !period)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	*u = now_u(d, v);
	*period = SAMPLE_US;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *period)
{
	return engine_util(d, d ? &d->tel.util_enc : NULL, u, period);
}

API nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *period)
{
	return engine_util(d, d ? &d->tel.util_dec : NULL, u, period);
}

/* No encoder or frame-capture session runs on a mock GPU. */
API nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t d, unsigned int *n, unsigned int *fps,
					   unsigned int *latency)
{
	NEED_DEV(d);
	if (!n || !fps || !latency)
		return NVML_ERROR_INVALID_ARGUMENT;
	*n = *fps = *latency = 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetFBCStats(nvmlDevice_t d, nvmlFBCStats_t *s)
{
	NEED_DEV(d);
	if (!s)
		return NVML_ERROR_INVALID_ARGUMENT;
	s->sessionsCount = s->averageFPS = s->averageLatency = 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, nvmlPcieUtilCounter_t c, unsigned int *kbs)
{
	NEED_DEV(d);
	if (!kbs || c >= NVML_PCIE_UTIL_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	*kbs = now_u(d, c == NVML_PCIE_UTIL_TX_BYTES ? &d->tel.pcie_tx : &d->tel.pcie_rx);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *g)
{
	return fixed_value(d, TEL(d, pcie_gen), g);
}

API nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *g)
{
	return fixed_value(d, TEL(d, pcie_gen_max), g);
}

API nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *g)
{
	return fixed_value(d, TEL(d, pcie_gen_max), g);
}

API nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *w)
{
	return fixed_value(d, TEL(d, pcie_width), w);
}

API nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *w)
{
	return fixed_value(d, TEL(d, pcie_width_max), w);
}

API nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int *n)
{
	NEED_DEV(d);
	if (!n)
		return NVML_ERROR_INVALID_ARGUMENT;
	*n = 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, nvmlComputeMode_t *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	*m = (nvmlComputeMode_t)TEL(d, compute_mode);
	return NVML_SUCCESS;
}

static nvmlReturn_t flag(nvmlDevice_t d, bool on, nvmlEnableState_t *out)
{
	NEED_DEV(d);
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	*out = on ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t d, nvmlEnableState_t *m)
{
	return flag(d, TEL(d, display_active), m);
}

API nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t d, nvmlEnableState_t *m)
{
	return flag(d, TEL(d, display_active), m);
}

API nvmlReturn_t nvmlDeviceGetAccountingMode(nvmlDevice_t d, nvmlEnableState_t *m)
{
	return flag(d, TEL(d, accounting), m);
}
