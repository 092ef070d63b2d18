/* nvmirage: makes processes in chosen cgroups see a GPU node's NVIDIA driver
 * files, rendered from a profile, by redirecting their path lookups in the
 * kernel. This file dispatches the subcommands. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "cli/cli.h"
#include "smi/smi.h"
#include "lib/log.h"
#include "engine/probe.h"
#include "lib/version.h"


static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv)
{
	(void)argc, (void)argv;
	printf("nvmirage %s\n", NVM_VERSION);
	return 0;
}

static const struct cmd commands[] = {
	{ "render", cmd_render, "write the driver tree of a profile and print its redirect rules" },
	{ "run", cmd_run, "redirect the NVIDIA paths of tasks in target cgroups until stopped" },
	{ "exec", cmd_exec, "run one command in a fresh target cgroup with the redirect on" },
	{ "probe", cmd_probe, "show what this kernel allows and which strategy run would use" },
	{ "status", cmd_status, "print the counters of a running agent" },
	{ "fault", cmd_fault, "make a GPU of a running agent lost, fall off the bus, raise an Xid, ..." },
	{ "mig", cmd_mig, "create or destroy MIG GPU instances of a running agent's GPU" },
	{ "smi", smi_main, "nvidia-smi on nvmirage's NVML: table, -L, -q, --query-gpu, topo -m" },
	{ "version", cmd_version, "print the version" },
	{ "help", cmd_help, "show this help" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: nvmirage [-v|-q] COMMAND [OPTIONS]\n\n"
		   "Shows processes in chosen cgroups the NVIDIA driver files of a GPU node\n"
		   "described by a profile, on a machine without GPUs, without LD_PRELOAD.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n  -v, --verbose  more log (debug, libbpf messages)\n"
		   "  -q, --quiet    errors only\n\n"
		   "'nvmirage COMMAND --help' describes a command's options.\n");
}

static int cmd_help(int argc, char **argv)
{
	(void)argc, (void)argv;
	usage(stdout);
	return 0;
}

/* libbpf speaks only with -v: its warnings carry whole verifier logs, and
 * nvmirage reports every failure itself, saying what the kernel refused. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (nvm_verbosity < NVM_DEBUG || (level == LIBBPF_DEBUG && nvm_libbpf_quiet))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	int i = 1;

	libbpf_set_print(libbpf_print);

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			nvm_verbosity = NVM_DEBUG;
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			nvm_verbosity = NVM_ERROR;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version")) {
			return cmd_version(0, NULL);
		} else {
			fprintf(stderr, "nvmirage: unknown option %s\n", argv[i]);
			usage(stderr);
			return NVM_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	for (size_t c = 0; c < sizeof(commands) / sizeof(commands[0]); c++)
		if (!strcmp(argv[i], commands[c].name))
			return commands[c].fn(argc - i, argv + i);
	fprintf(stderr, "nvmirage: unknown command \"%s\"\n", argv[i]);
	usage(stderr);
	return NVM_EXIT_USAGE;
}
