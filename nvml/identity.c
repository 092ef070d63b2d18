/* What a GPU is: name, UUID, serial, brand, architecture, numbers, PCI. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "internal.h"

API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int n)
{
	struct nvm_mig_dev *mg = nvml_mig_of(d);
	char name[128];

	if (mg) {
		/* "NVIDIA A100-SXM4-40GB MIG 3g.20gb" (or "MIG 1c.3g.20gb" for
		 * a compute instance of part of it), as NVML names a MIG device */
		snprintf(name, sizeof(name), "%s MIG %s", mg->parent->name, mg->name);
		return nvml_copy_str(s, n, name);
	}
	NEED_DEV(d);
	return nvml_copy_str(s, n, d->name);
}

API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int n)
{
	struct nvm_mig_dev *mg = nvml_mig_of(d);

	if (mg)
		return nvml_copy_str(s, n, mg->uuid);
	NEED_DEV(d);
	return nvml_copy_str(s, n, d->uuid);
}
API nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *s, unsigned int n) { NEED_DEV(d); return nvml_copy_str(s, n, d->vbios); }

API nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *s, unsigned int n)
{
	NEED_DEV(d);
	return d->serial[0] ? nvml_copy_str(s, n, d->serial) : NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t d, char *s, unsigned int n)
{
	NEED_DEV(d);
	return d->part[0] ? nvml_copy_str(s, n, d->part) : NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t d, nvmlBrandType_t *b)
{
	NEED_DEV(d);
	if (!b)
		return NVML_ERROR_INVALID_ARGUMENT;
	*b = !strcasecmp(d->brand, "Tesla") ? NVML_BRAND_TESLA
	   : !strcasecmp(d->brand, "Quadro") ? NVML_BRAND_QUADRO
	   : !strcasecmp(d->brand, "GeForce") ? NVML_BRAND_GEFORCE
	   : !strcasecmp(d->brand, "NVIDIA") ? NVML_BRAND_NVIDIA : NVML_BRAND_UNKNOWN;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, nvmlDeviceArchitecture_t *a)
{
	static const struct { const char *name; unsigned id; } archs[] = {
		{ "Kepler", NVML_DEVICE_ARCH_KEPLER }, { "Maxwell", NVML_DEVICE_ARCH_MAXWELL },
		{ "Pascal", NVML_DEVICE_ARCH_PASCAL }, { "Volta", NVML_DEVICE_ARCH_VOLTA },
		{ "Turing", NVML_DEVICE_ARCH_TURING }, { "Ampere", NVML_DEVICE_ARCH_AMPERE },
		{ "Ada Lovelace", NVML_DEVICE_ARCH_ADA }, { "Ada", NVML_DEVICE_ARCH_ADA },
		{ "Hopper", NVML_DEVICE_ARCH_HOPPER }, { "Blackwell", NVML_DEVICE_ARCH_BLACKWELL },
	};

	NEED_DEV(d);
	if (!a)
		return NVML_ERROR_INVALID_ARGUMENT;
	*a = NVML_DEVICE_ARCH_UNKNOWN;
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++)
		if (!strcasecmp(d->arch, archs[i].name))
			*a = archs[i].id;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int *major, int *minor)
{
	NEED_DEV(d);
	if (!major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->cc_major)
		return NVML_ERROR_NOT_SUPPORTED;
	*major = (int)d->cc_major;
	*minor = (int)d->cc_minor;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned int *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	*m = d->minor;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i)
{
	NEED_DEV(d);
	if (!i)
		return NVML_ERROR_INVALID_ARGUMENT;
	*i = (unsigned)(d - nvml_devs);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
	NEED_DEV(d);
	if (!p)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(p, 0, sizeof(*p));
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.%X", d->domain, d->bus, d->dev, d->fn);
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.%X", d->domain, d->bus, d->dev, d->fn);
	p->domain = d->domain;
	p->bus = d->bus;
	p->device = d->dev;
	p->pciDeviceId = (d->device << 16) | d->vendor;
	p->pciSubSystemId = (d->sub_device << 16) | d->sub_vendor;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }
API nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t *p) { return nvmlDeviceGetPciInfo_v3(d, p); }
