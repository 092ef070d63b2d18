/* Kernel feature probing: what loads, what attaches, and the strategy. */
#ifndef NVM_PROBE_H
#define NVM_PROBE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct probe_item {
	bool ok;
	int err;          /* -errno of the load or attach that failed */
	char why[200];
};

struct probe_result {
	char kernel[128], arch[32];
	bool btf;
	char lockdown[32];    /* none, integrity, confidentiality, or unknown */
	char lsms[256];
	bool bpf_lsm_active;
	struct probe_item tp_btf, fentry, lsm, write_user;
};

struct engine_choice;

/* The lockdown mode ("none", "integrity", "confidentiality" or "unknown"). */
void probe_lockdown(char *buf, size_t len);
/* Whether a program calling bpf_probe_write_user loads (lockdown refuses it). */
void probe_write_user(struct probe_item *it, const char *lockdown);

/* Whether fentry on a path syscall's function loads and attaches. */
void probe_fentry(struct probe_item *it);
/* Whether a BPF LSM program loads and attaches, and "bpf" is an active LSM
 * (else it would never run). */
void probe_lsm(struct probe_item *it);

/* Returns 0, or -1 if there is nothing to probe with (not root, no BTF). */
int probe_kernel(struct probe_result *p);
/* What was found, and c: the choice engine_choose made from it (for
 * "auto"), or NULL when tp_btf programs do not load (nothing can run). */
void probe_print(const struct probe_result *p, const struct engine_choice *c, FILE *f);
json_object *probe_to_json(const struct probe_result *p, const struct engine_choice *c);

/* While set, libbpf's messages are dropped (probes fail on purpose). */
extern bool nvm_libbpf_quiet;

#endif
