/* The redirect engine: the BPF programs, their maps, and the patch service
 * that answers their requests. */
#ifndef NVM_ENGINE_H
#define NVM_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "redirect.h"
#include "render/rules.h"

struct engine_opts {
	const struct nvm_rules *rules;
	const char *root;        /* the tree root the aliases are under */
	int root_lock_fd;        /* the agent's lock on root, or -1: a killed
				  * agent's keeper holds it until it has
				  * removed the tree */
	uint64_t deadline_ns;    /* the agent must claim a request by then (before
				  * time_scale) */
	double time_scale;       /* every deadline and limit times this */
	unsigned linger_us;      /* a service thread keeps polling this long after work */
	unsigned max_targets;    /* target cgroups at most: the targets map's size */
	bool in_kernel;          /* the in-kernel rewrite (see redirect.bpf.c); the
				  * caller checked that bpf_probe_write_user loads */
	bool fentry;             /* fentry/fexit entry points instead of tp_btf;
				  * the caller checked that they attach */
	bool no_rdma_netlink;    /* fail a target's NETLINK_RDMA socket (BPF LSM;
				  * the caller checked that it attaches) */
	/* When set, the tree must be bound into a target task's mount
	 * namespace (a container's) before its first redirect there: the
	 * kernel side asks, and this binds it into the namespace of task tid.
	 * Returns 0 when the namespace has the tree, > 0 when not yet (ask
	 * again), < 0 when it cannot. */
	int (*bind_tree)(void *ctx, uint32_t tid);
	void *bind_ctx;
};

/* What the agent itself counts, beside the kernel side's nvm_kstats. */
struct nvm_astats {
	uint64_t requests;       /* requests claimed */
	uint64_t patched;        /* paths rewritten */
	uint64_t restored;       /* original bytes written back */
	uint64_t nomatch;        /* unread paths that matched no rule */
	uint64_t late;           /* answers after the kernel had given up (undone) */
	uint64_t late_restores;  /* patches restored by the janitor */
	uint64_t fork_repairs;   /* bytes repaired in fork children */
	uint64_t errors;         /* memory not as expected, or I/O failures */
	uint64_t stuck_refused;  /* refused at once: another thread was stuck
				  * inside that process's memory */
	uint64_t claim_us_max;   /* longest a request waited to be claimed */
	uint64_t claim_us_total; /* summed, for the mean over requests */
	uint64_t answer_us_max;  /* longest from claim to answer: the agent's own
				  * memory I/O, asleep on the process's locks */
	uint64_t realtime_threads; /* service threads running SCHED_FIFO */
	uint64_t tree_binds;     /* mount namespaces the tree was bound into (or
				  * found in) at a task's first redirect there */
	uint64_t tree_bind_failed; /* ... could not be bound into (the redirected
				  * path then resolves to nothing there) */
};

/* The counters by name, for every place that prints them. */
#define NVM_KSTATS_FIELDS(X)                                                   \
	X(matched) X(rewritten) X(shared) X(restored) X(deadline_misses)       \
	X(read_faults) X(fork_fixups) X(slot_busy) X(deferred)                 \
	X(busy_no_cpu) X(busy_no_slot) X(busy_no_bell) X(busy_gave_way)        \
	X(room_made) X(fork_unwaited) X(fork_missed) X(agent_failed)           \
	X(ik_rewritten) X(ik_write_faults) X(ik_restored) X(ik_changed) X(exec_gone) \
	X(exec_shared)                                                          \
	X(rdma_netlink_refused) X(cpus_held) X(answer_limit) X(agent_gone)
#define NVM_ASTATS_FIELDS(X)                                                   \
	X(requests) X(patched) X(restored) X(nomatch) X(late) X(late_restores)  \
	X(fork_repairs) X(errors) X(stuck_refused) X(claim_us_max) X(claim_us_total) X(answer_us_max) \
	X(realtime_threads) X(tree_binds) X(tree_bind_failed)

#define NVM_FIELD_ONE(f) +1
_Static_assert(sizeof(struct nvm_kstats) == 8 * (0 NVM_KSTATS_FIELDS(NVM_FIELD_ONE)),
	       "NVM_KSTATS_FIELDS names every counter of struct nvm_kstats");
_Static_assert(sizeof(struct nvm_astats) == 8 * (0 NVM_ASTATS_FIELDS(NVM_FIELD_ONE)),
	       "NVM_ASTATS_FIELDS names every counter of struct nvm_astats");

struct engine;

/* Loads and attaches everything and starts the service threads. Returns 0 or
 * -1 (reported, with what the kernel refused). */
int engine_start(struct engine **out, const struct engine_opts *o);
int engine_add_target(struct engine *e, uint64_t cgroup_id);
int engine_remove_target(struct engine *e, uint64_t cgroup_id);
/* Periodic work for the main thread: the kernel side's notes, and the
 * stall watch (late restores are the service threads' own: janitor.c). */
void engine_tick(struct engine *e);
/* An fd that becomes readable when the kernel side left notes. */
int engine_notes_fd(struct engine *e);
void engine_stats(struct engine *e, struct nvm_kstats *k, struct nvm_astats *a);
/* Human-readable line of all counters. */
void engine_stats_line(struct engine *e, char *buf, unsigned len);
/* Stops the threads, detaches the programs, frees the maps. */
void engine_stop(struct engine *e);

#endif
