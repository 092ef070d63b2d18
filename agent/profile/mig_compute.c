/* A GPU instance's compute instances, as a profile lists them under the
 * instance (nvidia-mig-parted's names: "1c.3g.20gb", or the GPU instance's
 * own name for the one spanning it):
 *
 *   instances:
 *     - profile: 3g.20gb
 *       compute_instances:
 *         - {profile: 1c.3g.20gb, count: 2}
 *         - {profile: 1c.3g.20gb, placement_start: 2}
 *
 * Placed as the driver places them (the lowest free placement, a c-slice
 * instance at a multiple of the power of two at or above c) and numbered
 * with the lowest free id; a layout the driver would refuse is refused
 * with file, line and key. Without the key, the one spanning it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mig_layout.h"
#include "profile/mig.h"
#include "profile/profile_int.h"

static bool ci_id_taken(const struct nvm_mig_gi *gi, unsigned id)
{
	for (unsigned k = 0; k < gi->nci; k++)
		if (gi->ci[k].id == id)
			return true;
	return false;
}

static int by_ci_id(const void *a, const void *b)
{
	return (int)((const struct nvm_mig_ci *)a)->id - (int)((const struct nvm_mig_ci *)b)->id;
}

const char *mig_add_compute(struct nvm_mig_gi *gi, unsigned c, int start)
{
	unsigned s = gi->profile->slices, used = 0, id = 0;
	int at;

	if (!nvm_mig_ci_allowed(s, c))
		return "not a compute instance size this GPU instance holds";
	if (start >= 0 && ((unsigned)start % nvm_mig_ci_align(c) ||
			   (unsigned)start / nvm_mig_ci_align(c) >= nvm_mig_ci_starts(s, c)))
		return "that placement is not one of the compute instance profile's";
	for (unsigned k = 0; k < gi->nci; k++)
		used |= nvm_mig_mask(gi->ci[k].slices, gi->ci[k].start);
	if ((at = nvm_mig_ci_place(used, s, c, start)) < 0)
		return start >= 0 ? "that placement is taken" : "no free compute slices left for it";
	while (ci_id_taken(gi, id))
		id++;
	gi->ci[gi->nci++] = (struct nvm_mig_ci){ .id = id, .slices = c, .start = (unsigned)at };
	qsort(gi->ci, gi->nci, sizeof(gi->ci[0]), by_ci_id);
	return NULL;
}

void mig_compute_name(const struct nvm_mig_gi *gi, const struct nvm_mig_ci *ci, char *out,
		      size_t len)
{
	if (ci->slices == gi->profile->slices)
		snprintf(out, len, "%s", gi->profile->name);
	else
		snprintf(out, len, "%uc.%s", ci->slices, gi->profile->name);
}

/* The slices of the compute instance profile named name in gi: 0 if it
 * has none, and the names it has in names. */
static unsigned ci_slices(const struct nvm_mig_gi *gi, const char *name, char *names, size_t len)
{
	const char *gname = gi->profile->name;
	unsigned s = gi->profile->slices, c;
	char *end;
	size_t at = 0;

	if (!strcasecmp(name, gname))
		return s;
	c = (unsigned)strtoul(name, &end, 10);
	if (end != name && (*end == 'c' || *end == 'C') && end[1] == '.' &&
	    !strcasecmp(end + 2, gname) && c && c < s && nvm_mig_ci_allowed(s, c))
		return c;
	for (c = 1; c < s; c++)
		if (nvm_mig_ci_allowed(s, c))
			at += (size_t)snprintf(names + at, len - at, "%uc.%s, ", c, gname);
	snprintf(names + at, len - at, "%s", gname);
	return 0;
}

/* One entry of the list: its profile's slices, how many, where. */
struct ci_request {
	unsigned slices, count;
	int start;
	yaml_node_t *node;
	char path[128];
};

static int parse_entry(struct ydoc *y, yaml_node_t *e, const struct nvm_mig_gi *gi,
		       struct ci_request *r)
{
	yaml_node_t *n;
	char name[48], names[160];
	uint64_t v;

	r->node = e, r->count = 1, r->start = -1;
	if (!ydoc_is_map(e))
		return ydoc_fail(y, e, r->path, "expected a mapping");
	if (!(n = ydoc_get(y, e, "profile")))
		return ydoc_fail(y, e, r->path, "profile is missing (\"1c.%s\", ...)",
				 gi->profile->name);
	if (ydoc_str(y, n, r->path, name, sizeof(name)))
		return -1;
	if (!(r->slices = ci_slices(gi, name, names, sizeof(names))))
		return ydoc_fail(y, n, r->path, "\"%s\": not a compute instance profile of %s (%s)",
				 name, gi->profile->name, names);
	if ((n = ydoc_get(y, e, "count"))) {
		if (ydoc_uint(y, n, r->path, NVM_MIG_MAX_CI, &v))
			return -1;
		r->count = (unsigned)v;
	}
	if ((n = ydoc_get(y, e, "placement_start"))) {
		if (ydoc_uint(y, n, r->path, NVM_MIG_SLICES - 1, &v))
			return -1;
		r->start = (int)v;
	}
	return 0;
}

int mig_parse_compute(struct ydoc *y, yaml_node_t *list, const char *path, struct nvm_mig_gi *gi)
{
	struct ci_request req[NVM_MIG_MAX_CI];
	size_t n;

	if (!list)
		return 0;
	if (!ydoc_is_seq(list) || !(n = ydoc_seq_len(list)))
		return ydoc_fail(y, list, path, "compute_instances: expected a list of at least one");
	if (n > NVM_MIG_MAX_CI)
		return ydoc_fail(y, list, path, "%zu compute instances; a GPU instance holds at "
				 "most one per slice", n);
	for (size_t k = 0; k < n; k++) {
		snprintf(req[k].path, sizeof(req[k].path), "%s.compute_instances[%zu]", path, k);
		if (parse_entry(y, ydoc_seq_at(y, list, k), gi, &req[k]))
			return -1;
	}
	gi->nci = 0;
	/* Fixed placements first, then the widest, as for GPU instances. */
	for (int fixed = 1; fixed >= 0; fixed--)
		for (unsigned c = NVM_MIG_SLICES; c; c--)
			for (size_t k = 0; k < n; k++) {
				const char *why;

				if ((req[k].start >= 0) != fixed || req[k].slices != c)
					continue;
				for (unsigned i = 0; i < req[k].count; i++)
					if ((why = mig_add_compute(gi, c, req[k].start)))
						return ydoc_fail(y, req[k].node, req[k].path, "%s", why);
			}
	if (!gi->nci)
		return ydoc_fail(y, list, path, "compute_instances: every count is 0; a GPU "
				 "instance here has at least one");
	return 0;
}
