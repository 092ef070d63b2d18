/* What a GPU says of its InfoROM and its memory's health, in Mokka's
 * schema: inforom, retired_pages (page retirement, before Ampere),
 * remapped_rows (row remapping, Ampere and later) and gpu_operation_mode.
 * A section the profile leaves out is one the GPU does not support (NVML
 * answers NOT_SUPPORTED, nvidia-smi prints N/A), as a real H200 has no
 * retired pages and no operation mode; "N/A" inside a section says the same
 * of one value. Faults (`nvmirage fault ecc`) add to the remapped rows at
 * run time (nvml/faults.c). */
#include <stdio.h>
#include <string.h>

#include "profile/profile_int.h"

static bool is_na(const char *s) { return !strcmp(s, "N/A") || !*s; }

/* map.key, a string, into out ("" for N/A or no key). */
static int get_text(struct tctx *c, yaml_node_t *map, const char *path, const char *key, char *out,
		    size_t len)
{
	yaml_node_t *n = ydoc_get(c->y, map, key);
	char kp[128];

	out[0] = '\0';
	if (!n)
		return 0;
	snprintf(kp, sizeof(kp), "%s.%s", path, key);
	if (ydoc_str(c->y, n, kp, out, len))
		return -1;
	if (is_na(out))
		out[0] = '\0';
	return 0;
}

static int parse_inforom(struct tctx *c)
{
	static const char *const keys[] = { "image_version", "oem_object", "ecc_object", "pwr_object",
					    NULL };
	struct nvm_telemetry *t = c->t;
	char path[64];
	yaml_node_t *s = tel_section(c, "inforom", path, sizeof(path));

	if (!s)
		return 0;
	return ydoc_only_keys(c->y, s, path, keys) ||
	       get_text(c, s, path, "image_version", t->inforom_image, sizeof(t->inforom_image)) ||
	       get_text(c, s, path, "oem_object", t->inforom_object[0], sizeof(t->inforom_object[0])) ||
	       get_text(c, s, path, "ecc_object", t->inforom_object[1], sizeof(t->inforom_object[1])) ||
	       get_text(c, s, path, "pwr_object", t->inforom_object[2], sizeof(t->inforom_object[2]));
}

/* {count, addresses: [...]}: count is the number of addresses listed. */
static int parse_retirement(struct tctx *c, yaml_node_t *s, const char *path, const char *key,
			    unsigned which)
{
	static const char *const keys[] = { "count", "addresses", NULL };
	struct nvm_telemetry *t = c->t;
	yaml_node_t *n = ydoc_get(c->y, s, key), *list;
	char kp[96], ap[128];
	unsigned count = 0;

	if (!n)
		return 0;
	snprintf(kp, sizeof(kp), "%s.%s", path, key);
	if (ydoc_only_keys(c->y, n, kp, keys) || tel_uint(c, n, kp, "count", NVM_MAX_RETIRED, &count))
		return -1;
	list = ydoc_get(c->y, n, "addresses");
	if (list && !ydoc_is_seq(list))
		return ydoc_fail(c->y, list, kp, "addresses: expected a list");
	if ((list ? ydoc_seq_len(list) : 0) != count)
		return ydoc_fail(c->y, n, kp, "count %u, but %zu addresses listed", count,
				 list ? ydoc_seq_len(list) : 0);
	for (unsigned k = 0; k < count; k++) {
		snprintf(ap, sizeof(ap), "%s.addresses[%u]", kp, k);
		if (ydoc_uint(c->y, ydoc_seq_at(c->y, list, k), ap, UINT64_MAX, &t->retired_addr[which][k]))
			return -1;
	}
	t->nretired[which] = count;
	return 0;
}

static int parse_retired_pages(struct tctx *c)
{
	static const char *const keys[] = { "single_bit_retirement", "double_bit_retirement",
					    "pending_blacklist", "pending_retirement", NULL };
	struct nvm_telemetry *t = c->t;
	bool blacklist = false, retirement = false;
	char path[64];
	yaml_node_t *s = tel_section(c, "retired_pages", path, sizeof(path));

	if (!s)
		return 0;
	t->retired = true;
	if (ydoc_only_keys(c->y, s, path, keys) ||
	    parse_retirement(c, s, path, "single_bit_retirement", 0) ||
	    parse_retirement(c, s, path, "double_bit_retirement", 1) ||
	    tel_bool(c, s, path, "pending_blacklist", &blacklist) ||
	    tel_bool(c, s, path, "pending_retirement", &retirement))
		return -1;
	t->retired_pending = blacklist || retirement;
	return 0;
}

static int parse_remapped_rows(struct tctx *c)
{
	static const char *const keys[] = { "correctable", "uncorrectable", "pending",
					    "failure_occurred", "availability_histogram", NULL };
	static const char *const banks[] = { "max", "high", "partial", "low", "none", NULL };
	struct nvm_telemetry *t = c->t;
	char path[64], hp[96];
	yaml_node_t *s = tel_section(c, "remapped_rows", path, sizeof(path)), *h;

	if (!s)
		return 0;
	t->remapped = true;
	if (ydoc_only_keys(c->y, s, path, keys) ||
	    tel_uint(c, s, path, "correctable", UINT32_MAX, &t->remap_corr) ||
	    tel_uint(c, s, path, "uncorrectable", UINT32_MAX, &t->remap_unc) ||
	    tel_bool(c, s, path, "pending", &t->remap_pending) ||
	    tel_bool(c, s, path, "failure_occurred", &t->remap_failed))
		return -1;
	h = ydoc_get(c->y, s, "availability_histogram");
	if (!h)
		return 0;
	snprintf(hp, sizeof(hp), "%s.availability_histogram", path);
	if (ydoc_only_keys(c->y, h, hp, banks))
		return -1;
	for (unsigned k = 0; banks[k]; k++)
		if (tel_uint(c, h, hp, banks[k], UINT32_MAX, &t->remap_banks[k]))
			return -1;
	t->histogram = true;
	return 0;
}

/* "all_on", "compute", "low_dp" (NVML's order), or "N/A". */
static int get_opmode(struct tctx *c, yaml_node_t *s, const char *path, const char *key, int *out)
{
	static const char *const modes[] = { "all_on", "compute", "low_dp", "N/A", NULL };
	yaml_node_t *n = ydoc_get(c->y, s, key);
	char kp[96];
	unsigned m;

	if (!n)
		return 0;
	snprintf(kp, sizeof(kp), "%s.%s", path, key);
	if (tel_word(c, n, kp, modes, &m))
		return -1;
	*out = m == 3 ? -1 : (int)m;
	return 0;
}

static int parse_operation_mode(struct tctx *c)
{
	static const char *const keys[] = { "current", "pending", NULL };
	char path[64];
	yaml_node_t *s = tel_section(c, "gpu_operation_mode", path, sizeof(path));

	if (!s)
		return 0;
	return ydoc_only_keys(c->y, s, path, keys) ||
	       get_opmode(c, s, path, "current", &c->t->opmode_current) ||
	       get_opmode(c, s, path, "pending", &c->t->opmode_pending);
}

int parse_health(struct tctx *c)
{
	c->t->opmode_current = c->t->opmode_pending = -1;
	return parse_inforom(c) || parse_retired_pages(c) || parse_remapped_rows(c) ||
	       parse_operation_mode(c);
}
