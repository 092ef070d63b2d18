/* Each probe is a tiny program loaded on its own, so one refusal says
 * exactly what the kernel does not allow. */
#include "engine/probe.h"

#include "engine/choose.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "probe.skel.h"

bool nvm_libbpf_quiet;

enum which { P_TP_BTF, P_FENTRY, P_LSM, P_WRITE_USER, P_COUNT };

static struct bpf_program *prog_of(struct probe_bpf *s, enum which w)
{
	switch (w) {
	case P_TP_BTF: return s->progs.probe_tp_btf;
	case P_FENTRY: return s->progs.probe_fentry;
	case P_LSM: return s->progs.probe_lsm;
	default: return s->progs.probe_write_user;
	}
}

/* strerror, and a name for the kernel's own ENOTSUPP (524), which BPF
 * attach returns where trampolines are missing and libc does not know. */
static const char *err_text(int e)
{
	return e == 524 ? "ENOTSUPP (524: not supported by this kernel on this architecture)"
			: strerror(e);
}

static void try_prog(enum which w, bool attach, struct probe_item *it)
{
	struct probe_bpf *s = probe_bpf__open();
	struct bpf_link *link = NULL;
	int err;

	memset(it, 0, sizeof(*it));
	if (!s) {
		it->err = -errno;
		snprintf(it->why, sizeof(it->why), "cannot open the probe object");
		return;
	}
	for (int i = 0; i < P_COUNT; i++)
		bpf_program__set_autoload(prog_of(s, (enum which)i), i == (int)w);
	nvm_libbpf_quiet = true;
	err = probe_bpf__load(s);
	if (!err && attach) {
		link = bpf_program__attach(prog_of(s, w));
		if (!link) {
			it->err = -errno;
			snprintf(it->why, sizeof(it->why), "loads, but attach fails: %s",
				 err_text(errno));
		}
	} else if (err) {
		it->err = err;
		snprintf(it->why, sizeof(it->why), "load refused: %s", err_text(-err));
	}
	nvm_libbpf_quiet = false;
	it->ok = !it->err;
	if (it->ok)
		snprintf(it->why, sizeof(it->why), attach ? "loads and attaches" : "loads");
	bpf_link__destroy(link);
	probe_bpf__destroy(s);
}

/* The first line of path, or "unknown". */
static void read_line(const char *path, char *buf, size_t len)
{
	if (fs_read_line(path, buf, len) < 0)
		snprintf(buf, len, "unknown");
}

void probe_lockdown(char *buf, size_t len)
{
	char raw[128], *open_b, *close_b;
	struct stat st;

	/* securityfs holds lockdown and the LSM list; mount it if needed. */
	if (stat("/sys/kernel/security/lsm", &st))
		mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
	read_line("/sys/kernel/security/lockdown", raw, sizeof(raw));
	open_b = strchr(raw, '[');
	close_b = open_b ? strchr(open_b, ']') : NULL;
	if (open_b && close_b) {
		*close_b = '\0';
		snprintf(buf, len, "%s", open_b + 1);
	} else {
		snprintf(buf, len, "%s", raw);
	}
}

void probe_write_user(struct probe_item *it, const char *lockdown)
{
	try_prog(P_WRITE_USER, false, it);
	if (!it->ok && strcmp(lockdown, "none") && strcmp(lockdown, "unknown"))
		snprintf(it->why, sizeof(it->why), "load refused (%s): lockdown is \"%s\"",
			 strerror(-it->err), lockdown);
}

void probe_fentry(struct probe_item *it)
{
	try_prog(P_FENTRY, true, it);
}

static bool bpf_lsm_active(char *lsms, size_t len)
{
	char list[260];

	read_line("/sys/kernel/security/lsm", lsms, len);
	snprintf(list, sizeof(list), ",%s,", lsms);
	return strstr(list, ",bpf,") != NULL;
}

void probe_lsm(struct probe_item *it)
{
	char lsms[256];

	try_prog(P_LSM, true, it);
	if (it->ok && !bpf_lsm_active(lsms, sizeof(lsms))) {
		it->ok = false;
		snprintf(it->why, sizeof(it->why),
			 "attaches, but \"bpf\" is not in the active LSM list: it would never run");
	}
}

int probe_kernel(struct probe_result *p)
{
	struct utsname u;
	struct stat st;

	memset(p, 0, sizeof(*p));
	uname(&u);
	snprintf(p->kernel, sizeof(p->kernel), "%s", u.release);
	snprintf(p->arch, sizeof(p->arch), "%s", u.machine);
	if (geteuid() != 0)
		return nvm_err_r(-1, "probe must run as root (it loads BPF programs)");
	p->btf = stat("/sys/kernel/btf/vmlinux", &st) == 0;
	if (!p->btf)
		return nvm_err_r(-1, "no kernel BTF at /sys/kernel/btf/vmlinux: nvmirage needs a "
				     "kernel built with CONFIG_DEBUG_INFO_BTF");
	probe_lockdown(p->lockdown, sizeof(p->lockdown));
	p->bpf_lsm_active = bpf_lsm_active(p->lsms, sizeof(p->lsms));
	try_prog(P_TP_BTF, true, &p->tp_btf);
	probe_fentry(&p->fentry);
	probe_lsm(&p->lsm);
	probe_write_user(&p->write_user, p->lockdown);

	return 0;
}

static void item(FILE *f, const char *name, const struct probe_item *it)
{
	fprintf(f, "  %-22s %-4s %s\n", name, it->ok ? "yes" : "no", it->why);
}

void probe_print(const struct probe_result *p, const struct engine_choice *c, FILE *f)
{
	fprintf(f, "kernel %s (%s)\n", p->kernel, p->arch);
	fprintf(f, "  %-22s %s\n", "BTF", p->btf ? "yes" : "no");
	fprintf(f, "  %-22s %s\n", "lockdown", p->lockdown);
	fprintf(f, "  %-22s %s%s\n", "active LSMs", p->lsms,
		p->bpf_lsm_active ? "" : " (no bpf)");
	item(f, "tp_btf", &p->tp_btf);
	item(f, "fentry", &p->fentry);
	item(f, "lsm", &p->lsm);
	item(f, "bpf_probe_write_user", &p->write_user);
	fprintf(f, "strategies:\n");
	fprintf(f, "  %-22s %-4s %s\n", "assisted", p->tp_btf.ok ? "yes" : "no",
		p->tp_btf.ok ? "the agent writes through /proc/<pid>/mem"
			     : p->tp_btf.why);
	fprintf(f, "  %-22s %-4s %s\n", "in-kernel", p->tp_btf.ok && p->write_user.ok ? "yes" : "no",
		!p->tp_btf.ok ? p->tp_btf.why
		: p->write_user.ok ? "the entry program writes the alias with bpf_probe_write_user"
				   : p->write_user.why);
	if (c)
		fprintf(f, "chosen: %s (%s\n", c->strategy, c->strategy_why);
	else
		fprintf(f, "chosen: none: tp_btf programs do not load here: nvmirage cannot run "
			   "on this kernel\n");
	fprintf(f, "entry points:\n");
	fprintf(f, "  %-22s %-4s %s\n", "fentry", p->fentry.ok ? "yes" : "no",
		p->fentry.ok ? "fentry/fexit on the path syscalls' functions" : p->fentry.why);
	fprintf(f, "  %-22s %-4s %s\n", "tp_btf", p->tp_btf.ok ? "yes" : "no",
		p->tp_btf.ok ? "tp_btf sys_enter/sys_exit" : p->tp_btf.why);
	if (c)
		fprintf(f, "chosen entry: %s (%s\n", c->entry, c->entry_why);
}

static json_object *item_json(const struct probe_item *it)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(it->ok));
	json_object_object_add(o, "errno", json_object_new_int(-it->err));
	json_object_object_add(o, "why", json_object_new_string(it->why));
	return o;
}

json_object *probe_to_json(const struct probe_result *p, const struct engine_choice *c)
{
	json_object *o = json_object_new_object(), *progs = json_object_new_object();

	json_object_object_add(o, "kernel", json_object_new_string(p->kernel));
	json_object_object_add(o, "arch", json_object_new_string(p->arch));
	json_object_object_add(o, "btf", json_object_new_boolean(p->btf));
	json_object_object_add(o, "lockdown", json_object_new_string(p->lockdown));
	json_object_object_add(o, "lsms", json_object_new_string(p->lsms));
	json_object_object_add(o, "bpf_lsm_active", json_object_new_boolean(p->bpf_lsm_active));
	json_object_object_add(progs, "tp_btf", item_json(&p->tp_btf));
	json_object_object_add(progs, "fentry", item_json(&p->fentry));
	json_object_object_add(progs, "lsm", item_json(&p->lsm));
	json_object_object_add(progs, "bpf_probe_write_user", item_json(&p->write_user));
	json_object_object_add(o, "programs", progs);
	json_object_object_add(o, "strategy", json_object_new_string(c ? c->strategy : "none"));
	json_object_object_add(o, "strategy_why", json_object_new_string(c ? c->strategy_why : ""));
	json_object_object_add(o, "entry", json_object_new_string(c ? c->entry : "none"));
	json_object_object_add(o, "entry_why", json_object_new_string(c ? c->entry_why : ""));
	return o;
}
