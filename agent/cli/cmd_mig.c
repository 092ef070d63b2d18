/* nvmirage mig: creates or destroys a GPU's MIG GPU instances in a running
 * agent, through its control socket, as nvidia-smi mig -cgi and -dgi do on
 * a real node. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/log.h"
#include "render/render.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nvmirage mig [--root T] GPU create PROFILE[:START][,PROFILE...]\n"
		"       nvmirage mig [--root T] GPU destroy ID[,ID...]|all\n\n"
		"Changes the GPU instances of GPU (its index, bus id or UUID) of the agent\n"
		"whose tree is at T (default %s), as nvidia-smi mig -cgi and -dgi do:\n"
		"each GPU instance gets the one compute instance spanning it. The\n"
		"capability files, the nvidia-caps nodes (with --device-nodes) and NVML's\n"
		"view follow at once for every process of the agent's targets; a process\n"
		"that has NVML initialized sees the change at its next nvmlInit. The GPU\n"
		"must have MIG on in the profile (mig.mode_current: enabled). Root only.\n\n"
		"  create   PROFILE is a name of the board (3g.20gb) or its profile id (9),\n"
		"           placed as the driver places it, or at START (a memory slot,\n"
		"           0..7); all of them, or none if one does not fit\n"
		"  destroy  the GPU instances of these ids (nvidia-smi mig -lgi's ID), or\n"
		"           all of them\n\n"
		"  -r, --root T     the agent's tree root (its socket is T.sock)\n\n"
		"`nvmirage status` lists each GPU's instances.\n", NVM_DEFAULT_ROOT);
}

int cmd_mig(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, 0, 'r' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	const char *root = NVM_DEFAULT_ROOT;
	char what[512];
	json_object *req;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': root = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return NVM_EXIT_USAGE;
		}
	}
	if (argc - optind != 3) {
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	req = json_object_new_object();
	json_object_object_add(req, "op", json_object_new_string("mig"));
	json_object_object_add(req, "gpu", json_object_new_string(argv[optind]));
	json_object_object_add(req, "action", json_object_new_string(argv[optind + 1]));
	json_object_object_add(req, "list", json_object_new_string(argv[optind + 2]));
	snprintf(what, sizeof(what), "mig %s %s %s", argv[optind], argv[optind + 1], argv[optind + 2]);
	return cli_change(root, req, what);
}
