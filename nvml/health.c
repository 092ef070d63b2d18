/* What a GPU says of its InfoROM and its memory's health: from the
 * profile's inforom, retired_pages, remapped_rows and gpu_operation_mode
 * (rendered into the telemetry file), with the faults in force on top (an
 * `ecc` fault is one more uncorrectable row, pending). What the profile
 * leaves out the GPU does not support, as a real H200 has no page
 * retirement and no operation mode: NOT_SUPPORTED, which nvidia-smi prints
 * as N/A. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The telemetry file's health lines (agent/render/render_telemetry.c):
 *   inforom_image=TEXT          inforom_object=N TEXT (N: nvmlInforomObject_t)
 *   retired=PENDING             retired_pages=CAUSE ADDR...
 *   remapped=CORR UNC PENDING FAILED
 *   remap_banks=MAX HIGH PARTIAL LOW NONE
 *   opmode=CURRENT PENDING */
bool nvml_health_line(struct nvm_health *h, const char *key, const char *v)
{
	unsigned a, b, c, d, e;
	char *end;

	if (!strcmp(key, "inforom_image")) {
		snprintf(h->inforom_image, sizeof(h->inforom_image), "%s", v);
	} else if (!strcmp(key, "inforom_object")) {
		a = (unsigned)strtoul(v, &end, 10);
		if (a < NVML_INFOROM_COUNT && *end == ' ')
			snprintf(h->inforom_object[a], sizeof(h->inforom_object[a]), "%s", end + 1);
	} else if (!strcmp(key, "retired")) {
		h->retired = true;
		h->retired_pending = atoi(v) != 0;
	} else if (!strcmp(key, "retired_pages")) {
		a = (unsigned)strtoul(v, &end, 10);
		if (a >= NVML_PAGE_RETIREMENT_CAUSE_COUNT)
			return true;
		h->nretired[a] = 0;
		while (h->nretired[a] < 16) {
			const char *p = end;
			unsigned long long x = strtoull(p, &end, 0);

			if (end == p)
				break;
			h->retired_addr[a][h->nretired[a]++] = x;
		}
	} else if (!strcmp(key, "remapped")) {
		if (sscanf(v, "%u %u %u %u", &a, &b, &c, &d) == 4)
			h->remapped = true, h->remap_corr = a, h->remap_unc = b, h->remap_pending = c,
			h->remap_failed = d;
	} else if (!strcmp(key, "remap_banks")) {
		if (sscanf(v, "%u %u %u %u %u", &a, &b, &c, &d, &e) == 5)
			h->histogram = true, h->remap_banks[0] = a, h->remap_banks[1] = b,
			h->remap_banks[2] = c, h->remap_banks[3] = d, h->remap_banks[4] = e;
	} else if (!strcmp(key, "opmode")) {
		if (sscanf(v, "%u %u", &a, &b) == 2 && a <= NVML_GOM_LOW_DP && b <= NVML_GOM_LOW_DP)
			h->opmode = true, h->opmode_current = a, h->opmode_pending = b;
	} else {
		return false;
	}
	return true;
}

API nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t d, char *version, unsigned int len)
{
	NEED_DEV(d);
	if (!version)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->tel.health.inforom_image[0])
		return NVML_ERROR_NOT_SUPPORTED;
	return nvml_copy_str(version, len, d->tel.health.inforom_image);
}

API nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t d, nvmlInforomObject_t object, char *version,
					     unsigned int len)
{
	NEED_DEV(d);
	if (!version || (unsigned)object >= NVML_INFOROM_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->tel.health.inforom_object[object][0])
		return NVML_ERROR_NOT_SUPPORTED;
	return nvml_copy_str(version, len, d->tel.health.inforom_object[object]);
}

static nvmlReturn_t retired_pages(nvmlDevice_t d, nvmlPageRetirementCause_t cause, unsigned *count,
				  unsigned long long *addresses, unsigned long long *timestamps)
{
	const struct nvm_health *h;
	unsigned n;

	NEED_DEV(d);
	h = &d->tel.health;
	if (!count || (unsigned)cause >= NVML_PAGE_RETIREMENT_CAUSE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!h->retired)
		return NVML_ERROR_NOT_SUPPORTED;
	n = h->nretired[cause];
	if (*count < n) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (n && !addresses)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned k = 0; k < n; k++) {
		addresses[k] = h->retired_addr[cause][k];
		if (timestamps) /* the profile has none: since the tree was rendered */
			timestamps[k] = (unsigned long long)d->tel.born;
	}
	*count = n;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t cause,
					   unsigned int *count, unsigned long long *addresses)
{
	return retired_pages(d, cause, count, addresses, NULL);
}

API nvmlReturn_t nvmlDeviceGetRetiredPages_v2(nvmlDevice_t d, nvmlPageRetirementCause_t cause,
					      unsigned int *count, unsigned long long *addresses,
					      unsigned long long *timestamps)
{
	return retired_pages(d, cause, count, addresses, timestamps);
}

/* An ECC fault leaves a page to retire on a GPU that retires pages. */
API nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, nvmlEnableState_t *pending)
{
	struct nvm_state st;

	NEED_DEV(d);
	if (!pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->tel.health.retired)
		return NVML_ERROR_NOT_SUPPORTED;
	nvml_read_state(d->bus_id, &st);
	*pending = d->tel.health.retired_pending || st.ecc_pending ? NVML_FEATURE_ENABLED
								   : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

/* Ampere and later remap a row for each uncorrectable error, at the next
 * GPU reset: until then the remapping is pending. The profile's counts,
 * and each `ecc` fault one more. */
API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int *corr, unsigned int *unc,
					   unsigned int *pending, unsigned int *failed)
{
	const struct nvm_health *h;
	struct nvm_state st;

	NEED_DEV(d);
	h = &d->tel.health;
	if (!corr || !unc || !pending || !failed)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!h->remapped)
		return NVML_ERROR_NOT_SUPPORTED;
	nvml_read_state(d->bus_id, &st);
	*corr = h->remap_corr;
	*unc = h->remap_unc + st.ecc_errors;
	*pending = h->remap_pending || st.ecc_pending;
	*failed = h->remap_failed;
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetRowRemapperHistogram(nvmlDevice_t d, nvmlRowRemapperHistogramValues_t *v)
{
	const struct nvm_health *h;

	NEED_DEV(d);
	h = &d->tel.health;
	if (!v)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!h->histogram)
		return NVML_ERROR_NOT_SUPPORTED;
	*v = (nvmlRowRemapperHistogramValues_t){ .max = h->remap_banks[0], .high = h->remap_banks[1],
						 .partial = h->remap_banks[2], .low = h->remap_banks[3],
						 .none = h->remap_banks[4] };
	return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetGpuOperationMode(nvmlDevice_t d, nvmlGpuOperationMode_t *current,
					       nvmlGpuOperationMode_t *pending)
{
	NEED_DEV(d);
	if (!current || !pending)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (!d->tel.health.opmode)
		return NVML_ERROR_NOT_SUPPORTED;
	*current = (nvmlGpuOperationMode_t)d->tel.health.opmode_current;
	*pending = (nvmlGpuOperationMode_t)d->tel.health.opmode_pending;
	return NVML_SUCCESS;
}
