/* What a GPU holds and where it sits: memory, NUMA node and CPUs,
 * persistence, utilization, processes. A mock GPU runs nothing: no process,
 * no utilization, all but the reserved memory free. */
#include <string.h>

#include "internal.h"

API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->mem_total)
		return NVML_ERROR_NOT_SUPPORTED;
	m->total = d->mem_total;
	m->used = d->mem_reserved;
	m->free = d->mem_total - d->mem_reserved;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
	NEED_DEV(d);
	if (!m)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (!d->mem_total)
		return NVML_ERROR_NOT_SUPPORTED;
	m->total = d->mem_total;
	m->reserved = d->mem_reserved;
	m->used = 0;
	m->free = d->mem_total - d->mem_reserved;
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

API nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
	NEED_DEV(d);
	if (!node)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (d->numa_node < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*node = (unsigned)d->numa_node;
	return NVML_SUCCESS;
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

API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	NEED_DEV(d);
	if (!u)
		return NVML_ERROR_INVALID_ARGUMENT;
	u->gpu = u->memory = 0;
	return NVML_SUCCESS;
}

static nvmlReturn_t no_processes(nvmlDevice_t d, unsigned int *count)
{
	NEED_DEV(d);
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = 0;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v1_t *i) { return no_processes(d, c); }
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v2_t *i) { return no_processes(d, c); }
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_processes(d, c); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v1_t *i) { return no_processes(d, c); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v2_t *i) { return no_processes(d, c); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i) { return no_processes(d, c); }
