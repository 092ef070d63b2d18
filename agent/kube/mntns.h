/* The rendered tree inside containers: a read-only bind of it at the tree
 * root path in each mount namespace of a target pod's processes, so that
 * the paths the engine rewrites to resolve there too. */
#ifndef NVM_MNTNS_H
#define NVM_MNTNS_H

/* Binds the tree at root into the mount namespace of every process in
 * cgroup dir and the cgroups below it that does not have it yet (not the
 * agent's own). Returns how many namespaces got it now; failures are logged
 * per namespace, and retried on the next call. */
int mntns_bind_cgroup(const char *cgdir, const char *root);

#endif
