/* nvmirage fault: sets or clears a GPU's or an HCA's fault in a running agent, through
 * its control socket. */
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
		"usage: nvmirage fault [--root T] GPU MODE [--xid N]\n"
		"       nvmirage fault [--root T] HCA port-down\n"
		"       nvmirage fault [--root T] GPU|HCA clear\n\n"
		"Makes GPU (its index, bus id or UUID) or InfiniBand HCA (mlx5_N or its\n"
		"bus id) of the agent whose tree is at T\n"
		"(default %s) show a fault, as a real node shows it, to every process\n"
		"of the agent's targets at once; nothing outside them sees it. Root only.\n\n"
		"Modes:\n"
		"  lost             NVML calls on the GPU fail with GPU_IS_LOST\n"
		"  fallen-off-bus   lost, its PCI config space reads all 0xff, Xid 79\n"
		"  excluded         as the driver's NVreg_ExcludedGpus: the information\n"
		"                   file says \"GPU Excluded: Yes\", NVML leaves it out\n"
		"  ecc              one more uncorrectable ECC error (volatile and\n"
		"                   aggregate), a row remapping pending, Xid 48\n"
		"  xid --xid N      an Xid event of code N for NVML's event API\n"
		"  port-down        (an HCA) its port DOWN, physically Disabled\n"
		"  clear            no fault: the GPU's or HCA's files as first rendered\n\n"
		"  -r, --root T     the agent's tree root (its socket is T.sock)\n"
		"  -x, --xid N      the Xid code (1..65535), for the xid mode\n\n"
		"`nvmirage status` lists the faults in force.\n", NVM_DEFAULT_ROOT);
}

int cmd_fault(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, 0, 'r' },
		{ "xid", required_argument, 0, 'x' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	const char *root = NVM_DEFAULT_ROOT;
	char what[512];
	json_object *req;
	unsigned xid = 0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+r:x:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': root = optarg; break;
		case 'x':
			if (cli_parse_uint("--xid", optarg, 65535, &xid))
				return NVM_EXIT_USAGE;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return NVM_EXIT_USAGE;
		}
	}
	/* Options may also follow GPU and MODE. */
	while (optind < argc && argc - optind > 2) {
		if (!strcmp(argv[argc - 2], "--xid") || !strcmp(argv[argc - 2], "-x")) {
			if (cli_parse_uint("--xid", argv[argc - 1], 65535, &xid))
				return NVM_EXIT_USAGE;
			argc -= 2;
		} else {
			break;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	req = json_object_new_object();
	json_object_object_add(req, "op", json_object_new_string("fault"));
	json_object_object_add(req, "gpu", json_object_new_string(argv[optind]));
	json_object_object_add(req, "mode", json_object_new_string(argv[optind + 1]));
	json_object_object_add(req, "xid", json_object_new_int((int)xid));
	snprintf(what, sizeof(what), "fault %s %s", argv[optind], argv[optind + 1]);
	return cli_change(root, req, what);
}
