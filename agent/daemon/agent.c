#include "daemon/agent.h"
#include "daemon/rdma_netlink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/cgroups.h"
#include "daemon/control.h"
#include "daemon/faults.h"
#include "daemon/mig.h"
#include "lib/fsutil.h"
#include "lib/grow.h"
#include "lib/log.h"
#include "engine/choose.h"
#include "profile/profile.h"
#include "render/render.h"

void agent_opts_init(struct agent_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->root = NVM_DEFAULT_ROOT;
	o->clip_cpus = true;
	o->deadline_ms = 50;
	o->linger_us = 100000;
	o->max_targets = NVM_DEFAULT_MAX_TARGETS;
	o->time_scale = 1;
	o->btf = "/sys/kernel/btf/vmlinux";
	o->strategy = "auto";
	o->entry = "auto";
	o->userspace = true;
}

/* The driver's user space to deliver: nvmirage's NVML, and the nvidia-smi
 * given or nvmirage's own. Returns 0, or an exit status (reported). */
static int find_userspace(const struct agent_opts *o, struct render_opts *ro, char *lib,
			  char *smi, size_t len)
{
	if (!o->userspace)
		return nvm_info("driver user space: not delivered (--no-driver-userspace)"), 0;
	if (fs_find_beside("libnvidia-ml.so.1", lib, len))
		return nvm_err_r(NVM_EXIT_USAGE, "driver user space: nvmirage's libnvidia-ml.so.1 is "
				 "neither next to this binary nor in ../lib/nvmirage from it "
				 "(--no-driver-userspace runs without)");
	if (o->nvidia_smi) {
		if (access(o->nvidia_smi, X_OK))
			return nvm_err_r(NVM_EXIT_USAGE, "--nvidia-smi %s: %s", o->nvidia_smi,
					 strerror(errno));
		snprintf(smi, len, "%s", o->nvidia_smi);
	} else if (fs_find_beside("nvidia-smi", smi, len)) {
		return nvm_err_r(NVM_EXIT_USAGE, "driver user space: nvmirage's nvidia-smi is neither "
				 "next to this binary nor in ../lib/nvmirage from it (give "
				 "--nvidia-smi PATH, or --no-driver-userspace)");
	}
	ro->nvml_lib = lib;
	ro->nvidia_smi = smi;
	nvm_info("driver user space: NVML from %s where the dynamic linker looks for "
		 "libnvidia-ml.so(.1), and %s as /usr/bin/nvidia-smi (%s)", lib, smi,
		 o->nvidia_smi ? "--nvidia-smi" : "nvmirage's; --nvidia-smi gives another");
	return 0;
}

/* Before touching anything: the things whose absence is the user's to fix. */
static int check_machine(const struct agent_opts *o)
{
	struct stat st;

	if (geteuid() != 0)
		return nvm_err_r(NVM_EXIT_USAGE, "must run as root (it loads BPF programs and "
						 "writes to other processes' memory: CAP_BPF, "
						 "CAP_SYS_ADMIN, CAP_SYS_PTRACE)");
	if (stat(o->btf, &st))
		return nvm_err_r(NVM_EXIT_USAGE, "no kernel BTF at %s (%s): this kernel was built "
						 "without CONFIG_DEBUG_INFO_BTF; nvmirage needs it",
				 o->btf, strerror(errno));
	return 0;
}

/* The strategy and entry points (engine_choose, as `probe` decides them),
 * logged with why. Returns 0, or NVM_EXIT_USAGE when what was asked for is
 * not available here. */
static int choose(struct agent *a)
{
	struct probe_result p;
	struct engine_choice c;
	char err[320];

	probe_for_choice(&p, a->o.strategy, a->o.entry);
	if (engine_choose(&p, a->o.strategy, a->o.entry, &c, err, sizeof(err)))
		return nvm_err_r(NVM_EXIT_USAGE, "%s", err);
	nvm_info("strategy: %s rewrite (%s", c.strategy, c.strategy_why);
	nvm_info("entry points: %s (%s", c.fentry ? "fentry/fexit on the path syscalls' functions"
						  : "tp_btf sys_enter/sys_exit", c.entry_why);
	a->in_kernel = c.in_kernel;
	a->fentry = c.fentry;
	return 0;
}

static void lock_name_for(const char *root, char *buf, size_t len)
{
	char *p;

	snprintf(buf, len, "root%s.lock", root);
	for (p = buf; *p; p++)
		if (*p == '/')
			*p = '_';
}

int agent_start(struct agent *a, const struct agent_opts *o)
{
	struct render_opts ro = { .root = o->root, .device_nodes = o->device_nodes, .own_fs = true,
				  .clip_cpus = o->clip_cpus, .host = "/" };
	struct engine_opts eo = { .deadline_ns = (uint64_t)o->deadline_ms * 1000000,
				  .linger_us = o->linger_us, .time_scale = o->time_scale,
				  .max_targets = o->max_targets };
	char lib[PATH_MAX], smi[PATH_MAX];
	sigset_t mask;
	int r;

	memset(a, 0, sizeof(*a));
	a->o = *o;
	a->root_lock = a->control_fd = a->sig_fd = -1;
	if ((r = check_machine(o)))
		return r;
	if (!o->profile.profile)
		return nvm_err_r(NVM_EXIT_USAGE, "--profile is required");
	if (profile_load(o->profile.profile, o->profile.gpus, &a->model))
		return NVM_EXIT_USAGE;

	/* Signals go to the signalfd, so every thread started later has them
	 * blocked too. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	a->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);

	lock_name_for(o->root, a->root_lock_name, sizeof(a->root_lock_name));
	a->root_lock = state_lock(a->root_lock_name, o->root);
	if (a->root_lock < 0) {
		nvm_err("(give another --root to run a second agent)");
		goto usage;
	}
	if (find_userspace(o, &ro, lib, smi, sizeof(lib)))
		goto usage;
	if ((o->device_nodes && render_dynamic_majors(&a->model, "/proc/devices")) ||
	    render_tree(&a->model, &ro, &a->rules))
		goto usage;
	a->rendered = true;
	if (o->device_nodes)
		nvm_info("device nodes: /dev/nvidiaN, nvidiactl, nvidia-modeset (195), nvidia-uvm "
			 "and nvidia-uvm-tools (%u), nvidia-caps/nvidia-cap1 and -cap2 (%u: the "
			 "first dynamic majors free on this machine)", a->model.uvm_major,
			 a->model.caps_major);
	nvm_info("profile %s: %u GPUs (%s), driver %s; tree at %s", a->model.profile_path,
		 a->model.ngpus, a->model.gpus[0].name, a->model.driver_version, o->root);
	for (unsigned i = 0, files = 0; i < a->rules.n; i++) {
		const struct nvm_rule *r = &a->rules.r[i];

		/* The driver's user space in one line per file (many paths). */
		if (r->kind == NVM_RULE_FILE && !r->exec) {
			if (!files++)
				nvm_info("rule libnvidia-ml.so(.1) in the dynamic linker's directories "
					 "(%s ...) -> %s", r->from, r->alias);
			continue;
		}
		nvm_info("rule %s -> %s%s", r->from, r->alias, r->exec ? " (exec too)" : "");
	}
	if (choose(a))
		goto usage;
	eo.in_kernel = a->in_kernel;
	eo.fentry = a->fentry;
	eo.no_rdma_netlink = agent_no_rdma_netlink(&a->model);
	eo.rules = &a->rules;
	eo.bind_tree = o->bind_tree;
	eo.bind_ctx = o->bind_ctx;
	eo.root = o->root;
	eo.root_lock_fd = a->root_lock;
	if (engine_start(&a->engine, &eo))
		goto fail;
	snprintf(a->control_path, sizeof(a->control_path), "%s.sock", o->root);
	a->control_fd = control_listen(a->control_path);
	if (a->control_fd < 0)
		goto fail;
	return 0;
usage:
	agent_stop(a);
	return NVM_EXIT_USAGE;
fail:
	agent_stop(a);
	return NVM_EXIT_FAIL;
}

int agent_add_target(struct agent *a, const char *path)
{
	struct agent_target *t;
	char real[4096];
	void *grown;

	if (a->ntargets >= a->o.max_targets)
		return nvm_err_r(-1, "cgroup %s: already %u target cgroups, the most --max-targets "
				 "allows", path, a->o.max_targets);
	if (!(grown = grow_for_one(a->targets, &a->cap_targets, a->ntargets, sizeof(*a->targets), 16)))
		return nvm_err_r(-1, "cgroup %s: out of memory", path);
	a->targets = grown;
	t = &a->targets[a->ntargets];
	if (!realpath(path, real))
		return nvm_err_r(-1, "cgroup %s: %s", path, strerror(errno));
	snprintf(t->path, sizeof(t->path), "%s", real);
	if (cgroup_id(t->path, &t->id))
		return -1;
	snprintf(t->lock_name, sizeof(t->lock_name), "cgroup-%llu.lock",
		 (unsigned long long)t->id);
	t->lock_fd = state_lock(t->lock_name, t->path);
	if (t->lock_fd < 0)
		return -1;
	if (engine_add_target(a->engine, t->id)) {
		state_unlock(t->lock_fd, t->lock_name);
		return -1;
	}
	a->ntargets++;
	nvm_info("target cgroup %s (id %llu) and every cgroup below it", t->path,
		 (unsigned long long)t->id);
	return 0;
}

void agent_remove_target(struct agent *a, const char *path)
{
	for (unsigned i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];

		if (strcmp(t->path, path))
			continue;
		engine_remove_target(a->engine, t->id);
		state_unlock(t->lock_fd, t->lock_name);
		*t = a->targets[--a->ntargets];
		return;
	}
}

void agent_remove_targets(struct agent *a)
{
	for (unsigned i = 0; i < a->ntargets; i++) {
		if (a->engine)
			engine_remove_target(a->engine, a->targets[i].id);
		state_unlock(a->targets[i].lock_fd, a->targets[i].lock_name);
	}
	a->ntargets = a->cap_targets = 0;
	free(a->targets);
	a->targets = NULL;
}

static json_object *status_json(struct agent *a)
{
	struct nvm_kstats k;
	struct nvm_astats s;
	json_object *o, *kj, *aj, *tj;

	engine_stats(a->engine, &k, &s);
	o = json_object_new_object();
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "root", json_object_new_string(a->o.root));
	json_object_object_add(o, "profile", json_object_new_string(a->model.profile_path));
	json_object_object_add(o, "gpus", json_object_new_int((int)a->model.ngpus));
	json_object_object_add(o, "strategy",
			       json_object_new_string(a->in_kernel ? "in-kernel" : "assisted"));
	json_object_object_add(o, "entry", json_object_new_string(a->fentry ? "fentry" : "tp_btf"));
	tj = json_object_new_array();
	for (unsigned i = 0; i < a->ntargets; i++)
		json_object_array_add(tj, json_object_new_string(a->targets[i].path));
	json_object_object_add(o, "targets", tj);
	json_object_object_add(o, "faults", agent_faults_json(a));
	json_object_object_add(o, "mig", agent_mig_json(a));
	kj = json_object_new_object();
#define K(f) json_object_object_add(kj, #f, json_object_new_uint64(k.f));
	NVM_KSTATS_FIELDS(K)
#undef K
	json_object_object_add(o, "kernel", kj);
	aj = json_object_new_object();
#define A(f) json_object_object_add(aj, #f, json_object_new_uint64(s.f));
	NVM_ASTATS_FIELDS(A)
#undef A
	json_object_object_add(o, "agent", aj);
	return o;
}

/* The answer to a request that changes state: {"ok": true, key: the state
 * now} when done (state not NULL), else {"error": why}; a refusal to a
 * user other than root is logged too. */
static json_object *change_answer(const char *op, bool root, const char *key, json_object *state,
				  const char *why)
{
	json_object *o = json_object_new_object();

	if (state) {
		json_object_object_add(o, "ok", json_object_new_boolean(1));
		json_object_object_add(o, key, state);
		return o;
	}
	if (!root)
		nvm_warn("control: a %s request from a user other than root, refused", op);
	json_object_object_add(o, "error", json_object_new_string(why));
	return o;
}

/* {"op": "fault", "gpu": ..., "mode": ..., "xid": N}: root only. */
static json_object *fault_request(struct agent *a, json_object *req, bool root)
{
	json_object *v;
	const char *gpu = NULL, *mode = NULL;
	char why[512];
	int64_t xid = 0;

	if (json_object_object_get_ex(req, "gpu", &v))
		gpu = json_object_get_string(v);
	if (json_object_object_get_ex(req, "mode", &v))
		mode = json_object_get_string(v);
	if (json_object_object_get_ex(req, "xid", &v))
		xid = json_object_get_int64(v);
	if (!root)
		snprintf(why, sizeof(why), "only root may set or clear a fault");
	else if (!gpu || !mode)
		snprintf(why, sizeof(why), "a fault request needs gpu and mode");
	else if (xid < 0 || xid > 65535)
		snprintf(why, sizeof(why), "xid %lld is out of range (1..65535)", (long long)xid);
	else if (agent_fault(a, gpu, mode, (unsigned)xid, why, sizeof(why)) == 0)
		return change_answer("fault", root, "faults", agent_faults_json(a), NULL);
	return change_answer("fault", root, NULL, NULL, why);
}

/* {"op": "mig", "gpu": ..., "action": "create"|"destroy", "list": ...}:
 * root only. */
static json_object *mig_request(struct agent *a, json_object *req, bool root)
{
	json_object *v;
	const char *gpu = NULL, *action = NULL, *list = NULL;
	char why[512];

	if (json_object_object_get_ex(req, "gpu", &v))
		gpu = json_object_get_string(v);
	if (json_object_object_get_ex(req, "action", &v))
		action = json_object_get_string(v);
	if (json_object_object_get_ex(req, "list", &v))
		list = json_object_get_string(v);
	if (!root)
		snprintf(why, sizeof(why), "only root may change a GPU's MIG instances");
	else if (!gpu || !action || !list)
		snprintf(why, sizeof(why), "a mig request needs gpu, action and list");
	else if (agent_mig(a, gpu, action, list, why, sizeof(why)) == 0)
		return change_answer("mig", root, "mig", agent_mig_json(a), NULL);
	return change_answer("mig", root, NULL, NULL, why);
}

static void answer_control(struct agent *a)
{
	int fd = accept4(a->control_fd, NULL, NULL, SOCK_CLOEXEC);
	json_object *req = NULL, *ans, *op = NULL;
	const char *text;
	char line[1024];
	bool root;

	if (fd < 0)
		return;
	control_read_request(fd, line, sizeof(line), &root);
	if (line[0])
		req = json_tokener_parse(line);
	if (line[0] && !json_object_is_type(req, json_type_object)) {
		ans = json_object_new_object();
		json_object_object_add(ans, "error", json_object_new_string("the request is not a JSON object"));
	} else if (req && json_object_object_get_ex(req, "op", &op) &&
		   !strcmp(json_object_get_string(op), "fault")) {
		ans = fault_request(a, req, root);
	} else if (req && op && !strcmp(json_object_get_string(op), "mig")) {
		ans = mig_request(a, req, root);
	} else if (!req || !op || !strcmp(json_object_get_string(op), "status")) {
		ans = status_json(a);
	} else {
		ans = json_object_new_object();
		json_object_object_add(ans, "error", json_object_new_string("unknown op (status, fault, mig)"));
	}
	text = json_object_to_json_string_ext(ans, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	/* A client that goes away before the end must not kill the agent
	 * (SIGPIPE). */
	if (send(fd, text, strlen(text), MSG_NOSIGNAL) < 0 || send(fd, "\n", 1, MSG_NOSIGNAL) < 0)
		nvm_debug("control client went away");
	close(fd);
	json_object_put(ans);
	json_object_put(req);
}

void agent_loop(struct agent *a, bool (*done)(void *ctx), void *ctx)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };

	ev.data.fd = a->sig_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, a->sig_fd, &ev);
	ev.data.fd = a->control_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, a->control_fd, &ev);
	ev.data.fd = engine_notes_fd(a->engine);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	for (;;) {
		struct epoll_event evs[4];
		int n = epoll_wait(ep, evs, 4, 100);

		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == a->sig_fd) {
				struct signalfd_siginfo si;

				if (read(a->sig_fd, &si, sizeof(si)) == sizeof(si) &&
				    si.ssi_signo != SIGCHLD) {
					a->exit_signal = (int)si.ssi_signo;
					nvm_info("%s: stopping", strsignal((int)si.ssi_signo));
				}
			} else if (evs[i].data.fd == a->control_fd) {
				answer_control(a);
			}
		}
		engine_tick(a->engine);
		if (a->tick)
			a->tick(a->tick_ctx);
		a->last_turn_ms = mono_ms();
		if ((done && done(ctx)) || (!done && a->exit_signal))
			break;
	}
	close(ep);
}

void agent_stop(struct agent *a)
{
	char line[512];

	agent_remove_targets(a);
	if (a->engine) {
		engine_stats_line(a->engine, line, sizeof(line));
		engine_stop(a->engine);
		a->engine = NULL;
		nvm_info("detached; counters: %s", line);
	}
	if (a->control_fd >= 0) {
		close(a->control_fd);
		unlink(a->control_path);
		a->control_fd = -1;
	}
	if (a->rendered) {
		render_remove(a->o.root);
		a->rendered = false;
	}
	if (a->root_lock >= 0) {
		state_unlock(a->root_lock, a->root_lock_name);
		a->root_lock = -1;
	}
	if (a->sig_fd >= 0) {
		close(a->sig_fd);
		a->sig_fd = -1;
	}
}
