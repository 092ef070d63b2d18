/* Layouts shared by redirect.bpf.c and the agent: requests, patches, rules
 * and counters. Defined once, here. */
#ifndef NVM_REDIRECT_H
#define NVM_REDIRECT_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define NVM_FROM_MAX   64   /* longest rule prefix, with its NUL */
#define NVM_PATH_READ  72   /* bytes of a path the kernel side reads */
#define NVM_MAX_SLOTS  512  /* CPUs: one request slot each */
#define NVM_MAX_LEVELS 32   /* cgroup depth searched for a target ancestor */
#define NVM_MAX_RULES  256  /* entries of the aliases map */
#define NVM_RULE_PREFIX 0xffffffffu /* rules map value: "a rule starts here" */
#define NVM_RULE_ALIAS  0xfffffffeu /* rules map value: the tree root itself */
/* rules map value flag: a file rule a program may be executed by (execve
 * and execveat are redirected by such rules only, and only for the exact
 * path). The rest of the value is the rule's index. */
#define NVM_RULE_EXEC   0x40000000u
/* A fork shortly after a patch existed in the parent gets its copy fixed
 * (longer than a fork takes from copying the memory to its tracepoint);
 * the agent sets the kernel side's recent_ns to this times its time scale. */
#define NVM_RECENT_NS  (1000ULL * 1000 * 1000)

/* A request slot, one per CPU: a task takes its CPU's slot, or any free one
 * when that is taken. word is (seq << 8) | state and is only ever
 * changed by compare-and-swap, so that exactly one side wins each step:
 *   FREE -kernel-> FILLING -kernel-> WAITING -agent-> CLAIMED -agent-> DONE
 *   DONE -kernel-> FREE(seq+1)
 * FILLING reserves the slot while its fields are written: a task preempted
 * while it waits (where the tracepoint runs preemptible) keeps its slot, and
 * the next task on that CPU takes another free one.
 *   WAITING -kernel, soft deadline-> FREE(seq+1)   the agent then writes nothing
 *   CLAIMED -kernel, hard deadline-> FREE(seq+1)   the agent undoes its write
 *   WAITING -kernel-> LEFT -agent-> CLAIMED -agent-> FREE(seq+1)
 * LEFT: the task stopped waiting for an answer it does not need (a restore
 * giving way to a fork repair), or for a fork repair nobody claimed in time:
 * the agent serves it as if NOWAIT. */
enum nvm_slot_state {
	NVM_SLOT_FREE = 0,
	NVM_SLOT_WAITING = 1,
	NVM_SLOT_CLAIMED = 2,
	NVM_SLOT_DONE = 3,
	NVM_SLOT_FILLING = 4,
	NVM_SLOT_LEFT = 5,
};
#define NVM_SLOT_WORD(seq, st) (((__u64)(seq) << 8) | (st))
#define NVM_SLOT_SEQ(w)        ((w) >> 8)
#define NVM_SLOT_STATE(w)      ((__u32)((w) & 0xff))

enum nvm_req_kind {
	NVM_REQ_PATCH = 1,   /* rewrite the path at addr to its alias */
	NVM_REQ_RESTORE = 2, /* put the original bytes at addr back */
	NVM_REQ_FORKFIX = 3, /* undo, in a fresh fork child, the parent's patches */
};

enum nvm_req_flags {
	NVM_REQ_UNREAD = 1, /* the kernel could not read the path: the agent does */
	NVM_REQ_EXACT = 2,  /* the path names the rule's directory itself */
	NVM_REQ_NOWAIT = 4, /* nobody waits: the agent frees the slot itself */
	NVM_REQ_TREE = 8,   /* (PATCH) the task's mount namespace (a container's,
			     * id in ref) may lack the tree: bind it there first */
	NVM_REQ_EXEC_OK = 16, /* the rule is a file an exec may be redirected to
			       * (NVM_RULE_EXEC) */
};

enum nvm_result {
	NVM_RES_OK = 0,
	NVM_RES_NOMATCH = 1, /* (UNREAD) the path matched no rule */
	NVM_RES_FAILED = 2,  /* memory did not hold what was expected, or I/O failed */
};

struct nvm_slot {
	__u64 word;
	__u32 kind;
	__u32 flags;
	__u32 tid;
	__u32 tgid;
	__u32 rule;
	__u32 span;           /* bytes of the path the rule's prefix covers */
	__u64 mm;             /* address space of the task (its identity) */
	__u64 addr;           /* user address of the path */
	__u64 ref;            /* FORKFIX: the parent's address space; a PATCH
				* with NVM_REQ_TREE: the mount namespace's id */
	__s32 result;
	__u32 pad;
	__u64 posted_ns;       /* when the kernel posted it (CLOCK_MONOTONIC) */
	char path[NVM_PATH_READ]; /* the path as the kernel read it */
};

/* Rules are looked up by the canonical prefix at each '/' boundary. */
struct nvm_rule_key {
	__u32 len;
	char s[NVM_FROM_MAX];
};

/* A patch in place: one per (address space, address), shared by every task
 * whose syscall relies on it. word is (state << 32) | users. */
struct nvm_patch_key {
	__u64 mm;
	__u64 addr;
};

enum nvm_patch_state {
	NVM_PATCH_PENDING = 1,   /* being written (by the agent, or in the kernel) */
	NVM_PATCH_APPLIED = 2,   /* in place; users are inside syscalls */
	NVM_PATCH_RESTORING = 3, /* the last user left; its bytes are going back */
	NVM_PATCH_RESTORED = 4,  /* (in-kernel) back as it was; kept a while as the
				  * record a fork child that copied it is repaired
				  * by, and taken over by the next patch there */
	NVM_PATCH_GONE = 5,      /* its address space was replaced (an exec that
				  * succeeded on the rewritten path): nothing to
				  * put back; the agent forgets it, and the next
				  * patch there takes it over */
};
#define NVM_PATCH_WORD(st, users) (((__u64)(st) << 32) | (users))
#define NVM_PATCH_STATE(w)        ((__u32)((w) >> 32))
#define NVM_PATCH_USERS(w)        ((__u32)(w))

enum nvm_patch_flags {
	NVM_PATCH_F_INKERNEL = 1, /* written by the kernel side: orig and repl
				   * below are the record (the agent's book
				   * holds the others) */
	NVM_PATCH_F_VFORK = 4,    /* made for an exec in a task that shares its
				   * parent's memory (vfork, posix_spawn): that
				   * memory outlives the exec, and the agent puts
				   * the bytes back there through the parent
				   * (tgid, tid below) */
	NVM_PATCH_F_HELD = 2,     /* (RESTORING) put in by the agent's janitor
				   * while it restores a patch the kernel side
				   * no longer tracks: no new patch is taken at
				   * that place until it is gone */
};

struct nvm_patch {
	__u64 word;
	__u64 since;           /* when it was taken, or restored */
	__u32 flags;
	__u32 span;            /* in-kernel: the bytes written */
	__u32 tgid, tid;       /* in-kernel: a task of the image */
	char orig[NVM_PATH_READ];
	char repl[NVM_PATH_READ];
};

/* A rule's replacement, for the in-kernel rewrite (aliases map, by rule
 * index), in two variants: [0] for a path below the rule's directory, [1]
 * for a path naming it exactly (a directory's alias then ends in '/').
 * tail[v][0..NVM_ALIAS_END) is the replacement of an NVM_ALIAS_END-byte
 * prefix: '/' padding, then the alias; the replacement of an n-byte prefix
 * is its last n bytes. need[v] is the least n it fits. The bytes after
 * NVM_ALIAS_END are never copied; they let the verifier see that a copy
 * from a variable offset stays inside. */
#define NVM_ALIAS_END 128
#define NVM_ALIAS_BUF (NVM_ALIAS_END + NVM_PATH_READ)
struct nvm_alias {
	__u32 need[2];
	char tail[2][NVM_ALIAS_BUF];
};

struct nvm_verdict {
	__u64 gen;     /* targets_gen it was computed for */
	__u64 cgroup;  /* the task's cgroup it was computed for */
	__u64 target;
};

/* Counters the kernel side keeps (in .bss, read by the agent). */
struct nvm_kstats {
	__u64 matched;         /* a target's path matched a rule */
	__u64 rewritten;       /* patched by the agent before the kernel read it */
	__u64 shared;          /* joined a patch another thread had in place */
	__u64 restored;        /* original bytes back at syscall exit */
	__u64 deadline_misses; /* a wait ran out: the syscall went on unchanged */
	__u64 read_faults;     /* path not readable in the kernel: the agent read it */
	__u64 fork_fixups;     /* fork children whose copy was repaired */
	__u64 slot_busy;       /* could not wait (no slot, no ring space, or no CPU
				* left for the agent): went on unchanged */
	__u64 deferred;        /* restores and fork repairs left to the agent
				* without waiting (no CPU left to wait on) */
	/* slot_busy by cause */
	__u64 busy_no_cpu;     /* waiting would have left no CPU for the agent */
	__u64 busy_no_slot;    /* every request slot taken */
	__u64 busy_no_bell;    /* no doorbell could be rung (rings full) */
	__u64 busy_gave_way;   /* gave way to a fork repair (see make_room) */
	__u64 room_made;       /* fork repairs waited for on the last CPU, the
				* other CPUs' waits having given way */
	__u64 fork_unwaited;   /* fork repairs deferred even so: the child may
				* run before it is repaired */
	__u64 fork_missed;     /* fork repairs not done before the child ran (not
				* waited for, no slot, or a deadline passed): its
				* copy may keep a replacement until the agent
				* gets to the repair */
	__u64 agent_failed;    /* the agent answered that it could not patch
				* (memory changed, or it was stuck in it) */
	/* in-kernel rewrite */
	__u64 ik_rewritten;    /* written by the kernel side itself (in rewritten) */
	__u64 ik_write_faults; /* the kernel could not write there (read-only or
				* shared page): the agent rewrote it instead */
	__u64 ik_restored;     /* put back by the kernel side (in restored) */
	__u64 ik_changed;      /* at restore the bytes were no longer the
				* replacement: left as they were */
	__u64 exec_gone;       /* an exec on a rewritten path succeeded: its old
				* address space, and the patch, are gone */
	__u64 exec_shared;     /* an exec redirected in a task that shares its
				* parent's memory (vfork, posix_spawn): put back
				* there by the agent after the exec */
	__u64 rdma_netlink_refused; /* a target's socket(AF_NETLINK, NETLINK_RDMA)
				* failed, so libibverbs reads sysfs */
	/* deadline_misses by cause (the rest: the limit on any wait passed
	 * while the agent lived) */
	__u64 cpus_held;       /* unclaimed while every CPU of the agent's held a
				* waiting task (none of its threads could run) */
	__u64 answer_limit;    /* claimed, not answered within the answer limit
				* (the agent slept on the process's memory lock) */
	__u64 agent_gone;      /* the agent's process exited during the wait */
};

/* Why a syscall went on unredirected (struct nvm_note's cause). */
enum nvm_miss_cause {
	NVM_MISS_DEADLINE = 1, /* waited to the limit, the agent alive */
	NVM_MISS_CPUS_HELD,    /* every CPU of the agent's held a waiting task */
	NVM_MISS_ANSWER_LIMIT, /* claimed, not answered within the answer limit */
	NVM_MISS_AGENT_GONE,   /* the agent exited */
	NVM_MISS_NO_CPU,       /* waiting would have left no CPU for the agent */
	NVM_MISS_NO_SLOT,      /* every request slot taken */
	NVM_MISS_NO_BELL,      /* no doorbell could be rung */
	NVM_MISS_GAVE_WAY,     /* gave way to a fork repair */
	NVM_MISS_AGENT_FAILED, /* the agent could not patch */
};

/* A note to the agent's log (ring buffer "notes"): a miss, with the task's
 * name and the path (read at addr when the note is made). */
enum nvm_note_type { NVM_NOTE_MISS = 1 };
struct nvm_note {
	__u32 type;
	__u32 kind;
	__u32 tid;
	__u32 tgid;
	__u64 addr;
	__u32 slot_state;
	__u32 cause;
	char comm[16];
	char path[NVM_PATH_READ];
};

/* One path through the kernel side's rule matcher, from user space
 * (BPF_PROG_RUN of nvm_match): the test that holds it to the agent's
 * rules_match runs a table of paths through both. */
struct nvm_match_run {
	char path[NVM_PATH_READ]; /* in: the path as the kernel side reads it */
	__u32 rule, span;         /* out: as rules_match's */
	__s32 match;              /* out: -1 none, 0 a rule, 1 under the tree root */
	__u32 exact;              /* out: the path names the rule's directory itself */
};

/* These layouts are read by both sides, compiled by two compilers (clang
 * for BPF, the agent's C compiler): the sizes are checked by each. */
#define NVM_LAYOUT(what, size) _Static_assert(sizeof(what) == (size), #what " changed size")
NVM_LAYOUT(struct nvm_slot, 72 + NVM_PATH_READ);
NVM_LAYOUT(struct nvm_rule_key, 4 + NVM_FROM_MAX);
NVM_LAYOUT(struct nvm_patch_key, 16);
NVM_LAYOUT(struct nvm_patch, 32 + 2 * NVM_PATH_READ);
NVM_LAYOUT(struct nvm_alias, 8 + 2 * NVM_ALIAS_BUF);
NVM_LAYOUT(struct nvm_verdict, 24);
NVM_LAYOUT(struct nvm_note, 48 + NVM_PATH_READ);
NVM_LAYOUT(struct nvm_match_run, NVM_PATH_READ + 16);
_Static_assert(sizeof(struct nvm_kstats) % 8 == 0, "struct nvm_kstats holds __u64 counters only");
_Static_assert(NVM_SLOT_STATE(NVM_SLOT_WORD(1, NVM_SLOT_LEFT)) == NVM_SLOT_LEFT &&
	       NVM_SLOT_SEQ(NVM_SLOT_WORD(7, NVM_SLOT_LEFT)) == 7, "slot word packing");

#endif
