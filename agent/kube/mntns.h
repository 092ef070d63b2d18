/* The rendered tree inside containers: a read-only bind of it at the tree
 * root path in each mount namespace of a target pod's processes, so that
 * the paths the engine rewrites to resolve there too. */
#ifndef NVM_MNTNS_H
#define NVM_MNTNS_H

#include <sys/types.h>

/* Binds the tree at root into the mount namespace of every process in
 * cgroup dir and the cgroups below it that does not have it yet (not the
 * agent's own). Returns how many namespaces got it now; failures are logged
 * per namespace, and retried on the next call. */
int mntns_bind_cgroup(const char *cgdir, const char *root);

/* The same for the mount namespace of one process (a task that waits for
 * its first redirect there). Returns 0 when that namespace has the tree
 * now, 1 when the process does not have its container's root yet (the
 * runtime still sets it up: ask again later), -1 (logged) when it could
 * not be bound. Thread-safe. */
int mntns_bind_pid(pid_t pid, const char *root);

#endif
