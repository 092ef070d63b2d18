/* Where the kubelet keeps a pod: its UID and its cgroup. */
#ifndef NVM_KUBEPODS_H
#define NVM_KUBEPODS_H

#include <stddef.h>

#define KUBE_UID_LEN 36

/* The pods' UIDs by namespace and name, from one listing of the kubelet's
 * log directory, whose entries are <namespace>_<name>_<uid> (the
 * PodResources API names pods but gives no UID; namespaces and names cannot
 * hold '_'). Read once for each listing of the pods, it answers each pod in
 * O(log n) instead of a directory listing per pod. A pod made again under
 * its old name has two UIDs there until the kubelet removes the old
 * directory: the caller takes the one whose cgroup exists. */
struct kubepods_logs {
	unsigned n, cap;
	char **names; /* sorted */
};

/* Lists logs_dir afresh. Returns 0, or -1 (errno set) if it cannot be read
 * (l is then empty). */
int kubepods_logs_read(struct kubepods_logs *l, const char *logs_dir);
/* The i-th UID (from 0) of pod ns/name, or NULL past the last. */
const char *kubepods_logs_uid(const struct kubepods_logs *l, const char *ns, const char *name,
			      unsigned i);
void kubepods_logs_free(struct kubepods_logs *l);

/* Where the pods' cgroups are under a cgroup2 directory (the agent's
 * --cgroup-root), on every layout the kubelet makes, found by their names:
 *   systemd driver:  ...<anything>-pod<uid, with - as _>.slice
 *     kubeadm  kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice
 *     Kind     kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod<uid_>.slice
 *   cgroupfs driver: .../pod<uid>
 *     kubeadm, k3s  kubepods/besteffort/pod<uid>, kubepods/pod<uid> (Guaranteed)
 * and any cgroupRoot the kubelet was given, within two levels of root.
 *
 * One walk lists every pod (kubepods_scan): it goes down the directories
 * whose names hold "kubepods" (and the QoS directories in them), and
 * everything within two levels of root, where a kubepods directory can
 * start; never into a pod (its containers). So it reads a few directories
 * per QoS class plus one entry per pod: on a node with N pods, O(N)
 * entries. It can watch every directory it went down (inotify), which is
 * everywhere a new pod can appear. */
struct kubepods_entry {
	char uid[KUBE_UID_LEN + 1];
	char path[4096];
};

struct kubepods {
	unsigned n, cap;
	struct kubepods_entry *e;
	unsigned dirs;            /* directories the last walk went down */
};

/* Walks root afresh. inotify_fd >= 0: watches each directory it goes down
 * (IN_CREATE | IN_DELETE of directories). Returns 0, or -1 when root cannot
 * be read. */
int kubepods_scan(struct kubepods *k, const char *root, int inotify_fd);
/* The pod's cgroup directory from the last walk, or NULL (a binary search:
 * the walk leaves the entries sorted by UID). */
const char *kubepods_find(const struct kubepods *k, const char *uid);
void kubepods_free(struct kubepods *k);

/* The UID in a pod cgroup directory's name (either driver's form), or -1. */
int kubepods_name_uid(const char *name, char uid[KUBE_UID_LEN + 1]);

#endif
