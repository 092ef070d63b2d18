#include "kube/kube.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/grow.h"
#include "kube/kubepods.h"
#include "lib/log.h"
#include "kube/mntns.h"
#include "kube/podresources.h"

#define LIST_TIMEOUT_MS 2000
/* After a change under kubepods: wait this long for the pod's cgroups and
 * processes to appear before listing. */
#define SETTLE_MS 100

void kube_opts_init(struct kube_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->socket = KUBE_DEFAULT_SOCKET;
	o->pod_logs = KUBE_DEFAULT_POD_LOGS;
	o->poll_ms = 2000;
	o->bind_tree = true;
}

/* Walks the cgroup tree for the pods' cgroups, watching every directory
 * a new pod can appear in (see kubepods.h), and the pod log directory. */
static void scan_pods(struct kube *k)
{
	if (kubepods_scan(&k->where, k->o.cgroup_root, k->inotify_fd))
		nvm_warn("--cgroup-root %s: %s", k->o.cgroup_root, strerror(errno));
	inotify_add_watch(k->inotify_fd, k->o.pod_logs, IN_CREATE | IN_DELETE | IN_ONLYDIR);
	k->rescan = false;
	nvm_debug("pod cgroups: %u pods under %s (%u directories walked)", k->where.n,
		  k->o.cgroup_root, k->where.dirs);
}

/* The cgroup of pod uid: from the last walk, or from a new one when the
 * tree changed since or the pod is not in it yet. */
static const char *pod_cgroup(struct kube *k, const char *uid, bool *walked)
{
	const char *cg = k->rescan ? NULL : kubepods_find(&k->where, uid);

	if (!cg && !*walked) {
		scan_pods(k);
		*walked = true;
		cg = kubepods_find(&k->where, uid);
	}
	return cg;
}

int kube_start(struct kube *k, struct agent *a, const struct kube_opts *o)
{
	struct stat st;

	memset(k, 0, sizeof(*k));
	k->o = *o;
	k->a = a;
	k->kubelet_up = -1;
	if (!k->o.nres)
		k->o.resources[k->o.nres++] = KUBE_DEFAULT_RESOURCE;
	if (stat(k->o.cgroup_root, &st) || !S_ISDIR(st.st_mode))
		return nvm_err_r(-1, "--cgroup-root %s: not a directory", k->o.cgroup_root);
	k->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (k->inotify_fd < 0)
		return nvm_err_r(-1, "inotify: %s", strerror(errno));
	scan_pods(k);
	nvm_info("kubernetes: pods holding %s%s%s from %s, every %u ms and on changes; pod "
		 "cgroups found under %s by their names, on every kubelet layout (%u pods there "
		 "now); pod UIDs from %s", k->o.resources[0], k->o.nres > 1 ? " (and " : "",
		 k->o.nres > 1 ? "more)" : "", k->o.socket, k->o.poll_ms, k->o.cgroup_root,
		 k->where.n, k->o.pod_logs);
	return 0;
}

/* The target of pod uid, if it is one. */
static struct kube_pod_target *find_pod(struct kube *k, const char *uid)
{
	for (unsigned i = 0; i < k->npods; i++)
		if (!strcmp(k->pods[i].uid, uid))
			return &k->pods[i];
	return NULL;
}

static void drop_pod(struct kube *k, unsigned i, const char *why)
{
	nvm_info("pod %s %s: cgroup %s is no longer a target", k->pods[i].key, why,
		 k->pods[i].cgroup);
	agent_remove_target(k->a, k->pods[i].cgroup);
	k->pods[i] = k->pods[--k->npods];
}

static void kubelet_failed(struct kube *k, const char *err)
{
	if (k->kubelet_up != 0 || strcmp(err, k->last_err))
		nvm_warn("kubelet (%s): %s; keeping the %u current targets, retrying every %u ms",
			 k->o.socket, err, k->npods, k->o.poll_ms);
	snprintf(k->last_err, sizeof(k->last_err), "%s", err);
	k->kubelet_up = 0;
}

/* Room in k->pods for one more. */
static bool room_for_pod(struct kube *k)
{
	void *grown = grow_for_one(k->pods, &k->cap_pods, k->npods, sizeof(*k->pods), 16);

	if (!grown) {
		nvm_warn("kubelet: out of memory for pod %u", k->npods + 1);
		return false;
	}
	k->pods = grown;
	return true;
}

/* The UID and cgroup of pod p: of the UIDs its name has in the log
 * directory, the one whose cgroup exists (an old pod of the same name may
 * have left its directory). Returns the cgroup, or NULL if none has one yet. */
static const char *pod_uid_cgroup(struct kube *k, const struct kubepods_logs *logs,
				  const struct gpu_pod *p, const char **uid, bool *walked)
{
	const char *cg;

	for (unsigned i = 0; (*uid = kubepods_logs_uid(logs, p->ns, p->name, i)); i++)
		if ((cg = pod_cgroup(k, *uid, walked)))
			return cg;
	return NULL;
}

/* Makes the targets the pods listed now, as far as their cgroups exist.
 * One listing of the log directory and at most one walk of the cgroup tree
 * per call; each pod's UID and cgroup are then binary searches, and its
 * target a scan of short UIDs (no path resolved, nothing read per pod). */
static void sync_targets(struct kube *k, const struct gpu_pods *pods)
{
	char *seen = calloc(k->npods + pods->n + 1, 1); /* by index in k->pods */
	struct kubepods_logs logs = { 0 };
	bool walked = false;

	if (!seen) {
		nvm_warn("kubelet: out of memory; keeping the %u current targets", k->npods);
		return;
	}
	if (pods->n && kubepods_logs_read(&logs, k->o.pod_logs))
		nvm_debug("pod logs %s: %s", k->o.pod_logs, strerror(errno));
	for (unsigned i = 0; i < pods->n; i++) {
		const struct gpu_pod *p = &pods->p[i];
		const char *uid, *cg = pod_uid_cgroup(k, &logs, p, &uid, &walked);
		struct kube_pod_target *t;

		if (!cg) {
			nvm_debug("pod %s/%s: no pod cgroup yet", p->ns, p->name);
			continue;
		}
		t = find_pod(k, uid);
		if (!t) {
			if (!room_for_pod(k) || agent_add_target(k->a, cg))
				continue;
			t = &k->pods[k->npods++];
			memset(t, 0, sizeof(*t));
			snprintf(t->key, sizeof(t->key), "%s/%s", p->ns, p->name);
			snprintf(t->uid, sizeof(t->uid), "%s", uid);
			/* As the agent keeps it (resolved), to remove it by. */
			snprintf(t->cgroup, sizeof(t->cgroup), "%s",
				 k->a->targets[k->a->ntargets - 1].path);
			nvm_info("pod %s (uid %s) holds %u devices: target", t->key, uid, p->devices);
			/* New containers of the pod: bind the tree soon. */
			inotify_add_watch(k->inotify_fd, cg, IN_CREATE | IN_ONLYDIR);
		}
		seen[t - k->pods] = 1;
	}
	for (unsigned i = k->npods; i-- > 0;)
		if (!seen[i])
			drop_pod(k, i, "holds no GPU any more (or ended)");
	kubepods_logs_free(&logs);
	free(seen);
}

static void sync_once(struct kube *k)
{
	struct gpu_pods pods;
	char err[512];

	if (podresources_gpu_pods(k->o.socket, k->o.resources, k->o.nres, LIST_TIMEOUT_MS, &pods,
				  err, sizeof(err))) {
		kubelet_failed(k, err);
		return;
	}
	if (k->kubelet_up != 1)
		nvm_info("kubelet (%s) answers: %u pods hold GPUs", k->o.socket, pods.n);
	k->kubelet_up = 1;
	k->last_err[0] = '\0';
	sync_targets(k, &pods);
	gpu_pods_free(&pods);
}

static void bind_trees(struct kube *k)
{
	for (unsigned i = 0; i < k->npods; i++)
		mntns_bind_cgroup(k->pods[i].cgroup, k->a->o.root);
}

void kube_tick(void *arg)
{
	struct kube *k = arg;
	char buf[4096];
	long long now = mono_ms();
	bool changed = false;

	while (read(k->inotify_fd, buf, sizeof(buf)) > 0)
		changed = true;
	if (changed)
		k->rescan = true;
	if (changed && k->next_poll_ms > now + SETTLE_MS)
		k->next_poll_ms = now + SETTLE_MS;
	if (now >= k->next_poll_ms) {
		k->next_poll_ms = now + k->o.poll_ms;
		sync_once(k);
		if (k->o.bind_tree)
			bind_trees(k);
	}
	/* Pods whose cgroup went away (the kubelet removes it after the pod
	 * ends, maybe before it stops listing the pod). */
	for (unsigned i = k->npods; i-- > 0;) {
		struct stat st;

		if (stat(k->pods[i].cgroup, &st))
			drop_pod(k, i, "ended");
	}
}

void kube_stop(struct kube *k)
{
	if (k->inotify_fd > 0)
		close(k->inotify_fd);
	k->inotify_fd = -1;
	k->npods = k->cap_pods = 0;
	free(k->pods);
	k->pods = NULL;
	kubepods_free(&k->where);
}
