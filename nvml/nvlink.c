/* NVLink, from the profile's nvlink section (files.c reads it): links to
 * peer GPUs report that GPU's PCI address, links to NVSwitches report an
 * NVSwitch, the rest are down. GPUs without NVLink: NOT_SUPPORTED, which
 * Slurm's gpu/nvml takes as "no links", as on a PCIe card. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* A link of d, or an error: NOT_SUPPORTED without NVLink, INVALID_ARGUMENT
 * for a link number past the GPU's links (as NVML answers both). */
static nvmlReturn_t get_link(nvmlDevice_t d, unsigned int link, const struct nvm_link **out)
{
	NEED_DEV(d);
	if (!d->nvlink_version)
		return NVML_ERROR_NOT_SUPPORTED;
	if (link >= d->nvlink_count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*out = &d->links[link];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t *active)
{
	const struct nvm_link *l;
	nvmlReturn_t r = get_link(d, link, &l);

	if (r != NVML_SUCCESS)
		return r;
	if (!active)
		return NVML_ERROR_INVALID_ARGUMENT;
	*active = l->up ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned int link, unsigned int *version)
{
	const struct nvm_link *l;
	nvmlReturn_t r = get_link(d, link, &l);

	if (r != NVML_SUCCESS)
		return r;
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	*version = d->nvlink_version;
	return NVML_SUCCESS;
}

/* The far end's PCI info. An NVSwitch is not a PCI device of this node (on
 * NVL72 racks it sits in a switch tray): its info is all zero, so that no
 * caller mistakes it for one of the GPUs. */
API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *p)
{
	const struct nvm_link *l;
	nvmlReturn_t r = get_link(d, link, &l);
	unsigned dom, bus, dev, fn;

	if (r != NVML_SUCCESS)
		return r;
	if (!p)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!l->up)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(p, 0, sizeof(*p));
	if (l->to_switch || sscanf(l->bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return NVML_SUCCESS;
	for (unsigned i = 0; i < nvml_ndev; i++)
		if (!strcmp(nvml_devs[i].bus_id, l->bus_id))
			return nvmlDeviceGetPciInfo_v3(&nvml_devs[i], p);
	/* A peer this process may not open (device cgroup): its address only. */
	snprintf(p->busIdLegacy, sizeof(p->busIdLegacy), "%04X:%02X:%02X.%X", dom, bus, dev, fn);
	snprintf(p->busId, sizeof(p->busId), "%08X:%02X:%02X.%X", dom, bus, dev, fn);
	p->domain = dom;
	p->bus = bus;
	p->device = dev;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t d, unsigned int link, nvmlPciInfo_t *p)
{
	return nvmlDeviceGetNvLinkRemotePciInfo_v2(d, link, p);
}

API nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link,
						     nvmlIntNvLinkDeviceType_t *type)
{
	const struct nvm_link *l;
	nvmlReturn_t r = get_link(d, link, &l);

	if (r != NVML_SUCCESS)
		return r;
	if (!type)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!l->up)
		return NVML_ERROR_NOT_SUPPORTED;
	*type = l->to_switch ? NVML_NVLINK_DEVICE_TYPE_SWITCH : NVML_NVLINK_DEVICE_TYPE_GPU;
	return NVML_SUCCESS;
}

/* A link's speed in MB/s by NVLink generation, as nvidia-smi nvlink -s
 * prints it per link (26.562 GB/s on Hopper, 53.125 on Blackwell). */
static unsigned link_mbps(unsigned version)
{
	static const unsigned mbps[] = { 0, 20000, 25000, 25000, 26562, 53125 };

	return version < sizeof(mbps) / sizeof(mbps[0]) ? mbps[version] : mbps[5];
}

/* The per-link speed fields: L0..L5 are 84..89, L6..L11 132..137. */
static int speed_field_link(unsigned id)
{
	if (id >= NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 && id <= NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 + 5)
		return (int)(id - NVML_FI_DEV_NVLINK_SPEED_MBPS_L0);
	if (id >= NVML_FI_DEV_NVLINK_SPEED_MBPS_L6 && id <= NVML_FI_DEV_NVLINK_SPEED_MBPS_L6 + 5)
		return (int)(id - NVML_FI_DEV_NVLINK_SPEED_MBPS_L6) + 6;
	return -1;
}

bool nvml_nvlink_field(nvmlDevice_t d, nvmlFieldValue_t *v)
{
	unsigned id = v->fieldId, speed = link_mbps(d->nvlink_version);
	int link = speed_field_link(id);

	if (id != NVML_FI_DEV_NVLINK_LINK_COUNT && id != NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON &&
	    id != NVML_FI_DEV_NVLINK_GET_SPEED && id != NVML_FI_DEV_NVLINK_GET_STATE &&
	    id != NVML_FI_DEV_NVLINK_GET_VERSION && link < 0)
		return false;
	if (!d->nvlink_version) {
		v->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
		return true;
	}
	if (id == NVML_FI_DEV_NVLINK_GET_SPEED || id == NVML_FI_DEV_NVLINK_GET_STATE ||
	    id == NVML_FI_DEV_NVLINK_GET_VERSION)
		link = (int)v->scopeId;
	if (link >= (int)d->nvlink_count) {
		v->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
		return true;
	}
	if (id == NVML_FI_DEV_NVLINK_LINK_COUNT)
		nvml_field_uint(v, d->nvlink_count);
	else if (id == NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON)
		nvml_field_uint(v, speed);
	else if (id == NVML_FI_DEV_NVLINK_GET_STATE)
		nvml_field_uint(v, d->links[link].up);
	else if (id == NVML_FI_DEV_NVLINK_GET_VERSION)
		nvml_field_uint(v, d->nvlink_version);
	else
		nvml_field_uint(v, d->links[link].up ? speed : 0);
	return true;
}
