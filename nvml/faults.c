/* What a GPU's faults look like through NVML (the agent renders them, see
 * `nvmirage fault`): a lost GPU fails every call with GPU_IS_LOST, ECC
 * errors show in the counters and as rows to remap, Xid events reach the
 * callers waiting on an event set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

void nvml_read_state(const char *bus_id, struct nvm_state *st)
{
	char path[256], text[1024], v[512], *save = NULL;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "/sys/module/nvidia/nvmirage/%s.state", bus_id);
	if (nvml_read_text(path, text, sizeof(text)))
		return;
	nvml_extra_value(text, "mode", v, sizeof(v));
	st->health = !strcmp(v, "lost") || !strcmp(v, "fallen-off-bus") ? GPU_LOST
		   : !strcmp(v, "excluded") ? GPU_EXCLUDED : GPU_OK;
	nvml_extra_value(text, "ecc_errors", v, sizeof(v));
	st->ecc_errors = (unsigned)strtoul(v, NULL, 10);
	nvml_extra_value(text, "ecc_pending", v, sizeof(v));
	st->ecc_pending = atoi(v) != 0;
	nvml_extra_value(text, "xids", v, sizeof(v));
	for (char *t = strtok_r(v, " ", &save); t && st->nxids < STATE_XIDS;
	     t = strtok_r(NULL, " ", &save))
		if (sscanf(t, "%llu:%u", &st->xids[st->nxids].seq, &st->xids[st->nxids].code) == 2)
			st->nxids++;
}

nvmlReturn_t nvml_check_gpu(nvmlDevice_t d)
{
	struct nvm_state st;

	nvml_read_state(d->bus_id, &st);
	return st.health == GPU_OK ? NVML_SUCCESS : NVML_ERROR_GPU_IS_LOST;
}

API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
	NEED_DEV(d);
	if (!current || !pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	*current = *pending = NVML_FEATURE_ENABLED; /* data-center GPUs run with ECC on */
	return NVML_SUCCESS;
}

/* Uncorrectable errors only: a fault adds one to the volatile and the
 * aggregate count alike (the agent has not restarted the driver since). */
API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t type,
					     nvmlEccCounterType_t counter, unsigned long long *count)
{
	struct nvm_state st;

	NEED_DEV(d);
	if (!count || (unsigned)type >= NVML_MEMORY_ERROR_TYPE_COUNT ||
	    (unsigned)counter >= NVML_ECC_COUNTER_TYPE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvml_read_state(d->bus_id, &st);
	*count = type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED ? st.ecc_errors : 0;
	return NVML_SUCCESS;
}

/* Errors by where they happened: the GPU's memory (DRAM: HBM on a
 * data-center GPU) holds the ones counted above, its SRAM none; the other
 * locations are older GPUs'. */
API nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t d, nvmlMemoryErrorType_t type,
						 nvmlEccCounterType_t counter,
						 nvmlMemoryLocation_t where, unsigned long long *count)
{
	NEED_DEV(d);
	if (!count || (unsigned)where >= NVML_MEMORY_LOCATION_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (where == NVML_MEMORY_LOCATION_SRAM) {
		if ((unsigned)type >= NVML_MEMORY_ERROR_TYPE_COUNT ||
		    (unsigned)counter >= NVML_ECC_COUNTER_TYPE_COUNT)
			return NVML_ERROR_INVALID_ARGUMENT;
		*count = 0;
		return NVML_SUCCESS;
	}
	if (where != NVML_MEMORY_LOCATION_DRAM)
		return NVML_ERROR_NOT_SUPPORTED;
	return nvmlDeviceGetTotalEccErrors(d, type, counter, count);
}

/* The SRAM's error status: none, and below every threshold. */
API nvmlReturn_t nvmlDeviceGetSramEccErrorStatus(nvmlDevice_t d, nvmlEccSramErrorStatus_t *status)
{
	NEED_DEV(d);
	if (!status)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (status->version != nvmlEccSramErrorStatus_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	memset(status, 0, sizeof(*status));
	status->version = nvmlEccSramErrorStatus_v1;
	return NVML_SUCCESS;
}

/* An event set: the GPUs registered and, for each, the last Xid event
 * delivered (events before the registration are not delivered). */
struct nvmlEventSet_st {
	unsigned n;
	struct {
		nvmlDevice_t d;
		unsigned long long types, seen;
	} reg[MAX_GPUS];
};

#define SUPPORTED_EVENTS (nvmlEventTypeXidCriticalError)
/* How often a wait looks at the registered GPUs' state. */
#define EVENT_POLL_NS 10000000L

API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
	NEED_INIT();
	if (!set)
		return NVML_ERROR_INVALID_ARGUMENT;
	*set = calloc(1, sizeof(**set));
	return *set ? NVML_SUCCESS : NVML_ERROR_MEMORY;
}

API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types)
{
	NEED_DEV(d);
	if (!types)
		return NVML_ERROR_INVALID_ARGUMENT;
	*types = SUPPORTED_EVENTS;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
	struct nvm_state st;
	unsigned k;

	NEED_DEV(d);
	if (!set)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (types & ~SUPPORTED_EVENTS)
		return NVML_ERROR_NOT_SUPPORTED;
	for (k = 0; k < set->n && set->reg[k].d != d; k++)
		;
	if (k == MAX_GPUS)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (k == set->n) {
		nvml_read_state(d->bus_id, &st);
		set->reg[k].d = d;
		set->reg[k].seen = st.nxids ? st.xids[st.nxids - 1].seq : 0;
		set->n++;
	}
	set->reg[k].types |= types;
	return NVML_SUCCESS;
}

/* The oldest event not yet delivered, into data. */
static bool next_event(nvmlEventSet_t set, nvmlEventData_t *data)
{
	unsigned long long best = 0;
	unsigned best_reg = 0, best_code = 0;

	for (unsigned k = 0; k < set->n; k++) {
		struct nvm_state st;

		if (!(set->reg[k].types & nvmlEventTypeXidCriticalError))
			continue;
		nvml_read_state(set->reg[k].d->bus_id, &st);
		for (unsigned x = 0; x < st.nxids; x++)
			if (st.xids[x].seq > set->reg[k].seen && (!best || st.xids[x].seq < best)) {
				best = st.xids[x].seq;
				best_reg = k;
				best_code = st.xids[x].code;
			}
	}
	if (!best)
		return false;
	set->reg[best_reg].seen = best;
	memset(data, 0, sizeof(*data));
	data->device = set->reg[best_reg].d;
	data->eventType = nvmlEventTypeXidCriticalError;
	data->eventData = best_code;
	data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
	return true;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
	long long end = now_ns() + (long long)timeoutms * 1000000;

	NEED_INIT();
	if (!set || !data)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (;;) {
		struct timespec nap = { 0, EVENT_POLL_NS };

		if (next_event(set, data))
			return NVML_SUCCESS;
		if (now_ns() >= end)
			return NVML_ERROR_TIMEOUT;
		nanosleep(&nap, NULL);
	}
}

API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
	return nvmlEventSetWait_v2(set, data, timeoutms);
}

API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
	NEED_INIT();
	free(set);
	return NVML_SUCCESS;
}
