/* Following the kubelet: the pods that hold GPUs become the agent's targets,
 * and get the tree in their containers. */
#ifndef NVM_KUBE_H
#define NVM_KUBE_H

#include <stdbool.h>

#include "daemon/agent.h"
#include "kube/kubepods.h"

#define KUBE_MAX_RESOURCES 8
#define KUBE_DEFAULT_SOCKET "/var/lib/kubelet/pod-resources/kubelet.sock"
#define KUBE_DEFAULT_POD_LOGS "/var/log/pods"
#define KUBE_DEFAULT_RESOURCE "nvidia.com/gpu"

struct kube_opts {
	const char *socket;       /* the kubelet's PodResources socket */
	const char *resources[KUBE_MAX_RESOURCES];
	unsigned nres;
	const char *cgroup_root;  /* where kubepods is, as the agent sees it */
	const char *pod_logs;     /* the kubelet's pod log directory */
	unsigned poll_ms;
	bool bind_tree;           /* bind the tree into the pods' containers */
};

struct kube_pod_target {
	char key[520];            /* namespace/name */
	char uid[KUBE_UID_LEN + 1];
	char cgroup[4096];
};

struct kube {
	struct kube_opts o;
	struct agent *a;
	int inotify_fd;
	long long next_poll_ms;
	int kubelet_up;           /* -1 unknown, 0 down, 1 answering */
	struct kubepods where;    /* the pods' cgroups, from the last walk */
	bool rescan;              /* a directory a pod can appear in changed */
	char last_err[512];
	unsigned npods, cap_pods;
	struct kube_pod_target *pods; /* grows, up to the agent's --max-targets */
};

void kube_opts_init(struct kube_opts *o);
/* Checks the options and starts following (the first List happens at once;
 * a kubelet that does not answer is retried, not fatal). */
int kube_start(struct kube *k, struct agent *a, const struct kube_opts *o);
/* From the agent's loop: re-lists on the poll interval or when kubepods
 * changes, and brings targets and container mounts up to date. */
void kube_tick(void *k);
void kube_stop(struct kube *k);

#endif
