/* The files a node with MIG on has: /proc/driver/nvidia/capabilities
 * (mig/config and monitor, and per GPU mig/giX/access and giX/ciY/access,
 * each naming its nvidia-caps device minor, as ../reference shows them),
 * /proc/driver/nvidia-caps/mig-minors (every GPU, GPU instance and compute
 * instance the driver can name, with its minor: what Slurm's gpu/nvml
 * plugin reads), and the nvidia-caps nodes of the instances that exist.
 * Nothing when no GPU has MIG on: the tree stays as it was. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lib/fsutil.h"
#include "mig_minor.h"
#include "render/render.h"

bool render_has_mig(const struct nvm_model *m)
{
	for (unsigned i = 0; i < m->ngpus; i++)
		if (m->gpus[i].mig.enabled)
			return true;
	return false;
}

/* "DeviceFileMinor: N\nDeviceFileMode: M\nDeviceFileModify: 1\n" */
static int access_file(const char *dir, const char *name, unsigned minor, unsigned mode)
{
	return fs_mkdirs(dir) || fs_printf(dir, name, "DeviceFileMinor: %u\nDeviceFileMode: %u\n"
					   "DeviceFileModify: 1\n", minor, mode)
		       ? -1
		       : 0;
}

static int write_minors(const char *tree)
{
	static char text[NVM_MIG_GPUS * NVM_MIG_GIS * NVM_MIG_CIS * 32 + 64];
	char dir[PATH_MAX];
	size_t at = (size_t)snprintf(text, sizeof(text), "config 1\nmonitor 2\n");

	for (unsigned g = 0; g < NVM_MIG_GPUS; g++)
		for (unsigned i = 0; i < NVM_MIG_GIS; i++) {
			at += (size_t)snprintf(text + at, sizeof(text) - at, "gpu%u/gi%u/access %u\n", g,
					       i, nvm_mig_minor(g, i, -1));
			for (int c = 0; c < NVM_MIG_CIS; c++)
				at += (size_t)snprintf(text + at, sizeof(text) - at,
						       "gpu%u/gi%u/ci%d/access %u\n", g, i, c,
						       nvm_mig_minor(g, i, c));
		}
	snprintf(dir, sizeof(dir), "%s/proc/driver/nvidia-caps", tree);
	return fs_mkdirs(dir) || fs_write(dir, "mig-minors", text, at, 0444) ? -1 : 0;
}

int render_mig(const struct nvm_model *m, const char *tree)
{
	char caps[PATH_MAX], dir[PATH_MAX + 64];

	if (!render_has_mig(m))
		return 0;
	snprintf(caps, sizeof(caps), "%s/proc/driver/nvidia/capabilities", tree);
	snprintf(dir, sizeof(dir), "%s/mig", caps);
	/* Modes as the reference node's: config 0400 (256), monitor 0444 (292). */
	if (access_file(dir, "config", 1, 256) || access_file(dir, "monitor", 2, 292))
		return -1;
	for (unsigned i = 0; i < m->ngpus; i++) {
		const struct nvm_gpu *g = &m->gpus[i];

		snprintf(dir, sizeof(dir), "%s/gpu%u/mig", caps, g->minor);
		if (fs_mkdirs(dir))
			return -1;
		for (unsigned k = 0; g->mig.enabled && k < g->mig.ngi; k++) {
			unsigned id = g->mig.gi[k].id;

			snprintf(dir, sizeof(dir), "%s/gpu%u/mig/gi%u", caps, g->minor, id);
			if (access_file(dir, "access", nvm_mig_minor(g->minor, id, -1), 292))
				return -1;
			snprintf(dir, sizeof(dir), "%s/gpu%u/mig/gi%u/ci0", caps, g->minor, id);
			if (access_file(dir, "access", nvm_mig_minor(g->minor, id, 0), 292))
				return -1;
		}
	}
	return write_minors(tree);
}
