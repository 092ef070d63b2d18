#include "profile/fault.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "lib/log.h"
#include "profile/profile_int.h"

#define XID_FALLEN_OFF_BUS 79 /* "GPU has fallen off the bus" */
#define XID_DBE 48           /* "Double Bit ECC Error" */

const char *fault_mode_name(enum nvm_fault_mode mode)
{
	switch (mode) {
	case NVM_FAULT_LOST: return "lost";
	case NVM_FAULT_FALLEN: return "fallen-off-bus";
	case NVM_FAULT_EXCLUDED: return "excluded";
	default: return "none";
	}
}

int fault_find_gpu(const struct nvm_model *m, const char *sel)
{
	unsigned dom, bus, dev, fn, idx;
	char tail;

	if (sscanf(sel, "%u%c", &idx, &tail) == 1) {
		for (unsigned i = 0; i < m->ngpus; i++)
			if (m->gpus[i].index == idx)
				return (int)i;
		return -1;
	}
	if (sscanf(sel, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4) {
		for (unsigned i = 0; i < m->ngpus; i++) {
			const struct nvm_gpu *g = &m->gpus[i];

			if (g->domain == dom && g->bus == bus && g->device == dev && g->function == fn)
				return (int)i;
		}
		return -1;
	}
	for (unsigned i = 0; i < m->ngpus; i++)
		if (!strcasecmp(m->gpus[i].uuid, sel))
			return (int)i;
	return -1;
}

int fault_find_hca(const struct nvm_model *m, const char *sel)
{
	unsigned dom, bus, dev, fn, idx;
	char tail;

	if (sscanf(sel, "mlx5_%u%c", &idx, &tail) == 1) {
		for (unsigned i = 0; i < m->ib.nhcas; i++)
			if (m->ib.hcas[i].index == idx)
				return (int)i;
		return -1;
	}
	if (sscanf(sel, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4 && !dev && !fn)
		for (unsigned i = 0; i < m->ib.nhcas; i++)
			if (m->ib.hcas[i].domain == dom && m->ib.hcas[i].bus == bus)
				return (int)i;
	return -1;
}

int fault_apply_hca(struct nvm_model *m, unsigned i, const char *what, const char **why)
{
	if (!strcmp(what, "port-down")) {
		m->ib.hcas[i].port_down = true;
	} else if (!strcmp(what, "clear")) {
		m->ib.hcas[i].port_down = false;
	} else {
		*why = "unknown mode for an HCA (port-down, clear)";
		return -1;
	}
	return 0;
}

static void add_xid(struct nvm_model *m, struct nvm_fault *f, unsigned code)
{
	if (f->nxids >= NVM_MAX_XIDS)
		memmove(f->xids, f->xids + 1, sizeof(f->xids) - sizeof(f->xids[0]));
	f->xids[f->nxids < NVM_MAX_XIDS ? f->nxids : NVM_MAX_XIDS - 1] =
		(struct nvm_xid){ .seq = ++m->xid_seq, .code = code };
	if (f->nxids < NVM_MAX_XIDS)
		f->nxids++;
	f->xid_total++;
}

int fault_apply(struct nvm_model *m, unsigned i, const char *what, unsigned xid,
		const char **why)
{
	struct nvm_fault *f = &m->gpus[i].fault;

	if (!strcmp(what, "xid") && (xid < 1 || xid > 65535)) {
		*why = "an Xid event needs a code 1..65535 (--xid N)";
		return -1;
	}
	if (strcmp(what, "xid") && xid) {
		*why = "--xid goes with the xid mode only";
		return -1;
	}
	if (!strcmp(what, "lost")) {
		f->mode = NVM_FAULT_LOST;
	} else if (!strcmp(what, "fallen-off-bus")) {
		f->mode = NVM_FAULT_FALLEN;
		add_xid(m, f, XID_FALLEN_OFF_BUS);
	} else if (!strcmp(what, "excluded")) {
		f->mode = NVM_FAULT_EXCLUDED;
	} else if (!strcmp(what, "ecc")) {
		f->ecc_errors++;
		f->ecc_pending = true;
		add_xid(m, f, XID_DBE);
	} else if (!strcmp(what, "xid")) {
		add_xid(m, f, xid);
	} else if (!strcmp(what, "clear")) {
		memset(f, 0, sizeof(*f));
	} else {
		*why = "unknown mode (lost, fallen-off-bus, excluded, ecc, xid, clear)";
		return -1;
	}
	return 0;
}

/* Mokka's failure settings, where they say what a node shows from the
 * start: {mode: lost | fallen_off_bus | ecc_uncorrectable | excluded |
 * healthy, xid: N}. Mokka's probability and after_calls trip a fault on
 * the n-th NVML call, which has no counterpart for files: such a setting
 * is left out, and said so. */
int parse_failure(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults, struct nvm_model *m,
		  unsigned i)
{
	static const struct { const char *mokka, *ours; } modes[] = {
		{ "lost", "lost" }, { "fallen_off_bus", "fallen-off-bus" },
		{ "ecc_uncorrectable", "ecc" }, { "excluded", "excluded" },
		{ "healthy", NULL }, { "none", NULL },
	};
	yaml_node_t *fl = ydoc_get(y, dev, "failure"), *n;
	char path[64], mode[32];
	uint64_t xid = 0;
	const char *why;
	size_t k;

	snprintf(path, sizeof(path), "devices[%u].failure", i);
	if (!fl) {
		fl = ydoc_get(y, defaults, "failure");
		snprintf(path, sizeof(path), "device_defaults.failure");
	}
	if (!fl)
		return 0;
	if (!ydoc_is_map(fl))
		return ydoc_fail(y, fl, path, "expected a mapping {mode, xid}");
	n = ydoc_get(y, fl, "mode");
	if (!n)
		return ydoc_fail(y, fl, path, "mode: missing (required)");
	if (ydoc_str(y, n, path, mode, sizeof(mode)))
		return -1;
	for (k = 0; k < sizeof(modes) / sizeof(modes[0]); k++)
		if (!strcmp(mode, modes[k].mokka))
			break;
	if (k == sizeof(modes) / sizeof(modes[0]))
		return ydoc_fail(y, n, path, "mode \"%s\": expected lost, fallen_off_bus, "
				 "ecc_uncorrectable, excluded or healthy", mode);
	n = ydoc_get(y, fl, "xid");
	if (n && ydoc_uint(y, n, path, 65535, &xid))
		return -1;
	if (ydoc_get(y, fl, "probability") || ydoc_get(y, fl, "after_calls")) {
		nvm_warn("%s:%d: %s: probability and after_calls trip a fault on an NVML "
			 "call, which nvmirage cannot do; left out", y->file,
			 (int)fl->start_mark.line + 1, path);
		return 0;
	}
	if (!modes[k].ours)
		return 0;
	if (fault_apply(m, i, modes[k].ours, 0, &why))
		return ydoc_fail(y, fl, path, "%s", why);
	if (xid)
		fault_apply(m, i, "xid", (unsigned)xid, &why);
	return 0;
}
