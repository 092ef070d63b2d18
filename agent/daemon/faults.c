#include "daemon/faults.h"

#include <stdio.h>

#include "lib/log.h"
#include "profile/fault.h"
#include "render/render.h"

/* A fault on an HCA: its port's state files, replaced whole. */
static int hca_fault(struct agent *a, unsigned i, const char *mode, unsigned xid, char *why,
		     size_t len)
{
	struct nvm_hca *h = &a->model.ib.hcas[i];
	bool before = h->port_down;
	const char *reason;

	if (xid) {
		snprintf(why, len, "--xid goes with a GPU's xid mode only");
		return -1;
	}
	if (fault_apply_hca(&a->model, i, mode, &reason)) {
		snprintf(why, len, "%s: %s", mode, reason);
		return -1;
	}
	if (render_hca_refresh(&a->model, i, a->o.root)) {
		h->port_down = before;
		render_hca_refresh(&a->model, i, a->o.root);
		snprintf(why, len, "could not render the fault into %s (see the agent's log)",
			 a->o.root);
		return -1;
	}
	nvm_info("fault: HCA mlx5_%u (%s): %s -> port %s", h->index, h->bus_id, mode,
		 h->port_down ? "down" : "as the profile has it");
	return 0;
}

int agent_fault(struct agent *a, const char *gpu, const char *mode, unsigned xid, char *why,
		size_t len)
{
	int i = fault_find_gpu(&a->model, gpu), hca = fault_find_hca(&a->model, gpu);
	struct nvm_fault before;
	const char *reason;

	if (i < 0 && hca >= 0)
		return hca_fault(a, (unsigned)hca, mode, xid, why, len);
	if (i < 0) {
		snprintf(why, len, "no GPU or HCA \"%s\" in profile %s (give a GPU's index, bus "
				   "id or UUID, or an HCA's mlx5_N or bus id)",
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
	for (unsigned i = 0; i < a->model.ib.nhcas; i++) {
		const struct nvm_hca *h = &a->model.ib.hcas[i];
		char name[32];
		json_object *o;

		if (!h->port_down)
			continue;
		snprintf(name, sizeof(name), "mlx5_%u", h->index);
		o = json_object_new_object();
		json_object_object_add(o, "hca", json_object_new_string(name));
		json_object_object_add(o, "bus_id", json_object_new_string(h->bus_id));
		json_object_object_add(o, "mode", json_object_new_string("port-down"));
		json_object_array_add(arr, o);
	}
	return arr;
}
