/* Option parsing shared by the subcommands. */
#include "cli/cli.h"

#include <errno.h>
#include <stdlib.h>

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
