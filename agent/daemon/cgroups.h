/* Target cgroups: cgroup v2 directories, their ids, and the locks that keep
 * two agents from targeting the same one. */
#ifndef NVM_CGROUPS_H
#define NVM_CGROUPS_H

#include <stddef.h>
#include <stdint.h>

#define NVM_STATE_DIR "/run/nvmirage"

/* The id the kernel gives the cgroup v2 directory at path (its inode number),
 * or -1 (reported) if path is not one. */
int cgroup_id(const char *path, uint64_t *id);

/* Where cgroup2 is mounted: /sys/fs/cgroup on a unified host,
 * /sys/fs/cgroup/unified on a hybrid one. Returns 0 or -1 (reported). */
int cgroup2_mount(char *buf, size_t len);

/* Takes the lock on name (a file under NVM_STATE_DIR) or reports who holds
 * it. Returns the lock fd (held until closed) or -1. */
int state_lock(const char *name, const char *what);
void state_unlock(int fd, const char *name);

#endif
