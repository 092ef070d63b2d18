/* Where the kubelet keeps a pod: its UID and its cgroup. */
#ifndef NVM_KUBEPODS_H
#define NVM_KUBEPODS_H

#include <stddef.h>

#define KUBE_UID_LEN 36

/* The UID of pod ns/name, from the kubelet's log directory for it,
 * <logs_dir>/<namespace>_<name>_<uid> (the PodResources API names pods but
 * gives no UID; namespaces and names cannot hold '_'). Returns 0, or -1 if
 * there is none yet. */
int kubepods_uid(const char *logs_dir, const char *ns, const char *name,
		 char uid[KUBE_UID_LEN + 1]);

/* The pod's cgroup v2 directory under root, for either kubelet cgroup
 * driver and every QoS class:
 *   systemd:  kubepods.slice[/kubepods-<qos>.slice]/kubepods[-<qos>]-pod<uid, - as _>.slice
 *   cgroupfs: kubepods[/<qos>]/pod<uid>
 * Returns 0, or -1 if none exists (yet). */
int kubepods_cgroup(const char *root, const char *uid, char *path, size_t len);

/* The directories whose new entries are new pods: kubepods and its QoS
 * directories, for both drivers (those that exist). Returns how many were
 * written to dirs. */
unsigned kubepods_parents(const char *root, char dirs[][4096], unsigned max);

#endif
