/* Option parsing shared by the subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon/control.h"
#include "lib/log.h"

int cli_parse_uint(const char *opt, const char *arg, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || v > max || arg[0] == '-')
		return nvm_err_r(-1, "%s: \"%s\" is not a number from 0 to %u", opt, arg, max);
	*out = (unsigned)v;
	return 0;
}

int cli_parse_scale(const char *opt, const char *arg, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!*arg || *end || errno || !(v >= 1 && v <= max))
		return nvm_err_r(-1, "%s: \"%s\" is not a number from 1 to %g", opt, arg, max);
	*out = v;
	return 0;
}

int cli_profile_opt(int opt, const char *arg, struct profile_opts *p)
{
	switch (opt) {
	case 'p':
		p->profile = arg;
		return 1;
	case 'g':
		if (cli_parse_uint("--gpus", arg, 64, &p->gpus))
			return -1;
		if (!p->gpus)
			return nvm_err_r(-1, "--gpus: must be at least 1");
		return 1;
	}
	return 0;
}

int cli_change(const char *root, json_object *req, const char *what)
{
	char path[4200], *buf;
	json_object *ans, *v;
	int status;

	snprintf(path, sizeof(path), "%s.sock", root);
	buf = control_request(path, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
	json_object_put(req);
	if (!buf)
		return NVM_EXIT_USAGE;
	ans = json_tokener_parse(buf);
	free(buf);
	if (!ans) {
		nvm_err("%s: the agent's answer is not JSON", path);
		return NVM_EXIT_FAIL;
	}
	status = json_object_object_get_ex(ans, "error", &v) ? NVM_EXIT_USAGE : 0;
	if (status)
		nvm_err("%s: %s", what, json_object_get_string(v));
	else
		nvm_info("%s: done", what);
	json_object_put(ans);
	return status;
}
