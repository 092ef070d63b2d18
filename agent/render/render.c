/* The tree as a whole: rendered beside its final place, then renamed in, so
 * a reader sees the old tree or the new one, never half of either. */
#include "render/render.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "mig_minor.h"

#define NVIDIA_MAJOR 195
#define IB_MAJOR 231 /* uverbs, umad, issm */
#define MISC_MAJOR 10

int render_node(const char *dir, const char *name, unsigned major, unsigned minor,
		unsigned mode)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mknod(path, S_IFCHR | mode, makedev(major, minor)))
		return nvm_err_r(-errno, "mknod %s: %s%s", path, strerror(errno),
				 errno == EPERM ? " (--device-nodes needs root)" : "");
	chmod(path, mode);
	return 0;
}

/* Dynamic character majors are handed out from 254 down to 234 (the
 * kernel's CHRDEV_MAJOR_DYN_END .. CHRDEV_MAJOR_DYN_EXT_START range). */
#define DYN_MAJOR_HIGH 254
#define DYN_MAJOR_LOW 234

int render_dynamic_majors(struct nvm_model *m, const char *proc_devices)
{
	char text[8192], *line, *save = NULL;
	bool used[DYN_MAJOR_HIGH + 1] = { false };
	bool chars = false;
	unsigned *want[] = { &m->uvm_major, &m->caps_major }, k = 0;

	if (fs_read(proc_devices, text, sizeof(text)) < 0)
		return nvm_err_r(-1, "%s: %s", proc_devices, strerror(errno));
	/* "Character devices:" then "195 nvidia" lines, then "Block devices:". */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned major;

		if (strstr(line, "devices:"))
			chars = !strcmp(line, "Character devices:");
		else if (chars && sscanf(line, "%u", &major) == 1 && major <= DYN_MAJOR_HIGH)
			used[major] = true;
	}
	for (unsigned major = DYN_MAJOR_HIGH; major >= DYN_MAJOR_LOW && k < 2; major--)
		if (!used[major] && major != NVIDIA_MAJOR)
			*want[k++] = major;
	if (k < 2)
		return nvm_err_r(-1, "%s: no free character device major in %u..%u for "
				     "nvidia-uvm and nvidia-caps", proc_devices, DYN_MAJOR_LOW,
				 DYN_MAJOR_HIGH);
	return 0;
}

/* The nodes of a real node: /dev/nvidiaN, nvidiactl, nvidia-modeset (195),
 * nvidia-uvm and nvidia-uvm-tools, and nvidia-caps/nvidia-cap1 (0400) and
 * nvidia-cap2 (0444), with the modes a real node gives them. */
int render_devices(const struct nvm_model *m, const char *tree)
{
	char dir[PATH_MAX], caps[PATH_MAX], name[32];

	if (!m->uvm_major || !m->caps_major)
		return nvm_err_r(-1, "device nodes: no majors chosen for nvidia-uvm and nvidia-caps");
	snprintf(dir, sizeof(dir), "%s/dev", tree);
	snprintf(caps, sizeof(caps), "%s/dev/nvidia-caps", tree);
	if (fs_mkdirs(dir) || fs_mkdirs(caps))
		return -1;
	for (unsigned i = 0; i < m->ngpus; i++) {
		snprintf(name, sizeof(name), "nvidia%u", m->gpus[i].minor);
		if (render_node(dir, name, NVIDIA_MAJOR, m->gpus[i].minor, 0666))
			return -1;
	}
	if (render_node(dir, "nvidiactl", NVIDIA_MAJOR, 255, 0666) ||
	    render_node(dir, "nvidia-modeset", NVIDIA_MAJOR, 254, 0666) ||
	    render_node(dir, "nvidia-uvm", m->uvm_major, 0, 0666) ||
	    render_node(dir, "nvidia-uvm-tools", m->uvm_major, 1, 0666) ||
	    render_node(caps, "nvidia-cap1", m->caps_major, 1, 0400) ||
	    render_node(caps, "nvidia-cap2", m->caps_major, 2, 0444))
		return -1;
	/* A MIG instance's access nodes, GPU instance and compute instance. */
	for (unsigned i = 0; i < m->ngpus; i++)
		for (unsigned k = 0; m->gpus[i].mig.enabled && k < m->gpus[i].mig.ngi; k++)
			if (render_mig_nodes(m, tree, m->gpus[i].minor, &m->gpus[i].mig.gi[k], true))
				return -1;
	return render_ib_devices(m, tree);
}

/* The first misc minor from 256 (where the kernel hands out dynamic ones)
 * that /proc/misc does not list. */
static unsigned free_misc_minor(void)
{
	char line[128];
	unsigned minor = 256, used[64], n = 0;
	FILE *f = fopen("/proc/misc", "r");

	while (f && n < 64 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%u", &used[n]) == 1)
			n++;
	if (f)
		fclose(f);
	for (unsigned i = 0; i < n; i++)
		if (used[i] == minor) {
			minor++;
			i = (unsigned)-1; /* again from the start */
		}
	return minor;
}

/* /dev/infiniband of a node with the profile's HCAs: uverbsN (231:192+N,
 * 0666), umadN (231:N) and issmN (231:64+N), 0600 as udev leaves them, and
 * rdma_cm (a misc device, 0666). */
int render_ib_devices(const struct nvm_model *m, const char *tree)
{
	char dir[PATH_MAX], name[32];

	if (!m->ib.nhcas)
		return 0;
	snprintf(dir, sizeof(dir), "%s/dev/infiniband", tree);
	if (fs_mkdirs(dir))
		return -1;
	for (unsigned i = 0; i < m->ib.nhcas; i++) {
		unsigned k = m->ib.hcas[i].index;

		snprintf(name, sizeof(name), "uverbs%u", k);
		if (render_node(dir, name, IB_MAJOR, 192 + k, 0666))
			return -1;
		snprintf(name, sizeof(name), "umad%u", k);
		if (render_node(dir, name, IB_MAJOR, k, 0600))
			return -1;
		snprintf(name, sizeof(name), "issm%u", k);
		if (render_node(dir, name, IB_MAJOR, 64 + k, 0600))
			return -1;
	}
	return render_node(dir, "rdma_cm", MISC_MAJOR, free_misc_minor(), 0666);
}

static int hard_link(const char *tree, const char *target, const char *name)
{
	char from[PATH_MAX], to[PATH_MAX];

	snprintf(from, sizeof(from), "%s/%s", tree, target);
	snprintf(to, sizeof(to), "%s/%s", tree, name);
	if (link(from, to))
		return nvm_err_r(-1, "link %s -> %s: %s", to, from, strerror(errno));
	return 0;
}

/* NVML and nvidia-smi, where the FILE rules point (usr/lib/nvmirage). */
static int render_userspace(const struct render_opts *o, const char *tree)
{
	char dir[PATH_MAX];

	if (!o->nvml_lib)
		return 0;
	snprintf(dir, sizeof(dir), "%s/%s", tree, NVM_TREE_USERSPACE);
	return fs_mkdirs(dir) || fs_copy(o->nvml_lib, dir, NVM_NVML_NAME, 0755) ||
	       fs_copy(o->nvidia_smi, dir, NVM_SMI_NAME, 0755);
}

int render_aliases(const struct nvm_rules *rs, const char *tree)
{
	for (unsigned i = 0; i < rs->n; i++) {
		const struct nvm_rule *r = &rs->r[i];
		bool made = false;

		/* File rules share their alias (one per file). */
		for (unsigned j = 0; j < i && r->kind == NVM_RULE_FILE; j++)
			made |= !strcmp(rs->r[j].name, r->name);
		if (made)
			continue;

		/* A device node's alias is a node too, so that lstat and
		 * `ls -l` of /dev/nvidiaN report a character device; a file's
		 * is the file (a hard link), as the toolkit's are files. */
		if (r->kind == NVM_RULE_NODE ? render_node(tree, r->name, r->major, r->minor, r->mode)
		    : r->kind == NVM_RULE_FILE ? hard_link(tree, r->target, r->name)
					       : fs_symlink(r->target, tree, r->name))
			return -1;
	}
	return 0;
}

bool render_is_tree(const char *root)
{
	char mark[PATH_MAX];
	struct stat st;

	snprintf(mark, sizeof(mark), "%s/%s", root, NVM_TREE_MARK);
	return lstat(mark, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = d != NULL;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	if (d)
		closedir(d);
	return empty;
}

static int check_root(const char *root)
{
	struct stat st;

	if (root[0] != '/' || strstr(root, "/../") || strstr(root, "/./") ||
	    !strcmp(root, "/") || root[strlen(root) - 1] == '/')
		return nvm_err_r(-1, "tree root \"%s\": want an absolute path without "
				     "'.', '..' or a trailing '/'", root);
	if (lstat(root, &st) == 0 && !render_is_tree(root) && !is_empty_dir(root))
		return nvm_err_r(-1, "%s exists and is not a tree nvmirage rendered "
				     "(no %s in it); refusing to replace it", root, NVM_TREE_MARK);
	return 0;
}

/* The tree on a file system of its own, mounted at root and rendered in
 * place: a move of the mount into place would fail where root's parent is
 * a shared mount (most hosts), and the agent renders before it attaches
 * anything, so no redirected reader can see the tree half made; the mark
 * is written last. An older tree there goes first. */
static int render_own_fs(const struct nvm_model *m, const struct render_opts *o,
			 const struct nvm_rules *rules)
{
	if (render_is_tree(o->root) && render_remove(o->root))
		return -1;
	if (mkdir(o->root, 0755) && errno != EEXIST)
		return nvm_err_r(-1, "mkdir %s: %s", o->root, strerror(errno));
	/* Executable when it holds the driver's user space: the dynamic
	 * linker maps NVML from it, and nvidia-smi runs from it. */
	if (mount("nvmirage", o->root, "tmpfs", MS_NOSUID | (o->nvml_lib ? 0 : MS_NOEXEC),
		  "mode=0755")) {
		nvm_err("mount a tmpfs for the tree at %s: %s", o->root, strerror(errno));
		rmdir(o->root);
		return -1;
	}
	if (render_proc(m, o->root) || render_mig(m, o->root) || render_sysfs(m, o, o->root) ||
	    (o->device_nodes && render_devices(m, o->root)) || render_userspace(o, o->root) ||
	    render_aliases(rules, o->root) ||
	    fs_printf(o->root, NVM_TREE_MARK, "profile: %s\n", m->profile_path)) {
		umount2(o->root, MNT_DETACH);
		rmdir(o->root);
		return -1;
	}
	return 0;
}

int render_tree(const struct nvm_model *m, const struct render_opts *o,
		struct nvm_rules *rules)
{
	char tmp[PATH_MAX], parent[PATH_MAX];
	bool replace;
	char *slash;

	if (check_root(o->root) ||
	    rules_build(m, o->root, o->device_nodes, o->nvml_lib != NULL, rules))
		return -1;
	snprintf(parent, sizeof(parent), "%s", o->root);
	slash = strrchr(parent, '/');
	if (slash != parent) {
		*slash = '\0';
		if (fs_mkdirs(parent))
			return -1;
	}
	if (o->own_fs)
		return render_own_fs(m, o, rules);
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", o->root);
	if (!mkdtemp(tmp))
		return nvm_err_r(-1, "mkdtemp %s: %s", tmp, strerror(errno));
	chmod(tmp, 0755);
	if (render_proc(m, tmp) || render_mig(m, tmp) || render_sysfs(m, o, tmp) ||
	    (o->device_nodes && render_devices(m, tmp)) || render_userspace(o, tmp) ||
	    render_aliases(rules, tmp) ||
	    fs_printf(tmp, NVM_TREE_MARK, "profile: %s\n", m->profile_path))
		goto fail;

	replace = render_is_tree(o->root);
	if (!replace && is_empty_dir(o->root))
		rmdir(o->root);
	if (replace ? renameat2(AT_FDCWD, tmp, AT_FDCWD, o->root, RENAME_EXCHANGE)
		    : renameat2(AT_FDCWD, tmp, AT_FDCWD, o->root, RENAME_NOREPLACE)) {
		nvm_err("rename %s -> %s: %s", tmp, o->root, strerror(errno));
		goto fail;
	}
	/* After an exchange tmp holds the old tree. */
	if (replace)
		fs_remove_tree(tmp);
	return 0;
fail:
	fs_remove_tree(tmp);
	return -1;
}

/* Whether path is a mount point: on another file system than its parent. */
static bool is_mount_point(const char *path)
{
	char parent[PATH_MAX];
	struct stat a, b;

	snprintf(parent, sizeof(parent), "%s/..", path);
	return stat(path, &a) == 0 && stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

int render_remove(const char *root)
{
	if (!render_is_tree(root))
		return 0;
	if (is_mount_point(root)) {
		if (umount2(root, MNT_DETACH))
			return nvm_err_r(-1, "unmount the tree at %s: %s", root, strerror(errno));
		/* The tree is gone; an empty directory left (where rmdir fails)
		 * is no obstacle to the next agent (check_root). */
		if (rmdir(root))
			nvm_warn("unmounted the tree at %s; its empty directory stays: %s", root,
				 strerror(errno));
		return 0;
	}
	return fs_remove_tree(root);
}
