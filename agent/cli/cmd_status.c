/* nvmirage status: the counters of a running agent, from its control socket. */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "daemon/control.h"
#include "render/render.h"
#include "lib/log.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: nvmirage status [--root T] [-j]\n\n"
		   "Prints what the agent whose tree is at T (default %s) has done so far.\n\n"
		   "  -r, --root T   the agent's tree root (its socket is T.sock)\n"
		   "  -j, --json     print the status as JSON\n", NVM_DEFAULT_ROOT);
}

static void print_section(json_object *o, const char *name, const char *title)
{
	json_object *sec;

	if (!json_object_object_get_ex(o, name, &sec))
		return;
	printf("%s:\n", title);
	json_object_object_foreach(sec, key, val)
		printf("  %-16s %s\n", key, json_object_get_string(val));
}

/* " [ci0 1c.3g.20gb@0, ci1 1c.3g.20gb@1]": a GPU instance's compute
 * instances, unless it has only the one spanning it (named as it is). */
static void print_compute(json_object *gi, const char *gi_profile)
{
	json_object *cis, *ci, *x;
	size_t n;

	if (!json_object_object_get_ex(gi, "compute_instances", &cis) ||
	    !(n = json_object_array_length(cis)))
		return;
	ci = json_object_array_get_idx(cis, 0);
	if (n == 1 && json_object_object_get_ex(ci, "profile", &x) &&
	    !strcmp(json_object_get_string(x), gi_profile))
		return;
	for (size_t c = 0; c < n; c++) {
		json_object *id, *p, *s;

		ci = json_object_array_get_idx(cis, c);
		json_object_object_get_ex(ci, "id", &id);
		json_object_object_get_ex(ci, "profile", &p);
		json_object_object_get_ex(ci, "start", &s);
		printf("%sci%s %s@%s%s", c ? ", " : " [", json_object_get_string(id),
		       json_object_get_string(p), json_object_get_string(s), c + 1 == n ? "]" : "");
	}
}

/* "mig: GPU 0 (0000:07:00.0): gi1 3g.20gb@4, gi3 2g.10gb@0" per GPU with MIG on. */
static void print_mig(json_object *o)
{
	json_object *v, *x;

	if (!json_object_object_get_ex(o, "mig", &v))
		return;
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		json_object *g = json_object_array_get_idx(v, i), *gis = NULL;

		printf("mig: GPU %s (%s):",
		       json_object_object_get_ex(g, "gpu", &x) ? json_object_get_string(x) : "?",
		       json_object_object_get_ex(g, "bus_id", &x) ? json_object_get_string(x) : "?");
		json_object_object_get_ex(g, "gpu_instances", &gis);
		for (size_t k = 0; gis && k < json_object_array_length(gis); k++) {
			json_object *gi = json_object_array_get_idx(gis, k), *id, *p, *s;

			json_object_object_get_ex(gi, "id", &id);
			json_object_object_get_ex(gi, "profile", &p);
			json_object_object_get_ex(gi, "start", &s);
			printf("%s gi%s %s@%s", k ? "," : "", json_object_get_string(id),
			       json_object_get_string(p), json_object_get_string(s));
			print_compute(gi, json_object_get_string(p));
		}
		printf("%s\n", gis && json_object_array_length(gis) ? "" : " no GPU instances");
	}
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, 0, 'r' },
		{ "json", no_argument, 0, 'j' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	const char *root = NVM_DEFAULT_ROOT;
	char path[4200], *buf;
	bool json = false;
	json_object *o, *v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "r:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'r': root = optarg; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return NVM_EXIT_USAGE;
		}
	}
	snprintf(path, sizeof(path), "%s.sock", root);
	if (!(buf = control_query(path)))
		return NVM_EXIT_FAIL;
	if (json) {
		fputs(buf, stdout);
		free(buf);
		return 0;
	}
	o = json_tokener_parse(buf);
	free(buf);
	if (!o) {
		nvm_err("%s: the agent's answer is not JSON", path);
		return NVM_EXIT_FAIL;
	}
	if (json_object_object_get_ex(o, "pid", &v))
		printf("agent pid %s", json_object_get_string(v));
	if (json_object_object_get_ex(o, "profile", &v))
		printf(", profile %s", json_object_get_string(v));
	if (json_object_object_get_ex(o, "strategy", &v))
		printf(", strategy %s", json_object_get_string(v));
	printf("\n");
	if (json_object_object_get_ex(o, "targets", &v))
		for (size_t i = 0; i < json_object_array_length(v); i++)
			printf("target %s\n", json_object_get_string(json_object_array_get_idx(v, i)));
	if (json_object_object_get_ex(o, "faults", &v))
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			json_object *f = json_object_array_get_idx(v, i), *x;

#define F(k) (json_object_object_get_ex(f, k, &x) ? json_object_get_string(x) : "?")
			printf("fault: GPU %s (%s): %s, %s uncorrectable ECC errors%s, %s Xid events %s\n",
			       F("gpu"), F("bus_id"), F("mode"), F("ecc_errors"),
			       json_object_object_get_ex(f, "ecc_pending", &x) &&
					       json_object_get_boolean(x) ? " (remapping pending)" : "",
			       F("xid_events"), F("xids"));
#undef F
		}
	print_mig(o);
	print_section(o, "kernel", "kernel side");
	print_section(o, "agent", "agent side");
	json_object_put(o);
	return 0;
}
