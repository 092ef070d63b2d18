#include "daemon/mig.h"

#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "profile/fault.h"
#include "profile/mig.h"
#include "render/render.h"

int agent_mig(struct agent *a, const char *gpu, const char *action, const char *list, char *why,
	      size_t len)
{
	int i = fault_find_gpu(&a->model, gpu);
	struct nvm_gpu *g;
	struct nvm_mig before;
	char layout[256];
	int rc;

	if (i < 0) {
		snprintf(why, len, "no GPU \"%s\" in profile %s (give its index, bus id or UUID)",
			 gpu, a->model.profile_path);
		return -1;
	}
	g = &a->model.gpus[i];
	before = g->mig;
	if (!strcmp(action, "create"))
		rc = mig_create(&g->mig, list, why, len);
	else if (!strcmp(action, "destroy"))
		rc = mig_destroy(&g->mig, list, why, len);
	else {
		snprintf(why, len, "\"%s\": not an action (create, destroy)", action);
		rc = -1;
	}
	if (rc)
		return -1;
	if (render_mig_refresh(&a->model, (unsigned)i, &before, a->o.root, a->o.device_nodes)) {
		struct nvm_mig after = g->mig;

		/* Back to the layout before, files and all. */
		g->mig = before;
		render_mig_refresh(&a->model, (unsigned)i, &after, a->o.root, a->o.device_nodes);
		snprintf(why, len, "could not render the layout into %s (see the agent's log)",
			 a->o.root);
		return -1;
	}
	mig_describe(&g->mig, layout, sizeof(layout));
	nvm_info("mig: GPU %u (%s): %s %s -> %s", g->index, g->bus_id, action, list, layout);
	return 0;
}

/* [{id, profile ("1c.3g.20gb"), start (slice)}, ...] */
static json_object *compute_json(const struct nvm_mig_gi *gi)
{
	json_object *arr = json_object_new_array();

	for (unsigned c = 0; c < gi->nci; c++) {
		json_object *o = json_object_new_object();
		char name[32];

		mig_compute_name(gi, &gi->ci[c], name, sizeof(name));
		json_object_object_add(o, "id", json_object_new_int((int)gi->ci[c].id));
		json_object_object_add(o, "profile", json_object_new_string(name));
		json_object_object_add(o, "start", json_object_new_int((int)gi->ci[c].start));
		json_object_array_add(arr, o);
	}
	return arr;
}

json_object *agent_mig_json(const struct agent *a)
{
	json_object *arr = json_object_new_array();

	for (unsigned i = 0; i < a->model.ngpus; i++) {
		const struct nvm_gpu *g = &a->model.gpus[i];
		json_object *o, *gis;

		if (!g->mig.enabled)
			continue;
		o = json_object_new_object();
		gis = json_object_new_array();
		json_object_object_add(o, "gpu", json_object_new_int((int)g->index));
		json_object_object_add(o, "bus_id", json_object_new_string(g->bus_id));
		for (unsigned k = 0; k < g->mig.ngi; k++) {
			json_object *gi = json_object_new_object();

			json_object_object_add(gi, "id", json_object_new_int((int)g->mig.gi[k].id));
			json_object_object_add(gi, "profile",
					       json_object_new_string(g->mig.gi[k].profile->name));
			json_object_object_add(gi, "profile_id",
					       json_object_new_int((int)g->mig.gi[k].profile->id));
			json_object_object_add(gi, "start", json_object_new_int((int)g->mig.gi[k].start));
			json_object_object_add(gi, "compute_instances", compute_json(&g->mig.gi[k]));
			json_object_array_add(gis, gi);
		}
		json_object_object_add(o, "gpu_instances", gis);
		json_object_array_add(arr, o);
	}
	return arr;
}
