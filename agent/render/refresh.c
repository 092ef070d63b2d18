/* A GPU's or an HCA's faults in a rendered tree: the files a fault changes, each
 * replaced whole: information, PCI config space and revision, NVML state. Which files they are is the renderer's business, so a
 * cleared fault leaves the tree byte for byte as first rendered. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lib/fsutil.h"
#include "render/render.h"

int render_gpu_refresh(const struct nvm_model *m, unsigned i, const char *root)
{
	const struct nvm_gpu *g = &m->gpus[i];
	char tmp[PATH_MAX], dir[PATH_MAX], name[64], text[2048];
	unsigned char cfg[256];
	int n;

	/* Beside the mark, in the tree's root, which no redirect lists. */
	snprintf(tmp, sizeof(tmp), "%s/.replacing", root);
	snprintf(dir, sizeof(dir), "%s/proc/driver/nvidia/gpus/%s", root, g->bus_id);
	if (fs_replace(tmp, dir, "information", text,
		       render_information_text(g, text, sizeof(text)), 0444))
		return -1;
	render_pci_config(g, cfg);
	snprintf(dir, sizeof(dir), "%s/sys/devices/%s/%s", root, m->roots[g->root].id, g->bus_id);
	n = snprintf(text, sizeof(text), "0x%02x\n", render_pci_revision(g));
	if (fs_replace(tmp, dir, "config", cfg, sizeof(cfg), 0644) ||
	    fs_replace(tmp, dir, "revision", text, (size_t)n, 0444))
		return -1;
	snprintf(dir, sizeof(dir), "%s/sys/module/nvidia/nvmirage", root);
	snprintf(name, sizeof(name), "%s.state", g->bus_id);
	return fs_replace(tmp, dir, name, text, render_gpu_state_text(g, text, sizeof(text)), 0444);
}

int render_hca_refresh(const struct nvm_model *m, unsigned i, const char *root)
{
	const struct nvm_hca *h = &m->ib.hcas[i];
	char tmp[PATH_MAX], dir[PATH_MAX], state[64], phys[64];

	snprintf(tmp, sizeof(tmp), "%s/.replacing", root);
	snprintf(dir, sizeof(dir), "%s/sys/devices/%s/%s/infiniband/mlx5_%u/ports/1", root,
		 m->roots[m->gpus[h->gpu].root].id, h->bus_id, h->index);
	render_hca_port_state(&m->ib, h, state, sizeof(state), phys, sizeof(phys));
	return fs_replace(tmp, dir, "state", state, strlen(state), 0444) ||
			       fs_replace(tmp, dir, "phys_state", phys, strlen(phys), 0444)
		       ? -1
		       : 0;
}
