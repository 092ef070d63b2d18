/* One running agent: the rendered tree, the engine, the targets, the locks
 * and the control socket. Shared by `run` and `exec`. */
#ifndef NVM_AGENT_H
#define NVM_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "clock.h"
#include "engine.h"
#include "model.h"
#include "rules.h"

#define NVM_MAX_TARGETS 64

struct agent_opts {
	struct profile_opts profile;
	const char *root;
	const char *btf;          /* BTF file to check for; default /sys/kernel/btf/vmlinux */
	bool device_nodes;
	bool clip_cpus;
	unsigned deadline_ms;
	unsigned linger_us;
	double time_scale;        /* every deadline and limit times this (default 1) */
	const char *strategy;     /* "auto" (default), "in-kernel" or "assisted" */
	const char *entry;        /* "auto" (default), "fentry" or "tp_btf" */
};

struct agent_target {
	char path[4096];
	uint64_t id;
	int lock_fd;
	char lock_name[64];
};

struct agent {
	struct agent_opts o;
	struct nvm_model model;
	struct nvm_rules rules;
	struct engine *engine;
	bool in_kernel;           /* the strategy chosen */
	bool fentry;              /* the entry points chosen */
	int root_lock;
	char root_lock_name[64];
	int control_fd;
	char control_path[4200];
	int sig_fd;
	unsigned ntargets;
	struct agent_target targets[NVM_MAX_TARGETS];
	bool rendered;
	int exit_signal;
	/* Called on every turn of the loop (at least every 100 ms). */
	void (*tick)(void *ctx);
	void *tick_ctx;
	_Atomic long long last_turn_ms; /* for the liveness probe */
};

/* Options shared by run and exec, for getopt_long. Returns 1 if opt was one
 * of them, 0 if not, -1 on a bad value. */
int agent_parse_opt(int opt, const char *arg, struct agent_opts *o);
void agent_opts_init(struct agent_opts *o);
#define AGENT_LONG_OPTS                                      \
	{ "profile", required_argument, 0, 'p' },            \
	{ "gpus", required_argument, 0, 'g' },               \
	{ "root", required_argument, 0, 'r' },               \
	{ "device-nodes", no_argument, 0, 'd' },             \
	{ "no-clip-cpus", no_argument, 0, 'C' },             \
	{ "deadline-ms", required_argument, 0, 'D' },        \
	{ "linger-us", required_argument, 0, 'L' },          \
	{ "btf", required_argument, 0, 'B' },                \
	{ "strategy", required_argument, 0, 'S' },          \
	{ "entry", required_argument, 0, 'E' },              \
	{ "time-scale", required_argument, 0, 'T' }
#define AGENT_OPTS_HELP                                                              \
	"  -p, --profile P       a profile name (profiles/P.yaml) or a YAML file\n"       \
	"  -g, --gpus N          only the first N GPUs of the profile\n"                  \
	"  -r, --root T          where the tree goes (default " NVM_DEFAULT_ROOT ")\n"     \
	"  -d, --device-nodes    also redirect /dev/nvidiaN, nvidiactl, nvidia-modeset\n" \
	"      --no-clip-cpus    keep CPU affinities this machine does not have\n"        \
	"      --deadline-ms N   longest a syscall waits for the agent (default 50;\n"   \
	"                        then it goes on unredirected and is counted)\n"          \
	"      --linger-us N     keep polling this long after work (default 100000)\n"      \
	"      --btf FILE        kernel BTF (default /sys/kernel/btf/vmlinux)\n"          \
	"      --strategy NAME   auto (default: in-kernel where the kernel allows it,\n" \
	"                        else assisted), in-kernel, or assisted\n"           \
	"      --entry NAME      auto (default: fentry where it attaches, else\n"    \
	"                        tp_btf), fentry, or tp_btf\n"                       \
	"      --time-scale F    multiply every deadline and time limit by F (1 to\n" \
	"                        1000, default 1): for emulated machines, tens of\n"  \
	"                        times slower than the hardware the defaults fit\n"

/* Checks the machine, renders the tree, loads the engine, opens the control
 * socket. Returns 0, or an exit status (2 bad input, 1 failure) after
 * reporting and undoing everything. */
int agent_start(struct agent *a, const struct agent_opts *o);
/* Targets a cgroup v2 directory (and every cgroup below it). */
int agent_add_target(struct agent *a, const char *path);
/* Stops targeting one cgroup given to agent_add_target. */
void agent_remove_target(struct agent *a, const char *path);
void agent_remove_targets(struct agent *a);
/* Serves until SIGINT/SIGTERM, or until done(ctx) returns true (checked
 * after every SIGCHLD and tick). */
void agent_loop(struct agent *a, bool (*done)(void *ctx), void *ctx);
/* Detaches everything and removes what start created. */
void agent_stop(struct agent *a);

#endif
