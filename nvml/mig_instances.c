/* MIG's GPU and compute instances through NVML (what nvidia-smi mig -lgip,
 * -lgi, -lcip and -lci print, and what the MIG manager and Kubernetes'
 * device plugin read): the board's GPU instance profiles with their
 * placements and remaining capacity, the GPU instances, and their compute
 * instances. A compute instance's handle is its MIG device's entry
 * (mig.c), a GPU instance's the entry of its first listed compute
 * instance, so only the instances this process may open are listed;
 * capacity counts them all.
 * Creating and destroying is `nvmirage mig`'s, on the agent: here they
 * answer NO_PERMISSION, as NVML does to a process without the MIG config
 * capability. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "mig_layout.h"

/* A GPU whose MIG instances can be listed: MIG on, not a MIG device. */
#define NEED_MIG_GPU(d)                                                                            \
	do {                                                                                       \
		if (nvml_mig_of(d))                                                                \
			return NVML_ERROR_INVALID_ARGUMENT;                                        \
		NEED_DEV(d);                                                                       \
		if (!(d)->mig_on)                                                                  \
			return NVML_ERROR_NOT_SUPPORTED;                                           \
	} while (0)

static struct nvm_mig_dev *gi_of(nvmlGpuInstance_t gi)
{
	return nvml_mig_of((nvmlDevice_t)(void *)gi);
}

static struct nvm_mig_dev *ci_of(nvmlComputeInstance_t ci)
{
	return nvml_mig_of((nvmlDevice_t)(void *)ci);
}

/* The handle of GPU instance gi of d: its first listed compute instance
 * (one is listed: gi is a listed one's). */
static nvmlGpuInstance_t gi_handle(struct nvmlDevice_st *d, unsigned gi)
{
	unsigned k = 0;

	while (d->mig[k].gi != gi)
		k++;
	return (nvmlGpuInstance_t)(void *)&d->mig[k];
}

/* The board's profile asked for by its NVML enum value, or NULL. */
static const struct nvm_mig_prof *prof_by_enum(const struct nvmlDevice_st *d, unsigned e)
{
	for (unsigned k = 0; k < d->nmigp; k++)
		if (nvm_mig_gi_enum(d->migp[k].slices, d->migp[k].size) == e)
			return &d->migp[k];
	return NULL;
}

static nvmlReturn_t gi_profile(nvmlDevice_t d, unsigned profile, const struct nvm_mig_prof **p)
{
	NEED_MIG_GPU(d);
	if (profile >= NVML_GPU_INSTANCE_PROFILE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	*p = prof_by_enum(d, profile);
	return *p ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

API nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t d, unsigned int profile,
						     nvmlGpuInstanceProfileInfo_t *info)
{
	const struct nvm_mig_prof *p;
	nvmlReturn_t r = gi_profile(d, profile, &p);

	if (r)
		return r;
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	*info = (nvmlGpuInstanceProfileInfo_t){
		.id = p->id, .sliceCount = p->slices, .instanceCount = p->starts,
		.multiprocessorCount = p->sms, .copyEngineCount = p->copy_engines,
		.decoderCount = p->decoders, .encoderCount = p->encoders, .jpegCount = p->jpegs,
		.ofaCount = p->ofas, .memorySizeMB = p->memory_mb,
	};
	return NVML_SUCCESS;
}

/* v2 and v3 differ in layout (v3 drops isP2pSupported): filled by version. */
API nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t d, unsigned int profile,
						      nvmlGpuInstanceProfileInfo_v2_t *info)
{
	nvmlGpuInstanceProfileInfo_t v1;
	nvmlReturn_t r = nvmlDeviceGetGpuInstanceProfileInfo(d, profile, &v1);
	const struct nvm_mig_prof *p;
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];

	if (r)
		return r;
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	p = prof_by_enum(d, profile);
	snprintf(name, sizeof(name), "MIG %s", p->name);
	if (info->version == nvmlGpuInstanceProfileInfo_v2) {
		*info = (nvmlGpuInstanceProfileInfo_v2_t){
			.version = info->version, .id = v1.id, .sliceCount = v1.sliceCount,
			.instanceCount = v1.instanceCount, .multiprocessorCount = v1.multiprocessorCount,
			.copyEngineCount = v1.copyEngineCount, .decoderCount = v1.decoderCount,
			.encoderCount = v1.encoderCount, .jpegCount = v1.jpegCount,
			.ofaCount = v1.ofaCount, .memorySizeMB = v1.memorySizeMB,
		};
		memcpy(info->name, name, sizeof(name));
		return NVML_SUCCESS;
	}
	if (info->version == nvmlGpuInstanceProfileInfo_v3) {
		nvmlGpuInstanceProfileInfo_v3_t *v3 = (nvmlGpuInstanceProfileInfo_v3_t *)(void *)info;

		*v3 = (nvmlGpuInstanceProfileInfo_v3_t){
			.version = info->version, .id = v1.id, .sliceCount = v1.sliceCount,
			.instanceCount = v1.instanceCount, .multiprocessorCount = v1.multiprocessorCount,
			.copyEngineCount = v1.copyEngineCount, .decoderCount = v1.decoderCount,
			.encoderCount = v1.encoderCount, .jpegCount = v1.jpegCount,
			.ofaCount = v1.ofaCount, .memorySizeMB = v1.memorySizeMB,
		};
		memcpy(v3->name, name, sizeof(name));
		return NVML_SUCCESS;
	}
	return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

/* Placements of the profile of driver id profileId, every one the board
 * has (free or not), as NVML lists them. */
API nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t d, unsigned int profileId,
							       nvmlGpuInstancePlacement_t *placements,
							       unsigned int *count)
{
	const struct nvm_mig_prof *p;

	NEED_MIG_GPU(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!(p = nvml_mig_prof(d, profileId)))
		return NVML_ERROR_NOT_SUPPORTED;
	if (placements) {
		if (*count < p->starts)
			return NVML_ERROR_INSUFFICIENT_SIZE;
		for (unsigned k = 0; k < p->starts; k++)
			placements[k] = (nvmlGpuInstancePlacement_t){ k * p->size, p->size };
	}
	*count = p->starts;
	return NVML_SUCCESS;
}

/* How many more of the profile fit, added one after another where the
 * driver puts them, beside every GPU instance there is. */
API nvmlReturn_t nvmlDeviceGetGpuInstanceRemainingCapacity(nvmlDevice_t d, unsigned int profileId,
							   unsigned int *count)
{
	const struct nvm_mig_prof *p;
	unsigned used, slices, n = 0;
	int s;

	NEED_MIG_GPU(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!(p = nvml_mig_prof(d, profileId)))
		return NVML_ERROR_NOT_SUPPORTED;
	used = d->mig_used_units, slices = d->mig_used_slices;
	while (slices + p->slices <= NVM_MIG_SLICES &&
	       (s = nvm_mig_place(used, p->size, p->starts, -1)) >= 0) {
		used |= nvm_mig_mask(p->size, (unsigned)s);
		slices += p->slices;
		n++;
	}
	*count = n;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t d, unsigned int profileId,
					   nvmlGpuInstance_t *gis, unsigned int *count)
{
	unsigned n = 0;

	NEED_MIG_GPU(d);
	if (!count || !gis)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!nvml_mig_prof(d, profileId))
		return NVML_ERROR_NOT_SUPPORTED;
	for (unsigned k = 0; k < d->nmig; k++) {
		nvmlGpuInstance_t h = gi_handle(d, d->mig[k].gi);

		if (d->mig[k].profile_id == profileId && (void *)h == (void *)&d->mig[k])
			gis[n++] = h;
	}
	*count = n;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t d, unsigned int id, nvmlGpuInstance_t *gi)
{
	NEED_MIG_GPU(d);
	if (!gi)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned k = 0; k < d->nmig; k++)
		if (d->mig[k].gi == id) {
			*gi = (nvmlGpuInstance_t)(void *)&d->mig[k];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

API nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t *info)
{
	struct nvm_mig_dev *m = gi_of(gi);

	NEED_INIT();
	if (!m || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	*info = (nvmlGpuInstanceInfo_t){
		.device = m->parent, .id = m->gi, .profileId = m->profile_id,
		.placement = { m->start, m->size },
	};
	return NVML_SUCCESS;
}

/* The compute instance profiles of a GPU instance of s slices: c slices
 * each (nvm_mig_ci_allowed), c of the board's one-slice SMs, the GPU
 * instance's engines shared; named "MIG 1c.3g.20gb", or as the GPU
 * instance when it spans it. */
static nvmlReturn_t ci_profile(nvmlGpuInstance_t gi, unsigned profile, unsigned eng,
			       nvmlComputeInstanceProfileInfo_v2_t *out)
{
	struct nvm_mig_dev *m = gi_of(gi);
	unsigned c = 0;

	NEED_INIT();
	if (!m || !out || profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT ||
	    eng != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned k = 1; k <= NVM_MIG_SLICES; k++)
		if (nvm_mig_ci_enum(k) == profile && (k <= 4 || k == 7))
			c = k;
	if (!c || !nvm_mig_ci_allowed(m->slices, c))
		return NVML_ERROR_NOT_SUPPORTED;
	*out = (nvmlComputeInstanceProfileInfo_v2_t){
		.id = profile, .sliceCount = c,
		.instanceCount = nvm_mig_ci_starts(m->slices, c),
		.multiprocessorCount = nvml_mig_ci_sms(m->parent, m, c),
		.sharedCopyEngineCount = m->copy_engines, .sharedDecoderCount = m->decoders,
		.sharedEncoderCount = m->encoders, .sharedJpegCount = m->jpegs,
		.sharedOfaCount = m->ofas,
	};
	if (c == m->slices)
		snprintf(out->name, sizeof(out->name), "MIG %s", m->profile);
	else
		snprintf(out->name, sizeof(out->name), "MIG %uc.%s", c, m->profile);
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gi, unsigned int profile,
							      unsigned int eng,
							      nvmlComputeInstanceProfileInfo_t *info)
{
	nvmlComputeInstanceProfileInfo_v2_t v;
	nvmlReturn_t r = ci_profile(gi, profile, eng, &v);

	if (r)
		return r;
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	*info = (nvmlComputeInstanceProfileInfo_t){
		.id = v.id, .sliceCount = v.sliceCount, .instanceCount = v.instanceCount,
		.multiprocessorCount = v.multiprocessorCount,
		.sharedCopyEngineCount = v.sharedCopyEngineCount,
		.sharedDecoderCount = v.sharedDecoderCount, .sharedEncoderCount = v.sharedEncoderCount,
		.sharedJpegCount = v.sharedJpegCount, .sharedOfaCount = v.sharedOfaCount,
	};
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfoV(nvmlGpuInstance_t gi, unsigned int profile,
							       unsigned int eng,
							       nvmlComputeInstanceProfileInfo_v2_t *info)
{
	nvmlComputeInstanceProfileInfo_v2_t v;
	nvmlReturn_t r = ci_profile(gi, profile, eng, &v);

	if (r)
		return r;
	if (!info)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (info->version == nvmlComputeInstanceProfileInfo_v2) {
		v.version = info->version;
		*info = v;
		return NVML_SUCCESS;
	}
	if (info->version == nvmlComputeInstanceProfileInfo_v3) {
		nvmlComputeInstanceProfileInfo_v3_t *v3 = (nvmlComputeInstanceProfileInfo_v3_t *)(void *)info;

		memset(v3, 0, sizeof(*v3));
		memcpy(v3, &v, sizeof(v));
		v3->version = nvmlComputeInstanceProfileInfo_v3;
		return NVML_SUCCESS;
	}
	return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

/* How many more of the profile fit beside every compute instance the GPU
 * instance has, each at the lowest free placement. */
API nvmlReturn_t nvmlGpuInstanceGetComputeInstanceRemainingCapacity(nvmlGpuInstance_t gi,
								    unsigned int profileId,
								    unsigned int *count)
{
	struct nvm_mig_dev *m = gi_of(gi);
	nvmlComputeInstanceProfileInfo_v2_t v;
	nvmlReturn_t r = ci_profile(gi, profileId, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &v);
	unsigned used, n = 0;
	int at;

	if (r)
		return r;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	used = m->gi_ci_used;
	while ((at = nvm_mig_ci_place(used, m->slices, v.sliceCount, -1)) >= 0) {
		used |= nvm_mig_mask(v.sliceCount, (unsigned)at);
		n++;
	}
	*count = n;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpuInstanceGetComputeInstancePossiblePlacements(nvmlGpuInstance_t gi,
								     unsigned int profileId,
								     nvmlComputeInstancePlacement_t *placements,
								     unsigned int *count)
{
	nvmlComputeInstanceProfileInfo_v2_t v;
	nvmlReturn_t r = ci_profile(gi, profileId, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &v);
	unsigned step;

	if (r)
		return r;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	step = nvm_mig_ci_align(v.sliceCount);
	if (placements) {
		if (*count < v.instanceCount)
			return NVML_ERROR_INSUFFICIENT_SIZE;
		for (unsigned k = 0; k < v.instanceCount; k++)
			placements[k] = (nvmlComputeInstancePlacement_t){ k * step, v.sliceCount };
	}
	*count = v.instanceCount;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gi, unsigned int profileId,
						    nvmlComputeInstance_t *cis, unsigned int *count)
{
	struct nvm_mig_dev *m = gi_of(gi);
	nvmlComputeInstanceProfileInfo_v2_t v;
	nvmlReturn_t r = ci_profile(gi, profileId, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &v);

	if (r)
		return r;
	if (!cis || !count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	for (unsigned k = 0; k < m->parent->nmig; k++)
		if (m->parent->mig[k].gi == m->gi && m->parent->mig[k].ci_slices == v.sliceCount)
			cis[(*count)++] = (nvmlComputeInstance_t)(void *)&m->parent->mig[k];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gi, unsigned int id,
						       nvmlComputeInstance_t *ci)
{
	struct nvm_mig_dev *m = gi_of(gi);

	NEED_INIT();
	if (!m || !ci)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned k = 0; k < m->parent->nmig; k++)
		if (m->parent->mig[k].gi == m->gi && m->parent->mig[k].ci == id) {
			*ci = (nvmlComputeInstance_t)(void *)&m->parent->mig[k];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

API nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t ci, nvmlComputeInstanceInfo_t *info)
{
	struct nvm_mig_dev *m = ci_of(ci);

	NEED_INIT();
	if (!m || !info)
		return NVML_ERROR_INVALID_ARGUMENT;
	*info = (nvmlComputeInstanceInfo_t){
		.device = m->parent, .gpuInstance = gi_handle(m->parent, m->gi), .id = m->ci,
		.profileId = nvm_mig_ci_enum(m->ci_slices),
		.placement = { m->ci_start, m->ci_slices },
	};
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlComputeInstanceGetInfo(nvmlComputeInstance_t ci, nvmlComputeInstanceInfo_t *info)
{
	return nvmlComputeInstanceGetInfo_v2(ci, info);
}

/* Changes are the agent's (nvmirage mig). */
API nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t d, unsigned int profileId, nvmlGpuInstance_t *gi)
{
	NEED_MIG_GPU(d);
	return NVML_ERROR_NO_PERMISSION;
}

API nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t d, unsigned int profileId,
							  const nvmlGpuInstancePlacement_t *placement,
							  nvmlGpuInstance_t *gi)
{
	NEED_MIG_GPU(d);
	return NVML_ERROR_NO_PERMISSION;
}

API nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gi)
{
	NEED_INIT();
	return gi_of(gi) ? NVML_ERROR_NO_PERMISSION : NVML_ERROR_INVALID_ARGUMENT;
}

API nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gi, unsigned int profileId,
						      nvmlComputeInstance_t *ci)
{
	NEED_INIT();
	return gi_of(gi) ? NVML_ERROR_NO_PERMISSION : NVML_ERROR_INVALID_ARGUMENT;
}

API nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t ci)
{
	NEED_INIT();
	return ci_of(ci) ? NVML_ERROR_NO_PERMISSION : NVML_ERROR_INVALID_ARGUMENT;
}
