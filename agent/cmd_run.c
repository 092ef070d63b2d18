/* nvmirage run: the long-running agent for a set of target cgroups. */
#include <getopt.h>
#include <stdio.h>

#include "agent.h"
#include "log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nvmirage run --profile P --cgroup PATH [--cgroup PATH ...] [OPTIONS]\n\n"
		"Renders the tree of profile P, loads the BPF programs and redirects the\n"
		"NVIDIA /proc and sysfs path lookups of every task in the target cgroups\n"
		"(cgroup v2 directories, and every cgroup below them, including ones made\n"
		"later) into the tree, until SIGINT or SIGTERM. Then it detaches everything\n"
		"and removes the tree. A second agent on the same cgroup or root is refused.\n\n"
		"  -c, --cgroup PATH     a target cgroup v2 directory (repeatable)\n"
		AGENT_OPTS_HELP);
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		AGENT_LONG_OPTS,
		{ "cgroup", required_argument, 0, 'c' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	static struct agent a;
	struct agent_opts o;
	const char *cgroups[NVM_MAX_TARGETS];
	unsigned ncg = 0;
	int c, r;

	agent_opts_init(&o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:g:r:dc:h", opts, NULL)) != -1) {
		if ((r = agent_parse_opt(c, optarg, &o)) < 0)
			return NVM_EXIT_USAGE;
		if (r)
			continue;
		switch (c) {
		case 'c':
			if (ncg >= NVM_MAX_TARGETS) {
				nvm_err("at most %d --cgroup", NVM_MAX_TARGETS);
				return NVM_EXIT_USAGE;
			}
			cgroups[ncg++] = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return NVM_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		nvm_err("run: unexpected argument \"%s\"", argv[optind]);
		return NVM_EXIT_USAGE;
	}
	if (!ncg) {
		nvm_err("run: give at least one --cgroup");
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	if ((r = agent_start(&a, &o)))
		return r;
	for (unsigned i = 0; i < ncg; i++) {
		if (agent_add_target(&a, cgroups[i])) {
			agent_stop(&a);
			return NVM_EXIT_USAGE;
		}
	}
	nvm_info("ready: %u target cgroups; stop with SIGINT or SIGTERM", a.ntargets);
	agent_loop(&a, NULL, NULL);
	agent_stop(&a);
	return 0;
}
