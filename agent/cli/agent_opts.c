/* The options `run` and `exec` share. */
#include "cli/agent_opts.h"

#include <string.h>

#include "cli/cli.h"
#include "lib/log.h"

int agent_parse_opt(int opt, const char *arg, struct agent_opts *o)
{
	int r = cli_profile_opt(opt, arg, &o->profile);

	if (r)
		return r;
	switch (opt) {
	case 'r': o->root = arg; return 1;
	case 'd': o->device_nodes = true; return 1;
	case 'C': o->clip_cpus = false; return 1;
	case 'B': o->btf = arg; return 1;
	case 'D':
		if (cli_parse_uint("--deadline-ms", arg, 10000, &o->deadline_ms))
			return -1;
		if (!o->deadline_ms)
			return nvm_err_r(-1, "--deadline-ms: must be at least 1");
		return 1;
	case 'L':
		return cli_parse_uint("--linger-us", arg, 1000000, &o->linger_us) ? -1 : 1;
	case 'T':
		return cli_parse_scale("--time-scale", arg, 1000, &o->time_scale) ? -1 : 1;
	case 'S':
		if (strcmp(arg, "auto") && strcmp(arg, "in-kernel") && strcmp(arg, "assisted"))
			return nvm_err_r(-1, "--strategy %s: not a strategy (auto, in-kernel or "
					     "assisted)", arg);
		o->strategy = arg;
		return 1;
	case 'U': o->userspace = false; return 1;
	case 'N': o->nvidia_smi = arg; return 1;
	case 'E':
		if (strcmp(arg, "auto") && strcmp(arg, "fentry") && strcmp(arg, "tp_btf"))
			return nvm_err_r(-1, "--entry %s: not an entry point (auto, fentry or tp_btf)",
					 arg);
		o->entry = arg;
		return 1;
	}
	return 0;
}

