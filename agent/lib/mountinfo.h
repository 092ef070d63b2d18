/* This process's mounts, from /proc/self/mountinfo. */
#ifndef NVM_MOUNTINFO_H
#define NVM_MOUNTINFO_H

#include <stdbool.h>

struct mount_entry {
	char root[4096];       /* what of the file system is mounted there ("/": all) */
	char point[4096];      /* where it is mounted */
	char fstype[64];       /* "cgroup2", "tmpfs", ... */
	char source[256];
	char super_opts[512];  /* the file system's options ("rw,cpu,cpuacct") */
};

/* The first mount for which want(e, ctx) is true, into *out. Returns 0, or
 * -1 when there is none or mountinfo cannot be read. */
int mountinfo_find(bool (*want)(const struct mount_entry *e, void *ctx), void *ctx,
		   struct mount_entry *out);

/* Whether a comma-separated list ("rw,cpu,cpuacct") holds word. */
bool mountinfo_has_opt(const char *list, const char *word);

#endif
