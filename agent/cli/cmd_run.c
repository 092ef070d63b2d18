/* nvmirage run: the long-running agent for a set of target cgroups, given
 * on the command line or followed from the kubelet. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/agent_opts.h"
#include "cli/cli.h"
#include "daemon/agent.h"
#include "daemon/cgroups.h"
#include "daemon/health.h"
#include "kube/kube.h"
#include "kube/mntns.h"
#include "lib/log.h"

/* In containers with a read-only root file system only /dev is sure to be
 * writable (a tmpfs the runtime makes), and the tree needs a mount point. */
#define KUBE_DEFAULT_ROOT "/dev/nvm"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nvmirage run --profile P (--cgroup PATH ... | --kubernetes) [OPTIONS]\n\n"
		"Renders the tree of profile P, loads the BPF programs and redirects the\n"
		"NVIDIA /proc and sysfs path lookups of every task in the target cgroups\n"
		"(cgroup v2 directories, and every cgroup below them, including ones made\n"
		"later) into the tree, until SIGINT or SIGTERM. Then it detaches everything\n"
		"and removes the tree. A second agent on the same cgroup or root is refused.\n\n"
		"  -c, --cgroup PATH     a target cgroup v2 directory (repeatable)\n"
		"      --max-targets N   target cgroups at most, given and found (default\n"
		"                        4096); the tables grow as targets come\n"
		AGENT_OPTS_HELP
		"      --listen HOST:PORT  serve /healthz, /readyz and /metrics (Prometheus)\n\n"
		"Kubernetes (the pods that hold GPUs become targets, and get the tree\n"
		"bound read-only into their containers):\n"
		"  -k, --kubernetes      follow the kubelet's PodResources API (default root\n"
		"                        " KUBE_DEFAULT_ROOT ", as only /dev is sure to be writable in\n"
		"                        containers with a read-only root file system)\n"
		"      --kubelet-socket PATH  (default " KUBE_DEFAULT_SOCKET ")\n"
		"      --resource-name NAME   a device resource that makes a pod a target\n"
		"                        (repeatable; default " KUBE_DEFAULT_RESOURCE ")\n"
		"      --cgroup-root DIR the cgroup2 directory holding kubepods[.slice], as\n"
		"                        this process sees it (default: the cgroup2 mount)\n"
		"      --pod-logs DIR    the kubelet's pod log directory, for pod UIDs\n"
		"                        (default " KUBE_DEFAULT_POD_LOGS ")\n"
		"      --poll-ms N       list pods this often (default 2000), and on changes\n"
		"      --no-bind-tree    do not bind the tree into containers\n");
}

enum {
	OPT_LISTEN = 1000, OPT_SOCKET, OPT_RESOURCE, OPT_CGROOT, OPT_PODLOGS, OPT_POLL, OPT_NOBIND,
	OPT_MAXT,
};

struct run_args {
	const char **cgroups;     /* argc of them at most */
	unsigned ncg;
	const char *listen;
	bool kubernetes;
	struct kube_opts ko;
	char cgroot[4096];
};

static int parse_kube_opt(int c, const char *arg, struct run_args *r)
{
	switch (c) {
	case 'k': r->kubernetes = true; return 1;
	case OPT_SOCKET: r->ko.socket = arg; return 1;
	case OPT_CGROOT: r->ko.cgroup_root = arg; return 1;
	case OPT_PODLOGS: r->ko.pod_logs = arg; return 1;
	case OPT_NOBIND: r->ko.bind_tree = false; return 1;
	case OPT_POLL:
		if (cli_parse_uint("--poll-ms", arg, 3600000, &r->ko.poll_ms) || r->ko.poll_ms < 100)
			return nvm_err_r(-1, "--poll-ms: give 100 or more");
		return 1;
	case OPT_RESOURCE:
		if (r->ko.nres >= KUBE_MAX_RESOURCES)
			return nvm_err_r(-1, "at most %d --resource-name", KUBE_MAX_RESOURCES);
		if (!*arg || strchr(arg, ' '))
			return nvm_err_r(-1, "--resource-name \"%s\": not a resource name", arg);
		r->ko.resources[r->ko.nres++] = arg;
		return 1;
	}
	return 0;
}

static int parse(int argc, char **argv, struct agent_opts *o, struct run_args *r)
{
	static const struct option opts[] = {
		AGENT_LONG_OPTS,
		{ "cgroup", required_argument, 0, 'c' },
		{ "kubernetes", no_argument, 0, 'k' },
		{ "kubelet-socket", required_argument, 0, OPT_SOCKET },
		{ "resource-name", required_argument, 0, OPT_RESOURCE },
		{ "cgroup-root", required_argument, 0, OPT_CGROOT },
		{ "pod-logs", required_argument, 0, OPT_PODLOGS },
		{ "poll-ms", required_argument, 0, OPT_POLL },
		{ "no-bind-tree", no_argument, 0, OPT_NOBIND },
		{ "listen", required_argument, 0, OPT_LISTEN },
		{ "max-targets", required_argument, 0, OPT_MAXT },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	int c, k;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:g:r:dc:kh", opts, NULL)) != -1) {
		if ((k = agent_parse_opt(c, optarg, o)) || (k = parse_kube_opt(c, optarg, r))) {
			if (k < 0)
				return NVM_EXIT_USAGE;
			continue;
		}
		switch (c) {
		case 'c':
			r->cgroups[r->ncg++] = optarg;
			break;
		case OPT_MAXT:
			if (cli_parse_uint("--max-targets", optarg, NVM_MAX_MAX_TARGETS,
					   &o->max_targets) || !o->max_targets)
				return nvm_err_r(NVM_EXIT_USAGE, "--max-targets: give 1 to %u",
						 NVM_MAX_MAX_TARGETS);
			break;
		case OPT_LISTEN: r->listen = optarg; break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return NVM_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return nvm_err_r(NVM_EXIT_USAGE, "run: unexpected argument \"%s\"", argv[optind]);
	if (r->ncg > o->max_targets)
		return nvm_err_r(NVM_EXIT_USAGE, "run: %u --cgroup, more than --max-targets %u",
				 r->ncg, o->max_targets);
	if (!r->ncg && !r->kubernetes) {
		nvm_err("run: give at least one --cgroup, or --kubernetes");
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	if (!r->kubernetes && (r->ko.nres || r->ko.cgroup_root || strcmp(r->ko.socket, KUBE_DEFAULT_SOCKET)))
		return nvm_err_r(NVM_EXIT_USAGE, "run: the kubelet options need --kubernetes");
	if (r->kubernetes && !strcmp(o->root, NVM_DEFAULT_ROOT)) {
		o->root = KUBE_DEFAULT_ROOT;
		nvm_info("root %s: the tree's mount point in containers must be creatable, "
			 "also with a read-only root file system", o->root);
	}
	if (r->kubernetes && !r->ko.cgroup_root) {
		if (cgroup2_mount(r->cgroot, sizeof(r->cgroot)))
			return NVM_EXIT_USAGE;
		r->ko.cgroup_root = r->cgroot;
	}
	return 0;
}

/* The tree into a target task's container at its first redirect there. */
static int bind_tree(void *ctx, uint32_t tid)
{
	return mntns_bind_pid((pid_t)tid, ((const struct agent_opts *)ctx)->root);
}

int cmd_run(int argc, char **argv)
{
	static struct agent a;
	static struct kube k;
	static struct run_args r;
	struct health *h = NULL;
	struct agent_opts o;
	int status = 0, rc;

	agent_opts_init(&o);
	memset(&r, 0, sizeof(r));
	kube_opts_init(&r.ko);
	r.cgroups = calloc((size_t)argc, sizeof(*r.cgroups));
	if (!r.cgroups)
		return nvm_err_r(NVM_EXIT_FAIL, "out of memory");
	if ((rc = parse(argc, argv, &o, &r))) {
		free(r.cgroups);
		return rc < 0 ? 0 : rc;
	}
	if (r.kubernetes && r.ko.bind_tree) {
		o.bind_tree = bind_tree;
		o.bind_ctx = &a.o; /* the options as the agent keeps them */
	}
	if ((rc = agent_start(&a, &o)))
		return rc;
	for (unsigned i = 0; i < r.ncg; i++)
		if (agent_add_target(&a, r.cgroups[i]))
			goto usage;
	if (r.kubernetes) {
		if (kube_start(&k, &a, &r.ko))
			goto usage;
		a.tick = kube_tick;
		a.tick_ctx = &k;
	}
	if (r.listen && !(h = health_start(r.listen, &a, r.kubernetes ? &k.kubelet_up : NULL)))
		goto usage;
	nvm_info("ready: %u target cgroups%s; stop with SIGINT or SIGTERM", a.ntargets,
		 r.kubernetes ? ", and the pods the kubelet lists" : "");
	agent_loop(&a, NULL, NULL);
	goto out;
usage:
	status = NVM_EXIT_USAGE;
out:
	health_stop(h);
	if (r.kubernetes)
		kube_stop(&k);
	agent_stop(&a);
	free(r.cgroups);
	return status;
}
