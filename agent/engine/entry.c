#include "engine/entry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "lib/log.h"

/* The sets, by program name (see redirect.bpf.c):
 *   tp_btf  nvm_sys_enter, nvm_sys_exit        (in-kernel: ..._ik)
 *   fentry  nvm_fe_a_<syscall>, nvm_fx_a_<syscall>  (in-kernel: nvm_fe_k_, nvm_fx_k_) */
struct role {
	bool entry_point, enter, fentry, in_kernel;
};

static struct role role_of(const char *n)
{
	struct role r = { 0 };

	if (!strncmp(n, "nvm_fe_", 7) || !strncmp(n, "nvm_fx_", 7)) {
		r.entry_point = r.fentry = true;
		r.enter = n[5] == 'e';
		r.in_kernel = n[7] == 'k';
	} else if (!strcmp(n, "nvm_sys_enter") || !strcmp(n, "nvm_sys_exit") ||
		   !strcmp(n, "nvm_sys_enter_ik") || !strcmp(n, "nvm_sys_exit_ik")) {
		r.entry_point = true;
		r.enter = !strncmp(n, "nvm_sys_enter", 13);
		r.in_kernel = strstr(n, "_ik") != NULL;
	}
	return r;
}

void entry_choose(struct bpf_object *obj, bool fentry, bool in_kernel)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		struct role r = role_of(bpf_program__name(p));

		if (r.entry_point)
			bpf_program__set_autoload(p, r.fentry == fentry && r.in_kernel == in_kernel);
	}
}

static int attach_side(struct bpf_object *obj, bool enter, struct entry_links *l)
{
	struct bpf_link **links = enter ? l->enter : l->exit;
	unsigned *n = enter ? &l->n_enter : &l->n_exit;
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		struct role r = role_of(bpf_program__name(p));
		struct bpf_link *link;

		if (!r.entry_point || r.enter != enter || !bpf_program__autoload(p))
			continue;
		if (*n == NVM_ENTRY_LINKS)
			return nvm_err_r(-1, "more than %d entry programs", NVM_ENTRY_LINKS);
		link = bpf_program__attach(p);
		if (!link)
			return nvm_err_r(-1, "attach %s (%s): %s", bpf_program__name(p),
					 bpf_program__section_name(p), strerror(errno));
		links[(*n)++] = link;
		l->fentry = r.fentry;
	}
	return 0;
}

int entry_attach(struct bpf_object *obj, struct entry_links *l)
{
	memset(l, 0, sizeof(*l));
	if (attach_side(obj, false, l) || attach_side(obj, true, l))
		return -1;
	if (l->fentry)
		snprintf(l->what, sizeof(l->what), "fentry/fexit on %u syscall functions",
			 l->n_enter);
	else
		snprintf(l->what, sizeof(l->what), "tp_btf/sys_enter, tp_btf/sys_exit");
	return 0;
}

static void detach(struct bpf_link **links, unsigned *n)
{
	for (unsigned i = 0; i < *n; i++)
		bpf_link__destroy(links[i]);
	*n = 0;
}

void entry_detach_enter(struct entry_links *l)
{
	detach(l->enter, &l->n_enter);
}

void entry_detach_exit(struct entry_links *l)
{
	detach(l->exit, &l->n_exit);
}
