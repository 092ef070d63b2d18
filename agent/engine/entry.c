#include "engine/entry.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "lib/log.h"

/* A program's role, from its section: the entry points are the sys_enter
 * and sys_exit tracepoints (tp_btf) and the fentry/fexit programs on the
 * syscall functions; the in-kernel rewrite's variant of each is named with
 * the suffix _ik (see redirect.bpf.c). Every other program is not an entry
 * point (the fork and exec tracepoints, the matcher's test program). */
struct role {
	bool entry_point, enter, fentry, in_kernel;
};

static bool has_prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

static bool has_suffix(const char *s, const char *x)
{
	size_t n = strlen(s), k = strlen(x);

	return n >= k && !strcmp(s + n - k, x);
}

static struct role role_of(const struct bpf_program *p)
{
	const char *sec = bpf_program__section_name(p);
	struct role r = { 0 };

	if (has_prefix(sec, "fentry/") || has_prefix(sec, "fexit/")) {
		r.entry_point = r.fentry = true;
		r.enter = has_prefix(sec, "fentry/");
	} else if (!strcmp(sec, "tp_btf/sys_enter") || !strcmp(sec, "tp_btf/sys_exit")) {
		r.entry_point = true;
		r.enter = !strcmp(sec, "tp_btf/sys_enter");
	}
	r.in_kernel = r.entry_point && has_suffix(bpf_program__name(p), "_ik");
	return r;
}

void entry_choose(struct bpf_object *obj, bool fentry, bool in_kernel)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		struct role r = role_of(p);

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
		struct role r = role_of(p);
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

unsigned entry_fds(const struct entry_links *l, bool enter, int *fds)
{
	unsigned n = enter ? l->n_enter : l->n_exit;

	for (unsigned i = 0; i < n; i++)
		fds[i] = bpf_link__fd(enter ? l->enter[i] : l->exit[i]);
	return n;
}
