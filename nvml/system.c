/* The calls about the library and the node: error strings, versions, how
 * many GPUs and which one has a given index, UUID, serial or bus id (only
 * among those this process sees: init.c). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

API const char *nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_ALREADY_INITIALIZED: return "Already Initialized";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT: return "Timeout";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_MEMORY: return "Insufficient Memory";
	case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
	default: return "Unknown Error";
	}
}

nvmlReturn_t nvml_copy_str(char *out, unsigned len, const char *s)
{
	if (!out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(s) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(out, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	NEED_INIT();
	return nvml_copy_str(v, len, nvml_driver_version);
}

API nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned int len)
{
	NEED_INIT();
	return nvml_copy_str(v, len, nvml_lib_version);
}

API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	unsigned major = 0, minor = 0;

	NEED_INIT();
	if (!v)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sscanf(nvml_cuda_version, "%u.%u", &major, &minor) < 1)
		return NVML_ERROR_NOT_SUPPORTED;
	*v = (int)(major * 1000 + minor * 10); /* 12.8 -> 12080 */
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	NEED_INIT();
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = nvml_ndev;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	NEED_INIT();
	if (!d || i >= nvml_ndev)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (nvml_check_gpu(&nvml_devs[i]) != NVML_SUCCESS)
		return NVML_ERROR_GPU_IS_LOST;
	*d = &nvml_devs[i];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d)
{
	return nvmlDeviceGetHandleByIndex_v2(i, d);
}

static nvmlReturn_t find(nvmlDevice_t *d, int (*match)(const struct nvmlDevice_st *, const char *),
			 const char *key)
{
	NEED_INIT();
	if (!d || !key)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < nvml_ndev; i++)
		if (match(&nvml_devs[i], key)) {
			if (nvml_check_gpu(&nvml_devs[i]) != NVML_SUCCESS)
				return NVML_ERROR_GPU_IS_LOST;
			*d = &nvml_devs[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

static int uuid_is(const struct nvmlDevice_st *d, const char *k) { return !strcasecmp(d->uuid, k); }
static int serial_is(const struct nvmlDevice_st *d, const char *k) { return d->serial[0] && !strcmp(d->serial, k); }

/* Accepts "0008:06:00.0", "00000008:06:00.0", any case. */
static int bus_is(const struct nvmlDevice_st *d, const char *k)
{
	unsigned dom, bus, dev, fn = 0;

	if (sscanf(k, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) < 3)
		return 0;
	return dom == d->domain && bus == d->bus && dev == d->dev && fn == d->fn;
}

API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d) { return find(d, uuid_is, uuid); }
API nvmlReturn_t nvmlDeviceGetHandleBySerial(const char *s, nvmlDevice_t *d) { return find(d, serial_is, s); }
API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *b, nvmlDevice_t *d) { return find(d, bus_is, b); }
API nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *b, nvmlDevice_t *d) { return find(d, bus_is, b); }
