/* The files a node with MIG on has: /proc/driver/nvidia/capabilities
 * (mig/config and monitor, and per GPU mig/giX/access and giX/ciY/access,
 * each naming its nvidia-caps device minor, as ../reference shows them),
 * /proc/driver/nvidia-caps/mig-minors (every GPU, GPU instance and compute
 * instance the driver can name, with its minor: what Slurm's gpu/nvml
 * plugin reads), and the nvidia-caps nodes of the instances that exist.
 * Nothing when no GPU has MIG on: the tree stays as it was. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
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

/* A GPU instance's capability files in dir (gpuN/mig/giX): access, and
 * ciY/access for each of its compute instances. */
static int write_gi(const char *dir, unsigned gpu_minor, const struct nvm_mig_gi *gi)
{
	char ci[PATH_MAX];

	if (access_file(dir, "access", nvm_mig_minor(gpu_minor, gi->id, -1), 292))
		return -1;
	for (unsigned c = 0; c < gi->nci; c++) {
		snprintf(ci, sizeof(ci), "%s/ci%u", dir, gi->ci[c].id);
		if (access_file(ci, "access", nvm_mig_minor(gpu_minor, gi->id, (int)gi->ci[c].id),
				292))
			return -1;
	}
	return 0;
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
			snprintf(dir, sizeof(dir), "%s/gpu%u/mig/gi%u", caps, g->minor, g->mig.gi[k].id);
			if (write_gi(dir, g->minor, &g->mig.gi[k]))
				return -1;
		}
	}
	return write_minors(tree);
}

static bool has_gi(const struct nvm_mig *mig, unsigned id)
{
	for (unsigned k = 0; k < mig->ngi; k++)
		if (mig->gi[k].id == id)
			return true;
	return false;
}

int render_mig_nodes(const struct nvm_model *m, const char *root, unsigned gpu_minor,
		     const struct nvm_mig_gi *gi, bool make)
{
	char dir[PATH_MAX], name[32], path[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "%s/dev/nvidia-caps", root);
	for (int c = -1; c < (int)gi->nci; c++) {
		unsigned minor = nvm_mig_minor(gpu_minor, gi->id, c < 0 ? -1 : (int)gi->ci[c].id);

		snprintf(name, sizeof(name), "nvidia-cap%u", minor);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (make ? render_node(dir, name, m->caps_major, minor, 0444)
			 : unlink(path) && errno != ENOENT)
			return nvm_err_r(-1, "%s: %s", path, strerror(errno));
	}
	return 0;
}

/* Removes what write_gi wrote in dir (and nothing else): any ciY. */
static void remove_gi(const char *dir)
{
	char path[PATH_MAX + 16];

	for (unsigned c = 0; c < NVM_MIG_CIS; c++) {
		snprintf(path, sizeof(path), "%s/ci%u/access", dir, c);
		(void)unlink(path); /* ENOENT: not there */
		snprintf(path, sizeof(path), "%s/ci%u", dir, c);
		(void)rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/access", dir);
	(void)unlink(path);
	(void)rmdir(dir);
}

/* gpuN/mig/giX built beside (tmp) and renamed in, or renamed out to tmp
 * and removed: a reader sees the whole directory or none. */
static int gi_dir(const char *root, unsigned gpu_minor, const struct nvm_mig_gi *gi, bool make)
{
	char dir[PATH_MAX], tmp[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/proc/driver/nvidia/capabilities/gpu%u/mig/gi%u", root,
		 gpu_minor, gi->id);
	snprintf(tmp, sizeof(tmp), "%s/.replacing-gi", root);
	remove_gi(tmp);
	if (make) {
		if (write_gi(tmp, gpu_minor, gi) || rename(tmp, dir))
			return nvm_err_r(-1, "%s: %s", dir, strerror(errno));
		return 0;
	}
	if (rename(dir, tmp) && errno != ENOENT)
		return nvm_err_r(-1, "%s: %s", dir, strerror(errno));
	remove_gi(tmp);
	return 0;
}

int render_mig_refresh(const struct nvm_model *m, unsigned i, const struct nvm_mig *before,
		       const char *root, bool nodes)
{
	const struct nvm_gpu *g = &m->gpus[i];
	char tmp[PATH_MAX], dir[PATH_MAX], text[NVM_NVML_TEXT];
	size_t n;

	for (unsigned k = 0; k < g->mig.ngi; k++) {
		const struct nvm_mig_gi *gi = &g->mig.gi[k];

		if (!has_gi(before, gi->id) &&
		    ((nodes && render_mig_nodes(m, root, g->minor, gi, true)) ||
		     gi_dir(root, g->minor, gi, true)))
			return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s/.replacing", root);
	snprintf(dir, sizeof(dir), "%s/sys/module/nvidia/nvmirage", root);
	n = render_nvml_gpu_text(m, i, text, sizeof(text));
	if (n >= sizeof(text) - 1 || fs_replace(tmp, dir, g->bus_id, text, n, 0444))
		return -1;
	for (unsigned k = 0; k < before->ngi; k++) {
		const struct nvm_mig_gi *gi = &before->gi[k];

		if (!has_gi(&g->mig, gi->id) &&
		    (gi_dir(root, g->minor, gi, false) ||
		     (nodes && render_mig_nodes(m, root, g->minor, gi, false))))
			return -1;
	}
	return 0;
}
