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
 * nvidia-mig-parted creates them. The board's profiles (names, ids, slices,
 * memory, placements) are NVIDIA's, from the MIG user guide's Supported MIG
 * Profiles, kept here per board; a layout NVIDIA would refuse (a profile the
 * board lacks, more instances than fit, no free placement) is refused with
 * file, line and key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/log.h"
#include "mig_layout.h"
#include "profile/mig.h"
#include "profile/profile_int.h"

/* Placements are in memory units, eight on a 7-slice board: a profile of
 * size s may start at 0, s, 2s, ... (starts of them). */
static const struct nvm_mig_profile a100_40gb[] = {
	{ "1g.5gb", 19, 1, 1, 7, 4864, 14, 1, 0, 0, 0, 0 },
	{ "2g.10gb", 14, 2, 2, 3, 9984, 28, 2, 1, 0, 0, 0 },
	{ "3g.20gb", 9, 3, 4, 2, 20096, 42, 3, 2, 0, 0, 0 },
	{ "4g.20gb", 5, 4, 4, 1, 20096, 56, 4, 2, 0, 0, 0 },
	{ "7g.40gb", 0, 7, 8, 1, 40320, 98, 7, 5, 0, 1, 1 },
	{ 0 },
};
static const struct nvm_mig_profile a100_80gb[] = {
	{ "1g.10gb", 19, 1, 1, 7, 9856, 14, 1, 0, 0, 0, 0 },
	{ "1g.20gb", 15, 1, 2, 4, 19968, 14, 1, 1, 0, 0, 0 },
	{ "2g.20gb", 14, 2, 2, 3, 19968, 28, 2, 1, 0, 0, 0 },
	{ "3g.40gb", 9, 3, 4, 2, 40192, 42, 3, 2, 0, 0, 0 },
	{ "4g.40gb", 5, 4, 4, 1, 40192, 56, 4, 2, 0, 0, 0 },
	{ "7g.80gb", 0, 7, 8, 1, 80896, 98, 7, 5, 0, 1, 1 },
	{ 0 },
};
static const struct nvm_mig_profile h100_80gb[] = {
	{ "1g.10gb", 19, 1, 1, 7, 9984, 16, 1, 1, 0, 1, 0 },
	{ "1g.20gb", 15, 1, 2, 4, 19968, 16, 1, 1, 0, 1, 0 },
	{ "2g.20gb", 14, 2, 2, 3, 19968, 32, 2, 2, 0, 2, 0 },
	{ "3g.40gb", 9, 3, 4, 2, 40320, 60, 3, 3, 0, 3, 0 },
	{ "4g.40gb", 5, 4, 4, 1, 40320, 64, 4, 4, 0, 4, 0 },
	{ "7g.80gb", 0, 7, 8, 1, 80896, 132, 8, 7, 0, 7, 1 },
	{ 0 },
};

/* The board's table, by the GPU's name; NULL: not MIG-capable here. */
static const struct nvm_mig_profile *board_table(const char *name)
{
	if (strstr(name, "A100") && strstr(name, "40GB"))
		return a100_40gb;
	if (strstr(name, "A100") && strstr(name, "80GB"))
		return a100_80gb;
	if (strstr(name, "H100") && strstr(name, "80GB"))
		return h100_80gb;
	return NULL;
}

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
						   .start = (unsigned)s, .profile = p };
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

/* Only the default compute instance, which spans the GPU instance. */
static int check_compute(struct ydoc *y, yaml_node_t *e, const char *path)
{
	yaml_node_t *ci = ydoc_get(y, e, "compute_instances");

	if (ci && (!ydoc_is_seq(ci) || ydoc_seq_len(ci) > 1))
		return ydoc_fail(y, ci, path, "nvmirage gives each GPU instance the one compute "
				 "instance spanning it; list at most that one");
	return 0;
}

/* One line of the layout: profile, how many, where (-1: anywhere). */
struct request {
	const struct nvm_mig_profile *p;
	unsigned count;
	int start;
	yaml_node_t *node;
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
		if (!(r->p = find_profile(y, e, table, r->path)) || check_compute(y, e, r->path))
			return -1;
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
				for (unsigned c = 0; c < req[k].count; c++)
					if ((why = mig_add_instance(mig, req[k].p, req[k].start)))
						return ydoc_fail(y, req[k].node, req[k].path, "%s: %s",
								 req[k].p->name, why);
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
	const struct nvm_mig_profile *table = board_table(g->name);
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
				 "(it has A100 40GB and 80GB, H100 80GB)", g->name);
	if (counted && listed)
		return ydoc_fail(y, listed, path, "give gpu_instances or instances, not both");
	if (!ydoc_is_seq(counted ? counted : listed))
		return ydoc_fail(y, counted ? counted : listed, path, "expected a list");
	return parse_layout(y, counted ? counted : listed, counted != NULL, i, table, &g->mig);
}
