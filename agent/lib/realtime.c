/* Why a privileged agent moves its own threads between cgroups: a waiting
 * task holds its CPU until an agent thread on another CPU answers, so the
 * answer must preempt whatever runs there. Only SCHED_FIFO does that. With
 * RT_GROUP_SCHED, a thread may only be SCHED_FIFO inside a cpu cgroup with a
 * real-time budget, and new cgroups get none; the root has the system's. */
#include "lib/realtime.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/mountinfo.h"

/* The whole hierarchy (root "/"): in a container, the runtime mounts the
 * container's own group there, and a mount of the host's tree (as the
 * chart gives the agent) comes later. */
static bool is_cpu_v1(const struct mount_entry *e, void *ctx)
{
	(void)ctx;
	return !strcmp(e->fstype, "cgroup") && mountinfo_has_opt(e->super_opts, "cpu") &&
	       !strcmp(e->root, "/");
}

/* The mount point of the cgroup v1 hierarchy that has the cpu controller. */
static int cpu_v1_mount(char *mnt, size_t len)
{
	struct mount_entry e;

	if (mountinfo_find(is_cpu_v1, NULL, &e) || snprintf(mnt, len, "%s", e.point) >= (int)len)
		return -1;
	return 0;
}

/* The calling thread's group in that hierarchy ("/" for the root). */
static int cpu_v1_group(char *group, size_t len)
{
	FILE *f = fopen("/proc/thread-self/cgroup", "r");
	char line[1024];
	int found = -1;

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *path = ctrl ? strchr(ctrl + 1, ':') : NULL;

		if (!path)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (mountinfo_has_opt(ctrl + 1, "cpu") && snprintf(group, len, "%s", path) < (int)len)
			found = 0;
	}
	fclose(f);
	return found;
}

static int read_long(const char *path, long *v)
{
	char line[64], *end;

	if (fs_read_line(path, line, sizeof(line)) <= 0)
		return -1;
	*v = strtol(line, &end, 10);
	return *end ? -1 : 0;
}

static int write_tid(const char *path)
{
	char tid[24];

	snprintf(tid, sizeof(tid), "%d\n", gettid());
	return fs_write_str(path, tid);
}

enum rt_outcome realtime_self(int prio, char *why, size_t len)
{
	struct sched_param sp = { .sched_priority = prio };
	char mnt[512], group[512], path[1100];
	long budget;
	int err;

	if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
		return RT_OK;
	err = errno;
	if (err != EPERM || cpu_v1_mount(mnt, sizeof(mnt)) || cpu_v1_group(group, sizeof(group)) ||
	    !strcmp(group, "/")) {
		snprintf(why, len, "sched_setscheduler: %s", strerror(err));
		return RT_REFUSED;
	}
	snprintf(path, sizeof(path), "%s%s/cpu.rt_runtime_us", mnt, group);
	if (read_long(path, &budget) || budget != 0) {
		snprintf(why, len, "sched_setscheduler: %s (cpu cgroup %s)", strerror(err), group);
		return RT_REFUSED;
	}
	snprintf(path, sizeof(path), "%s/tasks", mnt);
	if (write_tid(path)) {
		snprintf(why, len, "cpu cgroup %s has no real-time budget, and moving to %s failed: %s",
			 group, mnt, strerror(errno));
		return RT_REFUSED;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		snprintf(why, len, "cpu cgroup %s has no real-time budget, and in %s: %s", group,
			 mnt, strerror(errno));
		return RT_REFUSED;
	}
	snprintf(why, len, "cpu cgroup %s has no real-time budget (cpu.rt_runtime_us 0): "
		 "moved to the root of %s", group, mnt);
	return RT_MOVED;
}

void realtime_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t ma;

	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(m, &ma);
	pthread_mutexattr_destroy(&ma);
}

void realtime_enter(struct rt_section *s, int prio)
{
	int policy = sched_getscheduler(0);

	s->raised = s->refused = false;
	s->why[0] = '\0';
	if (policy == SCHED_FIFO || policy == SCHED_RR)
		return;
	s->raised = realtime_self(prio, s->why, sizeof(s->why)) != RT_REFUSED;
	s->refused = !s->raised;
}

/* Back to SCHED_OTHER; the nice value is kept by the kernel. (A thread
 * moved to the cpu hierarchy's root for its budget stays there.) */
void realtime_leave(struct rt_section *s)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (s->raised)
		sched_setscheduler(0, SCHED_OTHER, &sp);
	s->raised = false;
}
