/* The tree as a whole: rendered beside its final place, then renamed in, so
 * a reader sees the old tree or the new one, never half of either. */
#include "render/render.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"

#define NVIDIA_MAJOR 195

static int make_node(const char *dir, const char *name, unsigned minor)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mknod(path, S_IFCHR | 0666, makedev(NVIDIA_MAJOR, minor)))
		return nvm_err_r(-errno, "mknod %s: %s%s", path, strerror(errno),
				 errno == EPERM ? " (--device-nodes needs root)" : "");
	chmod(path, 0666);
	return 0;
}

int render_devices(const struct nvm_model *m, const char *tree)
{
	char dir[PATH_MAX], name[32];

	snprintf(dir, sizeof(dir), "%s/dev", tree);
	if (fs_mkdirs(dir))
		return -1;
	for (unsigned i = 0; i < m->ngpus; i++) {
		snprintf(name, sizeof(name), "nvidia%u", m->gpus[i].minor);
		if (make_node(dir, name, m->gpus[i].minor))
			return -1;
	}
	if (make_node(dir, "nvidiactl", 255) || make_node(dir, "nvidia-modeset", 254))
		return -1;
	return 0;
}

int render_aliases(const struct nvm_rules *rs, const char *tree)
{
	for (unsigned i = 0; i < rs->n; i++) {
		const struct nvm_rule *r = &rs->r[i];

		/* A device node's alias is a node too, so that lstat and
		 * `ls -l` of /dev/nvidiaN report a character device. */
		if (r->kind == NVM_RULE_NODE ? make_node(tree, r->name, r->minor)
					     : fs_symlink(r->target, tree, r->name))
			return -1;
	}
	return 0;
}

static bool is_tree(const char *root)
{
	char mark[PATH_MAX];
	struct stat st;

	snprintf(mark, sizeof(mark), "%s/%s", root, NVM_TREE_MARK);
	return lstat(mark, &st) == 0 && S_ISREG(st.st_mode);
}

static int check_root(const char *root)
{
	struct stat st;

	if (root[0] != '/' || strstr(root, "/../") || strstr(root, "/./") ||
	    !strcmp(root, "/") || root[strlen(root) - 1] == '/')
		return nvm_err_r(-1, "tree root \"%s\": want an absolute path without "
				     "'.', '..' or a trailing '/'", root);
	if (lstat(root, &st) == 0 && !is_tree(root))
		return nvm_err_r(-1, "%s exists and is not a tree nvmirage rendered "
				     "(no %s in it); refusing to replace it", root, NVM_TREE_MARK);
	return 0;
}

int render_tree(const struct nvm_model *m, const struct render_opts *o,
		struct nvm_rules *rules)
{
	char tmp[PATH_MAX], parent[PATH_MAX];
	bool replace;
	char *slash;

	if (check_root(o->root) || rules_build(m, o->root, o->device_nodes, rules))
		return -1;
	snprintf(parent, sizeof(parent), "%s", o->root);
	slash = strrchr(parent, '/');
	if (slash != parent) {
		*slash = '\0';
		if (fs_mkdirs(parent))
			return -1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", o->root);
	if (!mkdtemp(tmp))
		return nvm_err_r(-1, "mkdtemp %s: %s", tmp, strerror(errno));
	chmod(tmp, 0755);
	if (render_proc(m, tmp) || render_sysfs(m, o, tmp) ||
	    (o->device_nodes && render_devices(m, tmp)) || render_aliases(rules, tmp) ||
	    fs_printf(tmp, NVM_TREE_MARK, "profile: %s\n", m->profile_path))
		goto fail;

	replace = is_tree(o->root);
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

int render_remove(const char *root)
{
	if (!is_tree(root))
		return 0;
	return fs_remove_tree(root);
}
