/* Subcommands and the options several of them share. */
#ifndef NVM_CLI_H
#define NVM_CLI_H

#include <json-c/json.h>
#include <stdbool.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

#include "lib/exit_status.h"

#include "profile/profile.h"

/* Handles --profile/--gpus; returns 1 if opt was one, 0 if not, -1 on a bad value. */
int cli_profile_opt(int opt, const char *arg, struct profile_opts *p);
int cli_parse_uint(const char *opt, const char *arg, unsigned max, unsigned *out);
/* A decimal factor from 1 to max ("2", "37.5"). */
int cli_parse_scale(const char *opt, const char *arg, double max, double *out);

/* Sends req (a change: fault, mig) to the agent whose tree is at root and
 * reports its answer as "WHAT: done" or "WHAT: why". Takes req. 0, or
 * NVM_EXIT_USAGE (refused, no agent) or NVM_EXIT_FAIL (no JSON back). */
int cli_change(const char *root, json_object *req, const char *what);

int cmd_render(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_fault(int argc, char **argv);
int cmd_mig(int argc, char **argv);

#endif
