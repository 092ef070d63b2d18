/* Redirect rules: a real path prefix and the short alias under the tree
 * root that stands for it. */
#ifndef NVM_RULES_H
#define NVM_RULES_H

#include <stdbool.h>

#include "profile/model.h"

#define NVM_RULES_MAX 160
/* The kernel side's NVM_FROM_MAX (checked in engine/rules_map.c). */
#define NVM_RULE_FROM_MAX 64

enum nvm_rule_kind {
	NVM_RULE_DIR,  /* alias is a symlink to a directory of the tree */
	NVM_RULE_NODE, /* alias is a device node itself, so lstat sees a node */
	NVM_RULE_FILE, /* alias is a symlink to a file of the tree (the driver's
			* user space: NVML, nvidia-smi), which several rules
			* may share; exec may be redirected by it */
};

struct nvm_rule {
	char from[NVM_RULE_FROM_MAX];  /* "/proc/driver/nvidia" */
	char alias[NVM_RULE_FROM_MAX]; /* "/run/nvm/p" */
	char name[8];                  /* "p": the alias' name under the root */
	char target[64];               /* "proc/driver/nvidia": inside the tree */
	enum nvm_rule_kind kind;
	unsigned major, minor;         /* NODE: the device's numbers */
	unsigned mode;                 /* NODE: its permissions */
	bool exec;                     /* FILE: a program, which execve and
					* execveat may be redirected to (by its
					* exact path only) */
};

struct nvm_rules {
	unsigned n;
	unsigned dropped;              /* rules past NVM_RULES_MAX: an error */
	struct nvm_rule r[NVM_RULES_MAX];
};

/* The rules for the tree of model m rendered at root. Each alias must fit in
 * the bytes of its from (with one to spare for a directory, which gets a
 * trailing '/' when the path names the directory itself). Returns 0, or -1
 * after naming the rule and the lengths. */
int rules_build(const struct nvm_model *m, const char *root, bool device_nodes,
		bool userspace, struct nvm_rules *out);

/* The longest root every rule fits with. */
unsigned rules_max_root_len(const struct nvm_model *m, bool device_nodes, bool userspace);

/* Where the tree holds the driver's user space (userspace rules). */
#define NVM_TREE_USERSPACE "usr/lib/nvmirage"
#define NVM_NVML_NAME "libnvidia-ml.so.1"
#define NVM_SMI_NAME "nvidia-smi"
#define NVM_TREE_NVML NVM_TREE_USERSPACE "/" NVM_NVML_NAME
#define NVM_TREE_SMI NVM_TREE_USERSPACE "/" NVM_SMI_NAME

/* Finds the rule whose from is a component-boundary prefix of path, with
 * repeated '/' folded as the kernel does. Returns the rule index and sets
 * *span to the number of bytes of path the prefix covers and *exact when
 * nothing but '/' follows; -1 when none matches. */
int rules_match(const struct nvm_rules *rs, const char *path, unsigned *span,
		bool *exact);

/* The bytes that replace path[0..span): the alias padded in front with '/'
 * ("///run/nvm/p"), plus a trailing '/' for a directory named exactly.
 * Returns 0, or -1 if it does not fit. */
int rules_replacement(const struct nvm_rule *r, unsigned span, bool exact,
		      char *out);
/* The fewest bytes the replacement fits in: the alias, and its trailing
 * '/' for a directory named exactly. */
unsigned rules_replacement_len(const struct nvm_rule *r, bool exact);

#endif
