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

/* The field values nvidia-smi -q reads power and temperature limits by
 * (GPU scope; the module and the memory scopes are not modelled and
 * answer NOT_SUPPORTED, as an H200's module scope does). */
#define FI_MEMORY_TEMP 82
#define FI_POWER_AVERAGE 185
#define FI_POWER_INSTANT 186
#define FI_POWER_MIN_LIMIT 187
#define FI_POWER_MAX_LIMIT 188
#define FI_POWER_DEFAULT_LIMIT 189
#define FI_POWER_CURRENT_LIMIT 190
#define FI_ENERGY 191
#define FI_POWER_REQUESTED_LIMIT 192
#define FI_TLIMIT_SHUTDOWN 193
#define FI_TLIMIT_SLOWDOWN 194
#define FI_TLIMIT_MEM_MAX 195
#define FI_TLIMIT_GPU_MAX 196

/* x, or NOT_SUPPORTED where the profile gives none. */
static void field_uint(nvmlFieldValue_t *v, unsigned x, bool have)
{
	if (have)
		nvml_field_uint(v, x);
	else
		v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
}

/* A T.Limit threshold: how far below the limit it lies, in degrees (the
 * limit is the GPU's, or the memory's, maximum operating temperature), as
 * NVML gives them: the shutdown threshold 7 degrees above an 85 C limit
 * is -7. */
static void field_tlimit(nvmlFieldValue_t *v, unsigned limit, unsigned threshold)
{
	v->valueType = NVML_VALUE_TYPE_SIGNED_INT;
	v->value.siVal = (int)limit - (int)threshold;
	v->nvmlReturn = limit && threshold ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

bool nvml_sensor_field(nvmlDevice_t d, nvmlFieldValue_t *v)
{
	const struct nvm_telemetry *t = &d->tel;
	bool power = v->fieldId >= FI_POWER_AVERAGE && v->fieldId <= FI_POWER_REQUESTED_LIMIT;

	if (v->fieldId != FI_MEMORY_TEMP && !power &&
	    (v->fieldId < FI_TLIMIT_SHUTDOWN || v->fieldId > FI_TLIMIT_GPU_MAX))
		return false;
	if (!t->present || (power && v->scopeId != NVML_POWER_SCOPE_GPU)) {
		v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		return true;
	}
	switch (v->fieldId) {
	case FI_MEMORY_TEMP: field_uint(v, t->temp_mem.set ? now_u(d, &t->temp_mem) : 0, t->temp_mem.set); break;
	case FI_POWER_AVERAGE:
	case FI_POWER_INSTANT: field_uint(v, t->power.set ? now_u(d, &t->power) : 0, t->power.set); break;
	case FI_POWER_MIN_LIMIT: field_uint(v, t->power_min, t->power_max != 0); break;
	case FI_POWER_MAX_LIMIT: field_uint(v, t->power_max, t->power_max != 0); break;
	case FI_POWER_DEFAULT_LIMIT: field_uint(v, t->power_default, t->power_default != 0); break;
	case FI_POWER_CURRENT_LIMIT:
	case FI_POWER_REQUESTED_LIMIT: field_uint(v, t->power_limit, t->power_limit != 0); break;
	case FI_ENERGY:
		v->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
		v->value.ullVal = t->power.set ? nvml_energy_mj(d) : 0;
		v->nvmlReturn = t->power.set ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
		break;
	case FI_TLIMIT_SHUTDOWN: field_tlimit(v, t->temp_gpu_max, t->temp_shutdown); break;
	case FI_TLIMIT_SLOWDOWN: field_tlimit(v, t->temp_gpu_max, t->temp_slowdown); break;
	case FI_TLIMIT_MEM_MAX: field_tlimit(v, t->temp_mem_max, t->temp_mem_max); break;
	case FI_TLIMIT_GPU_MAX: field_tlimit(v, t->temp_gpu_max, t->temp_gpu_max); break;
	}
	return true;
}
