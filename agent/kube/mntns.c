/* Why a detached clone (open_tree + move_mount): it is made from the tree
 * in the agent's namespace, then attached in the container's, so the
 * container needs no path to the agent's file system, and it is made
 * read-only before anyone there can see it. setns needs a single-threaded
 * caller: a forked child does the namespace part. */
#include "kube/mntns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/realtime.h"
#include "render/render.h"

enum { BOUND = 0, ALREADY = 1, FAILED = 2, NOT_YET = 3 };

/* mkdir -p that leaves errno as the failing mkdir set it. */
static int mkdirs_quiet(const char *path)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

/* In the child, inside the container's namespace. Reports why on fd. */
static int attach(int tree, const char *root, const struct stat *want, int fd)
{
	char marker[4200];
	struct stat st;

	if (stat(root, &st) == 0) {
		if (st.st_dev == want->st_dev && st.st_ino == want->st_ino)
			return ALREADY;
		/* An older tree (the agent restarted): take it away first. */
		snprintf(marker, sizeof(marker), "%s/%s", root, NVM_TREE_MARK);
		if (access(marker, F_OK) == 0 && umount2(root, MNT_DETACH))
			return dprintf(fd, "cannot unmount the old tree: %s", strerror(errno)), FAILED;
	} else if (mkdirs_quiet(root)) {
		return dprintf(fd, "cannot make the mount point: %s%s", strerror(errno),
			       errno == EROFS ? " (give a --root under /dev, which container "
						"runtimes mount as a writable tmpfs)" : ""), FAILED;
	}
	if (move_mount(tree, "", AT_FDCWD, root, MOVE_MOUNT_F_EMPTY_PATH))
		return dprintf(fd, "move_mount: %s", strerror(errno)), FAILED;
	return BOUND;
}

static int bind_into(pid_t pid, const char *root, const struct stat *want, char *why, size_t len)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID };
	char nspath[64];
	int tree, ns, pfd[2], st = 0;
	ssize_t n;
	pid_t c;

	snprintf(nspath, sizeof(nspath), "/proc/%d/ns/mnt", pid);
	ns = open(nspath, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return snprintf(why, len, "%s: %s", nspath, strerror(errno)), FAILED;
	tree = open_tree(AT_FDCWD, root, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0 || mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ro, sizeof(ro)) ||
	    pipe2(pfd, O_CLOEXEC)) {
		snprintf(why, len, "a read-only clone of %s: %s", root, strerror(errno));
		close(ns);
		if (tree >= 0)
			close(tree);
		return FAILED;
	}
	c = fork();
	if (c == 0) {
		close(pfd[0]);
		if (setns(ns, CLONE_NEWNS)) {
			dprintf(pfd[1], "setns: %s", strerror(errno));
			_exit(FAILED);
		}
		_exit(attach(tree, root, want, pfd[1]));
	}
	close(pfd[1]);
	close(ns);
	close(tree);
	why[0] = '\0';
	n = c < 0 ? -1 : read(pfd[0], why, len - 1);
	why[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	if (c < 0)
		return snprintf(why, len, "fork: %s", strerror(errno)), FAILED;
	while (waitpid(c, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : FAILED;
}

struct walk {
	const char *root;
	struct stat want;
	uint64_t own;
	struct stat node_ns, node_root;
	int bound;
};

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (fs_read(path, buf, sizeof(buf)) < 0 || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return ppid;
}

static bool same_inode(const struct stat *x, const struct stat *y)
{
	return x->st_dev == y->st_dev && x->st_ino == y->st_ino;
}

/* The nearest ancestor of pid in a mount namespace other than ns (the
 * runtime that started pid's container), with that ancestor's namespace
 * and root; 0 when its parents share ns up to the first, or one could not
 * be read (it went while we looked, or the kernel keeps it closed). */
static pid_t runtime_of(pid_t pid, const struct stat *ns, struct stat *ans, struct stat *aroot)
{
	char path[64];
	pid_t a = pid;

	for (int i = 0; i < 32 && (a = parent_of(a)) > 0; i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", a);
		if (stat(path, ans))
			return 0;
		if (same_inode(ans, ns))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root", a);
		return stat(path, aroot) ? 0 : a;
	}
	return 0;
}

/* Whether pid has its container's root: only then is its mount namespace
 * a container's, set up, where a bound tree is what the container sees. A
 * runtime puts its init in the pod's cgroup while that still shares the
 * node's mount namespace (runc's parent does, before init unshares), then
 * unshares a namespace that starts as a copy of the node's, with the
 * node's root, and pivots into the container's root file system last. So
 * not while pid is in the node's mount namespace or has the node's root,
 * nor while it has the root of the runtime that starts it, where that can
 * be read (a runtime that is not at the node's root itself; a container's
 * first process is often the child of a node's init that cannot be read).
 * A tree bound before would land in the node's file system. */
static bool has_container_root(const struct walk *w, pid_t pid, const struct stat *ns)
{
	struct stat st, ans, aroot;
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	if (same_inode(ns, &w->node_ns) || stat(root, &st) || same_inode(&st, &w->node_root))
		return false;
	return runtime_of(pid, ns, &ans, &aroot) <= 0 || !same_inode(&aroot, &st);
}

/* The node's mount namespace and root: those of the runtime that started
 * the agent's container (conmon, containerd-shim; the agent shares the
 * host's PID namespace), or the agent's own where it runs on the node
 * itself. (Not pid 1's: a node's init may be closed to every reader.)
 * Found once; the agent's runtime stays. */
static int node_find(struct stat *ns, struct stat *root)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct stat node_ns, node_root;
	static bool found;
	pid_t rt = 0;
	int r = 0;

	pthread_mutex_lock(&lock);
	if (!found) {
		if (stat("/proc/self/ns/mnt", &node_ns) || stat("/", &node_root)) {
			r = -1;
		} else if ((rt = runtime_of(getpid(), &node_ns, ns, root)) > 0) {
			node_ns = *ns, node_root = *root;
			found = true;
		} else {
			found = true; /* on the node */
		}
		if (found)
			nvm_info("the node's mount namespace is mnt:[%llu] (%s): no tree goes there, "
				 "nor to a process that still has the node's root",
				 (unsigned long long)node_ns.st_ino,
				 rt > 0 ? "its runtime's, that started the agent's container"
					: "the agent's own");
	}
	*ns = node_ns, *root = node_root;
	pthread_mutex_unlock(&lock);
	return r;
}

/* Whether pid sees the tree at the root path, looked up in its own mount
 * namespace through /proc/<pid>/root. */
static bool sees_tree(const struct walk *w, pid_t pid)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, w->root);
	return stat(path, &st) == 0 && st.st_dev == w->want.st_dev && st.st_ino == w->want.st_ino;
}

/* Binds are made one at a time, by the main thread's walk or by a service
 * thread for a task that waits (mntns_bind_pid): two at once could stack
 * two trees in one namespace. The walk holds the lock at the service
 * threads' real-time priority (realtime_enter), as does the child that
 * enters the namespace: an ordinary thread holding it could be kept off
 * its CPU by a target task that preempted it and waits there for an
 * answer, the answer being a bind behind this lock. */
static pthread_mutex_t bind_lock;
static pthread_once_t bind_lock_once = PTHREAD_ONCE_INIT;

static void init_bind_lock(void)
{
	realtime_mutex_init(&bind_lock);
}

/* Whether pid's namespace has the tree now; bound if it had not. */
static int visit_pid(struct walk *w, pid_t pid)
{
	static int rt_told;
	char nspath[64], why[512];
	struct rt_section rt;
	struct stat st;
	int r;

	snprintf(nspath, sizeof(nspath), "/proc/%d/ns/mnt", pid);
	/* Asked of the process itself, not remembered per namespace: their
	 * numbers are reused (a restarted container may get its
	 * predecessor's), and a stat costs less than a fork. */
	if (stat(nspath, &st))
		return FAILED;
	if (st.st_ino == w->own)
		return ALREADY;
	if (!has_container_root(w, pid, &st))
		return NOT_YET;
	if (sees_tree(w, pid))
		return ALREADY;
	pthread_once(&bind_lock_once, init_bind_lock);
	realtime_enter(&rt, NVM_RT_PRIORITY);
	if (rt.refused && !rt_told++)
		nvm_warn("the pod walk binds the tree at ordinary priority: %s", rt.why);
	else if (rt.raised && !rt_told++)
		nvm_info("the pod walk binds at SCHED_FIFO %d, the service threads' priority%s%s",
			 NVM_RT_PRIORITY, rt.why[0] ? ": " : "", rt.why);
	pthread_mutex_lock(&bind_lock);
	r = sees_tree(w, pid) ? ALREADY : bind_into(pid, w->root, &w->want, why, sizeof(why));
	pthread_mutex_unlock(&bind_lock);
	realtime_leave(&rt);
	if (r == FAILED) {
		nvm_warn("tree into the mount namespace of pid %d: %s", pid, why);
		return r;
	}
	if (r == BOUND) {
		w->bound++;
		nvm_info("tree bound read-only at %s in mount namespace mnt:[%llu] (pid %d)", w->root,
			 (unsigned long long)st.st_ino, pid);
	}
	return r;
}

static void visit_cgroup(struct walk *w, const char *dir, int depth)
{
	char path[4200];
	struct dirent *e;
	FILE *f;
	DIR *d;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if ((f = fopen(path, "r"))) {
		while (fscanf(f, "%d", &pid) == 1)
			visit_pid(w, pid);
		fclose(f);
	}
	if (depth >= 8 || !(d = opendir(dir)))
		return;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			visit_cgroup(w, path, depth + 1);
		}
	closedir(d);
}

static int walk_init(struct walk *w, const char *root)
{
	struct stat own;

	memset(w, 0, sizeof(*w));
	w->root = root;
	if (stat(root, &w->want) || stat("/proc/self/ns/mnt", &own))
		return nvm_err_r(-1, "tree %s: %s", root, strerror(errno));
	w->own = own.st_ino;
	/* Binds never go there. */
	if (node_find(&w->node_ns, &w->node_root))
		return nvm_err_r(-1, "the node's mount namespace: %s", strerror(errno));
	return 0;
}

int mntns_bind_cgroup(const char *cgdir, const char *root)
{
	struct walk w;

	if (walk_init(&w, root))
		return -1;
	visit_cgroup(&w, cgdir, 0);
	return w.bound;
}

int mntns_bind_pid(pid_t pid, const char *root)
{
	struct walk w;

	int r;

	if (walk_init(&w, root))
		return -1;
	r = visit_pid(&w, pid);
	return r == FAILED ? -1 : r == NOT_YET ? 1 : 0;
}
