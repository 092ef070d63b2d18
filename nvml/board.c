/* What nvidia-smi -q shows of the board: the PCI identity in its newer
 * form, the board and module ids, GSP firmware, and the engines and modes
 * a mock GPU does not use (JPEG and OFA idle, bare metal, the default
 * accounting buffer). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define ACCOUNTING_BUFFER 4000 /* NVML's default, as on the H200 reference */

API nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t d, nvmlPciInfoExt_t *p)
{
	NEED_DEV(d);
	if (!p)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (p->version != nvmlPciInfoExt_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	p->domain = d->domain;
	p->bus = d->bus;
	p->device = d->dev;
	p->pciDeviceId = (d->device << 16) | d->vendor;
	p->pciSubSystemId = (d->sub_device << 16) | d->sub_vendor;
	p->baseClass = 0x3; /* display controller */
	p->subClass = 0x2;  /* 3D controller */
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.%X", d->domain, d->bus, d->dev, d->fn);
	return NVML_SUCCESS;
}

/* The driver's own version, as GSP firmware runs the driver's build. */
API nvmlReturn_t nvmlDeviceGetGspFirmwareVersion(nvmlDevice_t d, char *version)
{
	NEED_DEV(d);
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	return nvml_copy_str(version, 80, nvml_driver_version);
}

/* Unique per board on the node: its PCI location. */
API nvmlReturn_t nvmlDeviceGetBoardId(nvmlDevice_t d, unsigned int *id)
{
	NEED_DEV(d);
	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	*id = (d->domain << 16) | (d->bus << 8) | d->dev;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMultiGpuBoard(nvmlDevice_t d, unsigned int *multi)
{
	NEED_DEV(d);
	if (!multi)
		return NVML_ERROR_INVALID_ARGUMENT;
	*multi = 0;
	return NVML_SUCCESS;
}

/* HGX baseboards number their GPU modules from 1. */
API nvmlReturn_t nvmlDeviceGetModuleId(nvmlDevice_t d, unsigned int *id)
{
	NEED_DEV(d);
	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	*id = d->minor + 1;
	return NVML_SUCCESS;
}

static nvmlReturn_t idle_engine(nvmlDevice_t d, unsigned int *u, unsigned int *period)
{
	NEED_DEV(d);
	if (!u || !period)
		return NVML_ERROR_INVALID_ARGUMENT;
	*u = 0;
	*period = 1000000;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetJpgUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *p) { return idle_engine(d, u, p); }
API nvmlReturn_t nvmlDeviceGetOfaUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *p) { return idle_engine(d, u, p); }

API nvmlReturn_t nvmlDeviceGetAccountingBufferSize(nvmlDevice_t d, unsigned int *size)
{
	NEED_DEV(d);
	if (!size)
		return NVML_ERROR_INVALID_ARGUMENT;
	*size = ACCOUNTING_BUFFER;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t d, nvmlGpuVirtualizationMode_t *mode)
{
	NEED_DEV(d);
	if (!mode)
		return NVML_ERROR_INVALID_ARGUMENT;
	*mode = NVML_GPU_VIRTUALIZATION_MODE_NONE;
	return NVML_SUCCESS;
}

/* Data-center GPUs have no auto boost setting: N/A. */
API nvmlReturn_t nvmlDeviceGetAutoBoostedClocksEnabled(nvmlDevice_t d, nvmlEnableState_t *on, nvmlEnableState_t *dflt)
{
	NEED_DEV(d);
	return NVML_ERROR_NOT_SUPPORTED;
}
