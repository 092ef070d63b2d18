/* One running agent: the rendered tree, the engine, the targets, the locks
 * and the control socket. Shared by `run` and `exec`. */
#ifndef NVM_AGENT_H
#define NVM_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "lib/clock.h"
#include "lib/exit_status.h"
#include "profile/model.h"
#include "profile/profile.h"
#include "render/rules.h"

/* Target cgroups an agent takes by default (--max-targets): the tables
 * grow as targets come, and the kernel side's map is sized to this. */
#define NVM_DEFAULT_MAX_TARGETS 4096
#define NVM_MAX_MAX_TARGETS (1u << 20)

struct agent_opts {
	struct profile_opts profile;
	const char *root;
	const char *btf;          /* BTF file to check for; default /sys/kernel/btf/vmlinux */
	bool device_nodes;
	bool clip_cpus;
	unsigned deadline_ms;
	unsigned linger_us;
	double time_scale;        /* every deadline and limit times this (default 1) */
	/* Binds the tree into a target task's mount namespace on demand
	 * (see engine_opts.bind_tree); NULL: not in containers. */
	int (*bind_tree)(void *ctx, uint32_t tid);
	void *bind_ctx;
	const char *strategy;     /* "auto" (default), "in-kernel" or "assisted" */
	const char *entry;        /* "auto" (default), "fentry" or "tp_btf" */
	/* The driver's user space in every target (NVML, nvidia-smi; on by
	 * default), and the nvidia-smi to deliver (NULL: nvmirage's). */
	bool userspace;
	const char *nvidia_smi;
	unsigned max_targets;     /* target cgroups at most (NVM_DEFAULT_MAX_TARGETS) */
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
	unsigned ntargets, cap_targets;
	struct agent_target *targets; /* grows to o.max_targets */
	bool rendered;
	int exit_signal;
	/* Called on every turn of the loop (at least every 100 ms). */
	void (*tick)(void *ctx);
	void *tick_ctx;
	_Atomic long long last_turn_ms; /* for the liveness probe */
};

/* The defaults: no profile, root NVM_DEFAULT_ROOT, auto strategy and entry. */
void agent_opts_init(struct agent_opts *o);

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
