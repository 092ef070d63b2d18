/* nvmirage probe: what this kernel allows, and the strategy run would use. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/log.h"
#include "engine/choose.h"
#include "engine/probe.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: nvmirage probe [-j]\n\n"
		   "Loads tiny BPF programs to find out what this kernel allows (BTF,\n"
		   "lockdown, active LSMs, program types, bpf_probe_write_user) and prints\n"
		   "the redirect strategy `run` would use, and why.\n\n"
		   "  -j, --json   machine-readable output\n");
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	struct probe_result p;
	struct engine_choice ch;
	const struct engine_choice *chosen = NULL;
	char err[320];
	bool json = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return NVM_EXIT_USAGE;
		}
	}
	if (probe_kernel(&p))
		return NVM_EXIT_USAGE;
	/* What `run` would do, decided as `run` decides it. */
	if (p.tp_btf.ok && !engine_choose(&p, "auto", "auto", &ch, err, sizeof(err)))
		chosen = &ch;
	if (json) {
		json_object *o = probe_to_json(&p, chosen);

		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		probe_print(&p, chosen, stdout);
	}
	return 0;
}
