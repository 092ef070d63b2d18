/* What a GPU holds and where it sits: memory, NUMA node and CPUs,
 * persistence, processes. Memory in use is the reserved part and what the
 * profile's processes hold. */
#include <string.h>

#include "internal.h"

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	struct nvm_mig_dev *mg = nvml_mig_of(d);

	if (mg && m) {
		/* A MIG device's own memory, none of it in use. */
		m->total = m->free = (unsigned long long)mg->memory_mb << 20;
		m->used = 0;
		return NVML_SUCCESS;
	}
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->mem_total)
		return NVML_ERROR_NOT_SUPPORTED;
	m->total = d->mem_total;
	m->used = d->mem_reserved + d->tel.mem_used;
	if (m->used > m->total) /* a profile whose processes hold more than there is */
		m->used = m->total;
	m->free = d->mem_total - m->used;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	struct nvm_mig_dev *mg = nvml_mig_of(d);

	if (mg && m && m->version == nvmlMemory_v2) {
		m->total = m->free = (unsigned long long)mg->memory_mb << 20;
		m->reserved = m->used = 0;
		return NVML_SUCCESS;
	}
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (!d->mem_total)
		return NVML_ERROR_NOT_SUPPORTED;
	m->total = d->mem_total;
	m->reserved = d->mem_reserved;
	m->used = d->tel.mem_used < d->mem_total - d->mem_reserved ? d->tel.mem_used
								    : d->mem_total - d->mem_reserved;
	m->free = d->mem_total - d->mem_reserved - m->used;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t d, nvmlBAR1Memory_t *b)
{
	NEED_DEV(d);
	if (!b)
		return NVML_ERROR_INVALID_ARGUMENT;
	/* Data-center GPUs map their whole memory through BAR1. */
	b->bar1Total = d->mem_total;
	b->bar1Used = 0;
	b->bar1Free = d->mem_total;
	return d->mem_total ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

/* The CPUs of local_cpulist, as an array of unsigned longs. */
API nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned int n, unsigned long *set)
{
	NEED_DEV(d);
	if (!set || !n)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(set, 0, n * sizeof(*set));
	for (unsigned c = 0; c < MAX_CPUS && c / (8 * sizeof(long)) < n; c++)
		if (d->cpus[c / 8] >> (c % 8) & 1)
			set[c / (8 * sizeof(long))] |= 1UL << (c % (8 * sizeof(long)));
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	*m = NVML_FEATURE_ENABLED; /* a mock GPU is always ready */
	return NVML_SUCCESS;
}

/* The processes of a GPU into NVML's array of any version: fields past
 * pid and usedGpuMemory (the instance ids) are those of a GPU without MIG. */
static nvmlReturn_t processes(nvmlDevice_t d, bool graphics, unsigned int *count, void *infos,
			      size_t size)
{
	struct nvm_proc p[256];
	unsigned n, room;

	NEED_DEV(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	n = nvml_gpu_processes(d, graphics, p, 256);
	room = *count;
	*count = n;
	if (room < n)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	if (n && !infos)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned i = 0; i < n; i++) {
		nvmlProcessInfo_v2_t v = { .pid = p[i].pid, .usedGpuMemory = p[i].used,
					   .gpuInstanceId = 0xFFFFFFFFu,
					   .computeInstanceId = 0xFFFFFFFFu };

		memcpy((char *)infos + i * size, &v, size);
	}
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v1_t *i) { return processes(d, false, c, i, sizeof(*i)); }
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v2_t *i) { return processes(d, false, c, i, sizeof(*i)); }
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return processes(d, false, c, i, sizeof(*i)); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v1_t *i) { return processes(d, true, c, i, sizeof(*i)); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v2_t *i) { return processes(d, true, c, i, sizeof(*i)); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return processes(d, true, c, i, sizeof(*i)); }

API nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int len)
{
	char buf[256];

	NEED_INIT();
	if (!name || !len)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (nvml_process_name(pid, buf, sizeof(buf)))
		return NVML_ERROR_NOT_FOUND;
	return nvml_copy_str(name, len, buf);
}
