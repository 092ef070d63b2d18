/* nvmirage exec: one command in a fresh target cgroup, with the agent in
 * this process for as long as the command runs. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/agent_opts.h"
#include "cli/cli.h"
#include "daemon/agent.h"
#include "daemon/cgroups.h"
#include "lib/fsutil.h"
#include "lib/log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nvmirage exec --profile P [OPTIONS] -- CMD [ARGS...]\n\n"
		"Makes a transient cgroup, starts the redirect for it, runs CMD inside it,\n"
		"then tears everything down and exits with CMD's status (128+N if it died\n"
		"of signal N). CMD and everything it starts see the profile's files.\n\n"
		AGENT_OPTS_HELP);
}

struct child {
	pid_t pid;
	int status;
	bool exited;
	struct agent *a;
	int forwarded;
};

static bool child_done(void *ctx)
{
	struct child *c = ctx;

	/* Forward a stop request once; the command decides how to end. */
	if (c->a->exit_signal && c->forwarded != c->a->exit_signal) {
		kill(c->pid, c->a->exit_signal);
		c->forwarded = c->a->exit_signal;
	}
	if (waitpid(c->pid, &c->status, WNOHANG) == c->pid)
		c->exited = true;
	return c->exited;
}

int cmd_exec(int argc, char **argv)
{
	static const struct option opts[] = {
		AGENT_LONG_OPTS,
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	static struct agent a;
	struct agent_opts o;
	struct child ch = { .a = &a };
	char cg2[PATH_MAX], cg[PATH_MAX + 64], procs[PATH_MAX + 96], pidbuf[32];
	int c, r, go[2] = { -1, -1 }, ret = NVM_EXIT_FAIL;

	agent_opts_init(&o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:g:r:dh", opts, NULL)) != -1) {
		if ((r = agent_parse_opt(c, optarg, &o)) < 0)
			return NVM_EXIT_USAGE;
		if (r)
			continue;
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	if (optind >= argc) {
		nvm_err("exec: no command given (nvmirage exec --profile P -- CMD ...)");
		return NVM_EXIT_USAGE;
	}
	if ((r = agent_start(&a, &o)))
		return r;
	if (cgroup2_mount(cg2, sizeof(cg2)))
		goto out;
	snprintf(cg, sizeof(cg), "%s/nvmirage-exec-%d", cg2, getpid());
	if (mkdir(cg, 0755)) {
		nvm_err("mkdir %s: %s", cg, strerror(errno));
		goto out;
	}
	if (agent_add_target(&a, cg) || pipe2(go, O_CLOEXEC))
		goto out_cg;

	ch.pid = fork();
	if (ch.pid < 0) {
		nvm_err("fork: %s", strerror(errno));
		goto out_cg;
	}
	if (ch.pid == 0) {
		sigset_t none;
		char b;

		/* Wait until the parent has moved us into the cgroup. */
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "nvmirage: error: exec %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	snprintf(pidbuf, sizeof(pidbuf), "%d", ch.pid);
	if (fs_write_str(procs, pidbuf)) {
		nvm_err("move pid %d into %s: %s", ch.pid, cg, strerror(errno));
		kill(ch.pid, SIGKILL);
		waitpid(ch.pid, NULL, 0);
		close(go[1]);
		goto out_cg;
	}
	nvm_info("running %s in %s", argv[optind], cg);
	if (write(go[1], "g", 1) != 1)
		nvm_warn("could not release the command");
	close(go[1]);

	agent_loop(&a, child_done, &ch);
	ret = WIFEXITED(ch.status) ? WEXITSTATUS(ch.status) : 128 + WTERMSIG(ch.status);
out_cg:
	agent_remove_targets(&a);
	/* Whatever the command left behind in the cgroup goes with it. */
	snprintf(procs, sizeof(procs), "%s/cgroup.kill", cg);
	fs_write_str(procs, "1");
	for (int i = 0; i < 100 && rmdir(cg) && errno == EBUSY; i++)
		usleep(10000);
out:
	agent_stop(&a);
	return ret;
}
