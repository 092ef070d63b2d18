#include "daemon/cgroups.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/mountinfo.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int cgroup_id(const char *path, uint64_t *id)
{
	struct statfs sfs;
	struct stat st;

	if (stat(path, &st))
		return nvm_err_r(-1, "cgroup %s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return nvm_err_r(-1, "cgroup %s: not a directory", path);
	if (statfs(path, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)
		return nvm_err_r(-1, "cgroup %s: not a cgroup v2 directory (on a hybrid host "
				     "they are under /sys/fs/cgroup/unified)", path);
	*id = st.st_ino;
	return 0;
}

static bool is_cgroup2(const struct mount_entry *e, void *ctx)
{
	(void)ctx;
	return !strcmp(e->fstype, "cgroup2");
}

int cgroup2_mount(char *buf, size_t len)
{
	struct mount_entry e;

	if (mountinfo_find(is_cgroup2, NULL, &e))
		return nvm_err_r(-1, "no cgroup2 file system is mounted");
	snprintf(buf, len, "%s", e.point);
	return 0;
}

/* A killed agent's lock stays held by its keeper until the keeper has put
 * back what the agent left and removed its tree (seconds at most; the
 * keeper gives up waiting on the kernel after a minute). When the pid in
 * the lock file is gone, waits for that; true once the lock is this
 * process's. */
#define KEEPER_WAIT_MS 90000

static bool keeper_done(int fd, const char *what)
{
	char holder[32] = "";
	ssize_t n = pread(fd, holder, sizeof(holder) - 1, 0);
	long pid = n > 0 ? strtol(holder, NULL, 10) : 0;

	if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return false;
	nvm_info("%s: agent %ld ended without stopping; waiting for its keeper to clean up", what,
		 pid);
	for (unsigned ms = 0; ms < KEEPER_WAIT_MS; ms += 20) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return true;
		usleep(20000);
	}
	return false;
}

int state_lock(const char *name, const char *what)
{
	char path[PATH_MAX], holder[32] = "";
	int fd;

	if (fs_mkdirs(NVM_STATE_DIR))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", NVM_STATE_DIR, name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return nvm_err_r(-1, "%s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) && !keeper_done(fd, what)) {
		ssize_t n = pread(fd, holder, sizeof(holder) - 1, 0);

		holder[n > 0 ? n : 0] = '\0';
		holder[strcspn(holder, "\n")] = '\0';
		close(fd);
		return nvm_err_r(-1, "%s is already in use by another nvmirage agent%s%s", what,
				 holder[0] ? " (pid " : "", holder[0] ? holder : "");
	}
	snprintf(holder, sizeof(holder), "%d)\n", getpid());
	if (ftruncate(fd, 0) || pwrite(fd, holder, strlen(holder), 0) < 0)
		nvm_warn("%s: %s", path, strerror(errno));
	return fd;
}

void state_unlock(int fd, const char *name)
{
	char path[PATH_MAX];

	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", NVM_STATE_DIR, name);
	unlink(path);
	close(fd);
}
