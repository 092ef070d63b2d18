#include "daemon/faults.h"

#include <stdio.h>

#include "lib/log.h"
#include "profile/fault.h"
#include "render/render.h"

int agent_fault(struct agent *a, const char *gpu, const char *mode, unsigned xid, char *why,
		size_t len)
{
	int i = fault_find_gpu(&a->model, gpu);
	struct nvm_fault before;
	const char *reason;

	if (i < 0) {
		snprintf(why, len, "no GPU \"%s\" in profile %s (give an index, a bus id or a UUID)",
			 gpu, a->model.profile_path);
		return -1;
	}
	before = a->model.gpus[i].fault;
	if (fault_apply(&a->model, (unsigned)i, mode, xid, &reason)) {
		snprintf(why, len, "%s: %s", mode, reason);
		return -1;
	}
	if (render_gpu_refresh(&a->model, (unsigned)i, a->o.root)) {
		a->model.gpus[i].fault = before;
		render_gpu_refresh(&a->model, (unsigned)i, a->o.root);
		snprintf(why, len, "could not render the fault into %s (see the agent's log)",
			 a->o.root);
		return -1;
	}
	nvm_info("fault: GPU %u (%s): %s%s%.0u -> %s, %u uncorrectable ECC errors, %u Xid events",
		 a->model.gpus[i].index, a->model.gpus[i].bus_id, mode, xid ? " " : "", xid,
		 fault_mode_name(a->model.gpus[i].fault.mode), a->model.gpus[i].fault.ecc_errors,
		 a->model.gpus[i].fault.xid_total);
	return 0;
}

json_object *agent_faults_json(const struct agent *a)
{
	json_object *arr = json_object_new_array();

	for (unsigned i = 0; i < a->model.ngpus; i++) {
		const struct nvm_gpu *g = &a->model.gpus[i];
		const struct nvm_fault *f = &g->fault;
		json_object *o, *xids;

		if (f->mode == NVM_FAULT_NONE && !f->ecc_errors && !f->xid_total)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "gpu", json_object_new_int((int)g->index));
		json_object_object_add(o, "bus_id", json_object_new_string(g->bus_id));
		json_object_object_add(o, "mode", json_object_new_string(fault_mode_name(f->mode)));
		json_object_object_add(o, "ecc_errors", json_object_new_int((int)f->ecc_errors));
		json_object_object_add(o, "ecc_pending", json_object_new_boolean(f->ecc_pending));
		json_object_object_add(o, "xid_events", json_object_new_int((int)f->xid_total));
		xids = json_object_new_array();
		for (unsigned k = 0; k < f->nxids; k++)
			json_object_array_add(xids, json_object_new_int((int)f->xids[k].code));
		json_object_object_add(o, "xids", xids);
		json_object_array_add(arr, o);
	}
	return arr;
}
