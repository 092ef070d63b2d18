/* nvmirage render: the tree of a profile, and its redirect rules. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/log.h"
#include "profile/profile.h"
#include "render/render.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nvmirage render --profile P [--gpus N] [--root DIR] [--device-nodes]\n"
		"                       [--no-clip-cpus] [--rules [-j]]\n\n"
		"Writes the driver tree of profile P under DIR (default %s):\n"
		"proc/driver/nvidia, the NVIDIA PCI devices in sys/, sys/module/nvidia and,\n"
		"with --device-nodes, dev/. The tree is built beside DIR and renamed\n"
		"into place; an older tree at DIR is replaced the same way.\n\n"
		"  -p, --profile P     a profile name (profiles/P.yaml) or a YAML file\n"
		"  -g, --gpus N        only the first N GPUs of the profile\n"
		"  -r, --root DIR      where the tree goes (absolute; short, see README)\n"
		"  -d, --device-nodes  also dev/nvidiaN, nvidiactl, nvidia-modeset, nvidia-uvm,\n"
		"                      nvidia-uvm-tools, nvidia-caps/ (root only; majors of\n"
		"                      uvm and caps: the first free on this machine)\n"
		"      --no-clip-cpus  keep the profile's CPU affinity even for CPUs this\n"
		"                      machine does not have (default: clip to online CPUs)\n"
		"      --rules         print the redirect rules (real path -> alias)\n"
		"  -j, --json          print the rules as JSON\n",
		NVM_DEFAULT_ROOT);
}

static const char *kind_name(enum nvm_rule_kind k)
{
	return k == NVM_RULE_NODE ? "node" : "dir";
}

static void print_rules(const struct nvm_rules *rs, bool json)
{
	if (json) {
		json_object *arr = json_object_new_array();

		for (unsigned i = 0; i < rs->n; i++) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "from", json_object_new_string(rs->r[i].from));
			json_object_object_add(o, "to", json_object_new_string(rs->r[i].alias));
			json_object_object_add(o, "target", json_object_new_string(rs->r[i].target));
			json_object_object_add(o, "kind", json_object_new_string(kind_name(rs->r[i].kind)));
			json_object_array_add(arr, o);
		}
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(arr);
		return;
	}
	for (unsigned i = 0; i < rs->n; i++)
		printf("%-30s -> %-14s (%s, %s)\n", rs->r[i].from, rs->r[i].alias,
		       kind_name(rs->r[i].kind), rs->r[i].target);
}

int cmd_render(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, 0, 'p' },
		{ "gpus", required_argument, 0, 'g' },
		{ "root", required_argument, 0, 'r' },
		{ "device-nodes", no_argument, 0, 'd' },
		{ "no-clip-cpus", no_argument, 0, 'C' },
		{ "rules", no_argument, 0, 'R' },
		{ "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	struct profile_opts po = { 0 };
	struct render_opts ro = { .root = NVM_DEFAULT_ROOT, .clip_cpus = true, .host = "/" };
	static struct nvm_model model;
	static struct nvm_rules rules;
	bool show_rules = false, json = false;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:g:r:djh", opts, NULL)) != -1) {
		if ((r = cli_profile_opt(c, optarg, &po)) < 0)
			return NVM_EXIT_USAGE;
		if (r)
			continue;
		switch (c) {
		case 'r': ro.root = optarg; break;
		case 'd': ro.device_nodes = true; break;
		case 'C': ro.clip_cpus = false; break;
		case 'R': show_rules = true; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return NVM_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		nvm_err("render: unexpected argument \"%s\"", argv[optind]);
		return NVM_EXIT_USAGE;
	}
	if (!po.profile) {
		nvm_err("render: --profile is required");
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	if (profile_load(po.profile, po.gpus, &model))
		return NVM_EXIT_USAGE;
	if ((ro.device_nodes && render_dynamic_majors(&model, "/proc/devices")) ||
	    render_tree(&model, &ro, &rules))
		return NVM_EXIT_USAGE;
	nvm_info("rendered %u GPUs of %s into %s (%u rules)", model.ngpus,
		 model.profile_path, ro.root, rules.n);
	if (show_rules)
		print_rules(&rules, json);
	return 0;
}
