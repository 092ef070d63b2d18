/* mig: a GPU's Multi-Instance GPU mode and layout, in Mokka's keys:
 *
 *   device_defaults:
 *     mig: {mode_current: disabled, mode_pending: disabled, max_gpu_instances: 7}
 *   devices:
 *     - index: 0
 *       mig:
 *         mode_current: enabled
 *         gpu_instances:               # by count, as nvidia-mig-parted asks
 *           - {profile: "3g.20gb", count: 1}
 *           - {profile_id: 19, count: 2}
 *         # or instances: [{profile: "1g.5gb", placement_start: 6}], explicit
 *
 * Each GPU instance has the one compute instance spanning it, as
 * nvidia-mig-parted creates them, unless it lists its compute_instances
 * (mig_compute.c). The board's profiles (names, ids, slices, memory,
 * placements) are NVIDIA's, kept per board in mig_tables.c; a layout
 * NVIDIA would refuse (a profile the board lacks, more instances than
 * fit, no free placement) is refused with file, line and key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/log.h"
#include "mig_layout.h"
#include "profile/mig.h"
#include "profile/profile_int.h"

/* Memory units in use by the instances so far. */
static unsigned used_units(const struct nvm_mig *mig)
{
	unsigned used = 0;

	for (unsigned i = 0; i < mig->ngi; i++)
		used |= nvm_mig_mask(mig->gi[i].profile->size, mig->gi[i].start);
	return used;
}

static unsigned used_slices(const struct nvm_mig *mig)
{
	unsigned n = 0;

	for (unsigned i = 0; i < mig->ngi; i++)
		n += mig->gi[i].profile->slices;
	return n;
}

const char *mig_add_instance(struct nvm_mig *mig, const struct nvm_mig_profile *p, int start)
{
	int s;

	if (mig->ngi == NVM_MIG_MAX_GI || used_slices(mig) + p->slices > NVM_MIG_SLICES)
		return "more compute slices than the board's 7";
	if (start >= 0 && ((unsigned)start % p->size || (unsigned)start / p->size >= p->starts))
		return "that placement is not one of the profile's";
	s = nvm_mig_place(used_units(mig), p->size, p->starts, start);
	if (s < 0)
		return start >= 0 ? "that placement is taken" : "no free placement left for it";
	mig->gi[mig->ngi++] = (struct nvm_mig_gi){ .id = nvm_mig_gi_id(p->size, (unsigned)s),
						   .start = (unsigned)s, .profile = p, .nci = 1,
						   .ci[0] = { .id = 0, .slices = p->slices } };
	return NULL;
}

static int by_id(const void *a, const void *b)
{
	return (int)((const struct nvm_mig_gi *)a)->id - (int)((const struct nvm_mig_gi *)b)->id;
}

/* NVML lists MIG devices by GPU instance id. */
void mig_sort(struct nvm_mig *mig)
{
	qsort(mig->gi, mig->ngi, sizeof(mig->gi[0]), by_id);
}

static const struct nvm_mig_profile *find_profile(struct ydoc *y, yaml_node_t *e,
						  const struct nvm_mig_profile *table,
						  const char *path)
{
	yaml_node_t *byname = ydoc_get(y, e, "profile"), *byid = ydoc_get(y, e, "profile_id");
	char name[32], names[256] = "";
	uint64_t id = 0;

	if (!!byname == !!byid)
		return ydoc_fail(y, e, path, "give exactly one of profile and profile_id"), NULL;
	if (byname && ydoc_str(y, byname, path, name, sizeof(name)))
		return NULL;
	if (byid && ydoc_uint(y, byid, path, 1000, &id))
		return NULL;
	for (const struct nvm_mig_profile *p = table; p->name; p++) {
		if (byname ? !strcasecmp(p->name, name) : p->id == id)
			return p;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s (%u)",
			 names[0] ? ", " : "", p->name, p->id);
	}
	if (byname)
		ydoc_fail(y, byname, path, "\"%s\": not a profile of this board (%s)", name, names);
	else
		ydoc_fail(y, byid, path, "%llu: not a profile id of this board (%s)",
			  (unsigned long long)id, names);
	return NULL;
}

/* One line of the layout: profile, how many, where (-1: anywhere). */
struct request {
	const struct nvm_mig_profile *p;
	unsigned count;
	int start;
	yaml_node_t *node, *compute;
	char path[96];
};

static int parse_layout(struct ydoc *y, yaml_node_t *list, bool counted, unsigned i,
			const struct nvm_mig_profile *table, struct nvm_mig *mig)
{
	struct request req[NVM_MIG_MAX_GI * 2];
	size_t n = ydoc_seq_len(list);

	if (n > sizeof(req) / sizeof(req[0]))
		return ydoc_fail(y, list, "mig", "%zu entries; a board holds at most %d instances",
				 n, NVM_MIG_MAX_GI);
	for (size_t k = 0; k < n; k++) {
		struct request *r = &req[k];
		yaml_node_t *e = ydoc_seq_at(y, list, k), *c;
		uint64_t v = 1;

		snprintf(r->path, sizeof(r->path), "devices[%u].mig.%s[%zu]", i,
			 counted ? "gpu_instances" : "instances", k);
		r->node = e;
		r->start = -1;
		if (!ydoc_is_map(e))
			return ydoc_fail(y, e, r->path, "expected a mapping");
		if (!(r->p = find_profile(y, e, table, r->path)))
			return -1;
		r->compute = ydoc_get(y, e, "compute_instances");
		if (counted && (c = ydoc_get(y, e, "count")) && ydoc_uint(y, c, r->path, 7, &v))
			return -1;
		r->count = (unsigned)v;
		if (!counted && (c = ydoc_get(y, e, "placement_start"))) {
			if (ydoc_uint(y, c, r->path, 7, &v))
				return -1;
			r->start = (int)v;
		}
	}
	/* Fixed placements first, then the widest profiles. */
	for (int fixed = 1; fixed >= 0; fixed--)
		for (unsigned size = 8; size; size /= 2)
			for (size_t k = 0; k < n; k++) {
				const char *why;

				if ((req[k].start >= 0) != fixed || req[k].p->size != size)
					continue;
				for (unsigned c = 0; c < req[k].count; c++) {
					if ((why = mig_add_instance(mig, req[k].p, req[k].start)))
						return ydoc_fail(y, req[k].node, req[k].path, "%s: %s",
								 req[k].p->name, why);
					if (mig_parse_compute(y, req[k].compute, req[k].path,
							      &mig->gi[mig->ngi - 1]))
						return -1;
				}
			}
	mig_sort(mig);
	return 0;
}

static int parse_mode(struct ydoc *y, yaml_node_t *mig, const char *key, const char *path,
		      bool *out)
{
	yaml_node_t *n = ydoc_get(y, mig, key);
	char s[16];

	if (!n)
		return 0;
	if (ydoc_str(y, n, path, s, sizeof(s)))
		return -1;
	if (strcasecmp(s, "enabled") && strcasecmp(s, "disabled"))
		return ydoc_fail(y, n, path, "\"%s\": expected enabled or disabled", s);
	*out = !strcasecmp(s, "enabled");
	return 0;
}

int parse_mig(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults, unsigned i,
	      struct nvm_gpu *g)
{
	const struct nvm_mig_profile *table = mig_board_table(g->name);
	yaml_node_t *mig = ydoc_get(y, dev, "mig"), *counted, *listed;
	char path[64];

	memset(&g->mig, 0, sizeof(g->mig));
	g->mig.table = table;
	snprintf(path, sizeof(path), "devices[%u].mig", i);
	if (!mig) {
		mig = ydoc_get(y, defaults, "mig");
		snprintf(path, sizeof(path), "device_defaults.mig");
	}
	if (!mig)
		return 0;
	if (!ydoc_is_map(mig))
		return ydoc_fail(y, mig, path, "expected a mapping");
	if (parse_mode(y, mig, "mode_current", path, &g->mig.enabled) ||
	    parse_mode(y, mig, "mode_pending", path, &g->mig.pending))
		return -1;
	if (!ydoc_get(y, mig, "mode_pending"))
		g->mig.pending = g->mig.enabled;
	counted = ydoc_get(y, mig, "gpu_instances");
	listed = ydoc_get(y, mig, "instances");
	if (!counted && !listed)
		return 0;
	if (!g->mig.enabled)
		return ydoc_fail(y, counted ? counted : listed, path,
				 "instances need mode_current: enabled");
	if (!table)
		return ydoc_fail(y, mig, path, "nvmirage has no MIG profile table for \"%s\" "
				 "(it has A100 40GB and 80GB, H100 80GB and NVL, GH200 96GB, H200, "
				 "B200)", g->name);
	if (counted && listed)
		return ydoc_fail(y, listed, path, "give gpu_instances or instances, not both");
	if (!ydoc_is_seq(counted ? counted : listed))
		return ydoc_fail(y, counted ? counted : listed, path, "expected a list");
	return parse_layout(y, counted ? counted : listed, counted != NULL, i, table, &g->mig);
}
