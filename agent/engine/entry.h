/* The entry points of the redirect: which BPF programs see a path syscall
 * begin and end. Four sets are in the object (tp_btf or fentry, each in
 * the assisted and the in-kernel variant); one is loaded and attached. */
#ifndef NVM_ENTRY_H
#define NVM_ENTRY_H

#include <stdbool.h>

#define NVM_ENTRY_LINKS 32 /* programs per side of one set, at most */

struct bpf_object;
struct bpf_link;

struct entry_links {
	struct bpf_link *enter[NVM_ENTRY_LINKS], *exit[NVM_ENTRY_LINKS];
	unsigned n_enter, n_exit;
	bool fentry;
	char what[160]; /* "tp_btf/sys_enter, tp_btf/sys_exit", ... */
};

/* Marks the chosen set for loading, every other set not. */
void entry_choose(struct bpf_object *obj, bool fentry, bool in_kernel);
/* Attaches the loaded set, exits first (a patch made must find its
 * exit). Returns 0, or -1 after naming the program the kernel refused. */
int entry_attach(struct bpf_object *obj, struct entry_links *l);
/* Detaches one side: enter first (no new patches), exit once the patches
 * in flight are restored. */
void entry_detach_enter(struct entry_links *l);
void entry_detach_exit(struct entry_links *l);
/* One side's link fds (enter: the entry side), into fds (NVM_ENTRY_LINKS
 * of room); returns how many. */
unsigned entry_fds(const struct entry_links *l, bool enter, int *fds);

#endif
