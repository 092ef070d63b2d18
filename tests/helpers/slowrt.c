/* slowrt: a container runtime that takes its time, to hold open the
 * windows in which a container's mount namespace is not yet the
 * container's. It does what runc does, in runc's order, and stops between
 * the steps, reading a driver file at each stop:
 *
 *   1. joins the pod's cgroup while still in the node's mount namespace
 *      (runc's parent moves runc init there before init unshares);
 *   2. unshares a mount namespace (a copy of the node's, with the node's
 *      root) and builds the container's root in it: a tmpfs with the
 *      host's /usr read-only, /proc, /sys, a tmpfs /dev, and the command's
 *      directory at /opt/nvm;
 *   3. pivots into that root and runs the command there.
 *
 *   slowrt CGROUP_DIR NEWROOT STOP_MS CMD [ARGS...]
 *
 * CMD is a path on the host; it runs as /opt/nvm/<its name>. At each stop
 * it prints what an open of /proc/driver/nvidia/version gave, before and
 * after waiting STOP_MS (the agent's walk and a redirect both come by):
 * "node=", "setup=", "setup_later=". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char driver_file[] = "/proc/driver/nvidia/version";

static void die(const char *what)
{
	fprintf(stderr, "slowrt: %s: %s\n", what, strerror(errno));
	exit(127);
}

/* What an open of the driver file gives here: "found" or the error. */
static void try_open(const char *stop)
{
	int fd = open(driver_file, O_RDONLY | O_CLOEXEC);

	printf("%s=%s\n", stop, fd >= 0 ? "found" : strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void join_cgroup(const char *dir)
{
	char path[4096], pid[24];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
		die(path);
	close(fd);
}

static void mount_at(const char *src, const char *root, const char *dir, const char *type,
		     unsigned long flags)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s%s", root, dir);
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
	if (mount(src, path, type, flags, NULL))
		die(path);
}

static void link_at(const char *target, const char *root, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s%s", root, name);
	if (symlink(target, path))
		die(path);
}

/* The container's root file system, in the new namespace. */
static void build_root(const char *root, const char *cmd_dir)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("private /");
	if (mount("tmpfs", root, "tmpfs", 0, "mode=755"))
		die(root);
	mount_at("/usr", root, "/usr", NULL, MS_BIND | MS_REC);
	link_at("usr/lib", root, "/lib");
	link_at("usr/lib64", root, "/lib64");
	link_at("usr/bin", root, "/bin");
	mount_at("proc", root, "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC);
	mount_at("/sys", root, "/sys", NULL, MS_BIND | MS_REC);
	mount_at("tmpfs", root, "/dev", "tmpfs", MS_NOSUID);
	mount_at(NULL, root, "/opt", "tmpfs", 0);
	mount_at(cmd_dir, root, "/opt/nvm", NULL, MS_BIND);
}

static void pivot(const char *root)
{
	if (chdir(root) || syscall(SYS_pivot_root, ".", "."))
		die("pivot_root");
	if (umount2(".", MNT_DETACH) || chdir("/"))
		die("the old root");
}

int main(int argc, char **argv)
{
	char cmd[4096], dir[4096], run[4200];
	unsigned stop_ms;

	if (argc < 5) {
		fprintf(stderr, "usage: slowrt CGROUP_DIR NEWROOT STOP_MS CMD [ARGS...]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	stop_ms = (unsigned)atoi(argv[3]);
	snprintf(cmd, sizeof(cmd), "%s", argv[4]);
	snprintf(dir, sizeof(dir), "%s", argv[4]);
	snprintf(run, sizeof(run), "/opt/nvm/%s", basename(cmd));

	join_cgroup(argv[1]);
	try_open("node");
	usleep(stop_ms * 1000);

	if (unshare(CLONE_NEWNS))
		die("unshare");
	build_root(argv[2], dirname(dir));
	try_open("setup");
	usleep(stop_ms * 1000);
	try_open("setup_later");

	pivot(argv[2]);
	fflush(stdout);
	argv[4] = run;
	execv(run, argv + 4);
	die(run);
}
