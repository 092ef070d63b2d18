/* Clocks and why they are where they are, from the profile's telemetry:
 * the current clocks move within their range (telemetry.c), the rest are
 * the profile's fixed values. The event reasons are the profile's, with
 * "idle" in force exactly while utilization reads 0. */
#include <math.h>

#include "internal.h"

static nvmlReturn_t fixed_clock(nvmlDevice_t d, const unsigned *by_type, nvmlClockType_t t,
				unsigned int *mhz)
{
	NEED_DEV(d);
	if (!mhz || (unsigned)t >= NVM_CLOCK_TYPES)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	if (!by_type[t])
		return NVML_ERROR_NOT_SUPPORTED;
	*mhz = by_type[t];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
	NEED_DEV(d);
	if (!mhz || (unsigned)t >= NVM_CLOCK_TYPES)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	if (!d->tel.clk[t].set)
		return NVML_ERROR_NOT_SUPPORTED;
	*mhz = (unsigned)lround(nvml_dyn_now(d, &d->tel.clk[t]));
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
	return fixed_clock(d, d ? d->tel.clk_max : NULL, t, mhz);
}

API nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
	return fixed_clock(d, d ? d->tel.clk_app : NULL, t, mhz);
}

API nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
	return fixed_clock(d, d ? d->tel.clk_default_app : NULL, t, mhz);
}

API nvmlReturn_t nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
	return fixed_clock(d, d ? d->tel.clk_boost : NULL, t, mhz);
}

API nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t d, nvmlClockType_t t, nvmlClockId_t id, unsigned int *mhz)
{
	switch (id) {
	case NVML_CLOCK_ID_CURRENT: return nvmlDeviceGetClockInfo(d, t, mhz);
	case NVML_CLOCK_ID_APP_CLOCK_TARGET: return nvmlDeviceGetApplicationsClock(d, t, mhz);
	case NVML_CLOCK_ID_APP_CLOCK_DEFAULT: return nvmlDeviceGetDefaultApplicationsClock(d, t, mhz);
	case NVML_CLOCK_ID_CUSTOMER_BOOST_MAX: return nvmlDeviceGetMaxCustomerBoostClock(d, t, mhz);
	default: return NVML_ERROR_INVALID_ARGUMENT;
	}
}

/* A list into (count, out) as NVML fills one: INSUFFICIENT_SIZE with the
 * count needed when it does not fit. */
static nvmlReturn_t fill_list(const unsigned *list, unsigned n, unsigned int *count, unsigned int *out)
{
	unsigned room = *count;

	*count = n;
	if (!n)
		return NVML_ERROR_NOT_SUPPORTED;
	if (room < n || !out)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	for (unsigned i = 0; i < n; i++)
		out[i] = list[i];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t d, unsigned int *count, unsigned int *mhz)
{
	NEED_DEV(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	return fill_list(d->tel.mem_clocks, d->tel.nmem_clocks, count, mhz);
}

API nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t d, unsigned int mem, unsigned int *count,
						      unsigned int *mhz)
{
	bool known = false;

	NEED_DEV(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	for (unsigned i = 0; i < d->tel.nmem_clocks; i++)
		known |= d->tel.mem_clocks[i] == mem;
	if (!known)
		return NVML_ERROR_NOT_FOUND;
	return fill_list(d->tel.gfx_clocks, d->tel.ngfx_clocks, count, mhz);
}

/* Changing clocks needs root on a real node and a driver behind it. */
API nvmlReturn_t nvmlDeviceSetApplicationsClocks(nvmlDevice_t d, unsigned int mem, unsigned int gfx)
{
	NEED_DEV(d);
	return NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t d)
{
	NEED_DEV(d);
	return NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
	NEED_DEV(d);
	if (!r)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	/* The profile's reasons; idle only while the GPU reads 0 % busy. */
	*r = d->tel.reasons & ~(unsigned long long)nvmlClocksEventReasonGpuIdle;
	if (lround(nvml_dyn_now(d, &d->tel.util_gpu)) == 0)
		*r |= nvmlClocksEventReasonGpuIdle;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r)
{
	return nvmlDeviceGetCurrentClocksEventReasons(d, r);
}

API nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
	NEED_DEV(d);
	if (!r)
		return NVML_ERROR_INVALID_ARGUMENT;
	NEED_TEL(d);
	*r = d->tel.reasons_supported;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r)
{
	return nvmlDeviceGetSupportedClocksEventReasons(d, r);
}
