/* MIG: the mode of each GPU, its MIG devices (the compute instances of its
 * GPU instances), and what NVML says of them, from the GPU's driver file
 * ("mig=", "mig_profiles=", "mig_gi=" and "mig_ci=" lines, as the agent
 * rendered the board's profiles and the layout). A MIG device's handle is one of its parent's
 * nvm_mig_dev entries; the calls that take whole GPUs only refuse it.
 * A MIG device whose nvidia-caps nodes the device cgroup denies is not
 * listed, as NVML lists only the instances a container was given. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mig_layout.h"
#include "mig_minor.h"

struct nvm_mig_dev *nvml_mig_of(nvmlDevice_t h)
{
	if (!nvml_refcount || !h)
		return NULL;
	for (unsigned i = 0; i < nvml_ndev; i++) {
		struct nvmlDevice_st *d = &nvml_devs[i];

		if ((void *)h >= (void *)d->mig && (void *)h < (void *)(d->mig + d->nmig)) {
			struct nvm_mig_dev *m = (struct nvm_mig_dev *)(void *)h;

			/* The GPU may have moved into nvml_devs after loading. */
			m->parent = d;
			return m;
		}
	}
	return NULL;
}

static uint64_t fnv1a64(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* "MIG-" and a UUID made from the parent's and the instance's ids: the
 * same in every process, different for every instance. */
static void mig_uuid(struct nvm_mig_dev *m)
{
	char key[96];
	uint64_t a, b;

	snprintf(key, sizeof(key), "%s/%u/%u", m->parent->uuid, m->gi, m->ci);
	a = fnv1a64(key, 14695981039346656037ull);
	b = fnv1a64(key, a);
	snprintf(m->uuid, sizeof(m->uuid), "MIG-%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32),
		 (unsigned)(a >> 16) & 0xffff, (unsigned)(0x4000 | (a & 0x0fff)),
		 (unsigned)(0x8000 | ((b >> 48) & 0x3fff)), (unsigned long long)(b & 0xffffffffffffull));
}

/* Whether this process may open both of m's nvidia-caps nodes (Slurm gives
 * a job the two of its instance, the container toolkit a container the
 * same). A node that is missing or has no driver is not denied. */
static bool mig_allowed(const struct nvmlDevice_st *d, const struct nvm_mig_dev *m)
{
	unsigned minors[2] = {nvm_mig_minor(d->minor, m->gi, -1),
			      nvm_mig_minor(d->minor, m->gi, (int)m->ci)};
	char node[64];

	for (unsigned i = 0; i < 2; i++) {
		snprintf(node, sizeof(node), "/dev/nvidia-caps/nvidia-cap%u", minors[i]);
		if (nvml_denied(node))
			return false;
	}
	return true;
}

const struct nvm_mig_prof *nvml_mig_prof(const struct nvmlDevice_st *d, unsigned id)
{
	for (unsigned k = 0; k < d->nmigp; k++)
		if (d->migp[k].id == id)
			return &d->migp[k];
	return NULL;
}

/* "mig_profiles=NAME:ID:SLICES:SIZE:STARTS:MB:SMS:CE:DEC:ENC:JPG:OFA ..." */
static void load_profiles(const char *extra, struct nvmlDevice_st *d)
{
	char list[1024], *save = NULL;

	d->nmigp = 0;
	nvml_extra_value(extra, "mig_profiles", list, sizeof(list));
	for (char *tok = strtok_r(list, " ", &save); tok && d->nmigp < NVM_MIG_PROFILES;
	     tok = strtok_r(NULL, " ", &save)) {
		struct nvm_mig_prof *p = &d->migp[d->nmigp];

		if (sscanf(tok, "%15[^:]:%u:%u:%u:%u:%u:%u:%u:%u:%u:%u:%u", p->name, &p->id,
			   &p->slices, &p->size, &p->starts, &p->memory_mb, &p->sms, &p->copy_engines,
			   &p->decoders, &p->encoders, &p->jpegs, &p->ofas) == 12 &&
		    p->slices && p->slices <= NVM_MIG_SLICES && p->size && p->size <= NVM_MIG_UNITS)
			d->nmigp++;
	}
}

unsigned nvml_mig_ci_sms(const struct nvmlDevice_st *d, const struct nvm_mig_dev *m, unsigned c)
{
	unsigned one_slice = 0;

	if (c == m->slices)
		return m->sms;
	for (unsigned k = 0; k < d->nmigp; k++)
		if (d->migp[k].slices == 1 && d->migp[k].size == 1)
			one_slice = d->migp[k].sms;
	return c * one_slice;
}

/* "mig_gi=GI_ID:PROFILE_ID:START ...": the GPU instances, as templates of
 * their MIG devices (GPU instance fields only). */
static unsigned load_gis(const char *extra, struct nvmlDevice_st *d, struct nvm_mig_dev *gis)
{
	char list[1024], *save = NULL;
	unsigned n = 0;

	nvml_extra_value(extra, "mig_gi", list, sizeof(list));
	for (char *tok = strtok_r(list, " ", &save); tok && n < NVM_MIG_MAX;
	     tok = strtok_r(NULL, " ", &save)) {
		struct nvm_mig_dev *m = &gis[n];
		const struct nvm_mig_prof *p;
		unsigned pid;

		memset(m, 0, sizeof(*m));
		if (sscanf(tok, "%u:%u:%u", &m->gi, &pid, &m->start) != 3 ||
		    !(p = nvml_mig_prof(d, pid)))
			continue;
		memcpy(m->profile, p->name, sizeof(m->profile)); /* both 16, NUL-ended */
		m->profile_id = p->id, m->slices = p->slices, m->size = p->size;
		m->memory_mb = p->memory_mb, m->sms = p->sms, m->copy_engines = p->copy_engines;
		m->decoders = p->decoders, m->encoders = p->encoders, m->jpegs = p->jpegs;
		m->ofas = p->ofas;
		m->parent = d;
		d->mig_used_units |= nvm_mig_mask(m->size, m->start);
		d->mig_used_slices += m->slices;
		n++;
	}
	return n;
}

void nvml_load_mig(const char *extra, struct nvmlDevice_st *d)
{
	struct nvm_mig_dev gis[NVM_MIG_MAX], cis[NVM_MIG_MAX];
	char mode[16], list[1024], *save = NULL;
	int on = 0, pending = 0;
	unsigned ngi, nci = 0;

	d->mig_on = d->mig_pending = false;
	d->nmig = d->nmigp = d->mig_used_units = d->mig_used_slices = 0;
	nvml_extra_value(extra, "mig", mode, sizeof(mode));
	if (sscanf(mode, "%d %d", &on, &pending) != 2)
		return;
	d->mig_on = on, d->mig_pending = pending;
	load_profiles(extra, d);
	ngi = load_gis(extra, d, gis);
	/* "mig_ci=GI_ID:CI_ID:SLICES:START ...", by GPU instance, then
	 * compute instance id: the MIG devices, in NVML's order. */
	nvml_extra_value(extra, "mig_ci", list, sizeof(list));
	for (char *tok = strtok_r(list, " ", &save); tok && nci < NVM_MIG_MAX;
	     tok = strtok_r(NULL, " ", &save)) {
		unsigned gi, ci, c, at, k = 0;

		if (sscanf(tok, "%u:%u:%u:%u", &gi, &ci, &c, &at) != 4)
			continue;
		while (k < ngi && gis[k].gi != gi)
			k++;
		if (k == ngi || !nvm_mig_ci_allowed(gis[k].slices, c))
			continue;
		gis[k].gi_ci_used |= nvm_mig_mask(c, at);
		cis[nci] = gis[k];
		cis[nci].ci = ci, cis[nci].ci_slices = c, cis[nci].ci_start = at;
		cis[nci].ci_sms = nvml_mig_ci_sms(d, &gis[k], c);
		if (c == gis[k].slices)
			snprintf(cis[nci].name, sizeof(cis[nci].name), "%s", gis[k].profile);
		else
			snprintf(cis[nci].name, sizeof(cis[nci].name), "%uc.%s", c, gis[k].profile);
		nci++;
	}
	for (unsigned k = 0; k < nci; k++) {
		struct nvm_mig_dev *m = &d->mig[d->nmig];

		*m = cis[k];
		for (unsigned g = 0; g < ngi; g++) /* every compute instance's, listed or not */
			if (gis[g].gi == m->gi)
				m->gi_ci_used = gis[g].gi_ci_used;
		if (!mig_allowed(d, m))
			continue;
		mig_uuid(m);
		d->nmig++;
	}
}

API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pending)
{
	NEED_DEV(d);
	if (!cur || !pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cur = d->mig_on ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
	*pending = d->mig_pending ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
	return NVML_SUCCESS;
}

/* A 7-slice board holds at most 7 MIG devices; none with MIG off. */
API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *count)
{
	NEED_DEV(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = d->mig_on ? NVM_MIG_MAX : 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int i,
						     nvmlDevice_t *mig)
{
	NEED_DEV(d);
	if (!mig)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->mig_on)
		return NVML_ERROR_NOT_SUPPORTED;
	if (i >= d->nmig)
		return NVML_ERROR_NOT_FOUND;
	*mig = (nvmlDevice_t)(void *)&d->mig[i];
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t d, unsigned int *is_mig)
{
	if (!is_mig)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (nvml_mig_of(d)) {
		*is_mig = 1;
		return NVML_SUCCESS;
	}
	NEED_DEV(d);
	*is_mig = 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t h, nvmlDevice_t *d)
{
	struct nvm_mig_dev *m = nvml_mig_of(h);

	NEED_INIT();
	if (!m || !d)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = m->parent;
	return NVML_SUCCESS;
}

/* GPU and compute instance ids: a MIG device's only. */
static nvmlReturn_t instance_id(nvmlDevice_t h, unsigned int *id, bool gi)
{
	struct nvm_mig_dev *m = nvml_mig_of(h);

	if (!m) {
		NEED_DEV(h);
		return NVML_ERROR_NOT_SUPPORTED;
	}
	if (!id)
		return NVML_ERROR_INVALID_ARGUMENT;
	*id = gi ? m->gi : m->ci;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t h, unsigned int *id)
{
	return instance_id(h, id, true);
}

API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t h, unsigned int *id)
{
	return instance_id(h, id, false);
}

/* What a MIG device is made of (Slurm names its gres type from the slice
 * counts and memory when the name does not say). */
API nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t h, nvmlDeviceAttributes_t *a)
{
	struct nvm_mig_dev *m = nvml_mig_of(h);

	if (!m) {
		NEED_DEV(h);
		return NVML_ERROR_NOT_SUPPORTED;
	}
	if (!a)
		return NVML_ERROR_INVALID_ARGUMENT;
	*a = (nvmlDeviceAttributes_t){
		.multiprocessorCount = m->ci_sms, .sharedCopyEngineCount = m->copy_engines,
		.sharedDecoderCount = m->decoders, .sharedEncoderCount = m->encoders,
		.sharedJpegCount = m->jpegs, .sharedOfaCount = m->ofas,
		.gpuInstanceSliceCount = m->slices, .computeInstanceSliceCount = m->ci_slices,
		.memorySizeMB = m->memory_mb,
	};
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetAttributes(nvmlDevice_t h, nvmlDeviceAttributes_t *a)
{
	return nvmlDeviceGetAttributes_v2(h, a);
}
