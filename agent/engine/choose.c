#include "engine/choose.h"

#include <stdio.h>
#include <string.h>

void probe_for_choice(struct probe_result *p, const char *strategy, const char *entry)
{
	memset(p, 0, sizeof(*p));
	probe_lockdown(p->lockdown, sizeof(p->lockdown));
	p->tp_btf.ok = true;
	if (strcmp(strategy, "assisted"))
		probe_write_user(&p->write_user, p->lockdown);
	if (strcmp(entry, "tp_btf"))
		probe_fentry(&p->fentry);
}

static int choose_strategy(const struct probe_result *p, const char *asked,
			   struct engine_choice *c, char *err, unsigned errlen)
{
	static const char assisted[] = "the entry program holds the syscall; the agent "
				       "rewrites the path through /proc/<pid>/mem";

	if (!strcmp(asked, "assisted")) {
		c->in_kernel = false;
		snprintf(c->strategy_why, sizeof(c->strategy_why),
			 "asked for with --strategy): %s", assisted);
	} else if (p->write_user.ok) {
		c->in_kernel = true;
		snprintf(c->strategy_why, sizeof(c->strategy_why),
			 "%s; lockdown %s, bpf_probe_write_user loads): the entry program "
			 "writes the alias itself; the agent only where the page refuses the "
			 "write (read-only literals)",
			 strcmp(asked, "auto") ? "asked for" : "auto", p->lockdown);
	} else if (!strcmp(asked, "in-kernel")) {
		snprintf(err, errlen, "--strategy in-kernel: not available on this kernel: "
				      "bpf_probe_write_user %s", p->write_user.why);
		return -1;
	} else {
		c->in_kernel = false;
		snprintf(c->strategy_why, sizeof(c->strategy_why),
			 "auto; in-kernel is not available: bpf_probe_write_user %s): %s",
			 p->write_user.why, assisted);
	}
	c->strategy = c->in_kernel ? "in-kernel" : "assisted";
	return 0;
}

static int choose_entry(const struct probe_result *p, const char *asked,
			struct engine_choice *c, char *err, unsigned errlen)
{
	if (!strcmp(asked, "tp_btf")) {
		c->fentry = false;
		snprintf(c->entry_why, sizeof(c->entry_why), "asked for with --entry): every "
			 "syscall passes them");
	} else if (p->fentry.ok) {
		c->fentry = true;
		snprintf(c->entry_why, sizeof(c->entry_why), "%s; they attach here): only "
			 "those syscalls pay", strcmp(asked, "auto") ? "asked for" : "auto");
	} else if (!strcmp(asked, "fentry")) {
		snprintf(err, errlen, "--entry fentry: not available on this kernel: fentry on "
				      "the syscall functions %s", p->fentry.why);
		return -1;
	} else {
		c->fentry = false;
		snprintf(c->entry_why, sizeof(c->entry_why), "auto; fentry on the syscall "
			 "functions %s): every syscall passes them", p->fentry.why);
	}
	c->entry = c->fentry ? "fentry" : "tp_btf";
	return 0;
}

int engine_choose(const struct probe_result *p, const char *strategy, const char *entry,
		  struct engine_choice *c, char *err, unsigned errlen)
{
	memset(c, 0, sizeof(*c));
	if (choose_strategy(p, strategy, c, err, errlen) ||
	    choose_entry(p, entry, c, err, errlen))
		return -1;
	return 0;
}
