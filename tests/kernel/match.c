/* The rule matcher exists twice: in C (agent/render/rules.c, rules_match,
 * used by the agent for paths the kernel could not read) and in BPF
 * (bpf/lib/match.bpf.h, on every path syscall of a target). This runs one
 * table of paths (match_paths.txt, one per line; "#" starts a comment)
 * through both, the BPF one through BPF_PROG_RUN of nvm_match with the
 * rules of a rendered profile loaded as the agent loads them, and fails on
 * any path where they differ. Needs root.
 *
 *   match PROFILE ROOT TABLE */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine/doorbell.h"
#include "engine/rules_map.h"
#include "profile/profile.h"
#include "redirect.h"
#include "redirect.skel.h"
#include "render/rules.h"

static struct nvm_model model;
static struct nvm_rules rules;

/* Whether path lies under root (at a component boundary, '/' folded as
 * the kernel does): what the kernel side calls "already an alias". */
static bool under_root(const char *path, const char *root)
{
	const char *p = path, *r = root;

	while (*r) {
		if (*p != *r)
			return false;
		if (*r == '/')
			while (p[1] == '/')
				p++;
		p++, r++;
	}
	return *p == '/' || *p == '\0';
}

/* The C side's verdict, in nvm_match_run's terms. */
static void c_side(const char *path, const char *root, struct nvm_match_run *want)
{
	unsigned span = 0;
	bool exact = false;
	int rule = path[0] == '/' ? rules_match(&rules, path, &span, &exact) : -1;

	memset(want, 0, sizeof(*want));
	want->match = rule >= 0 ? 0 : path[0] == '/' && under_root(path, root) ? 1 : -1;
	if (rule >= 0) {
		want->rule = (unsigned)rule;
		want->span = span;
		want->exact = exact;
	}
}

int main(int argc, char **argv)
{
	struct redirect_bpf *skel;
	struct bpf_program *prog;
	char line[512];
	unsigned n = 0, bad = 0;
	int tmpl, fd;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: match PROFILE ROOT TABLE\n");
		return 2;
	}
	if (profile_load(argv[1], 0, &model) || rules_build(&model, argv[2], true, true, &rules))
		return 1;
	skel = redirect_bpf__open();
	if (!skel)
		return perror("open the BPF object"), 1;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.nvm_match);
	tmpl = doorbell_template((size_t)sysconf(_SC_PAGESIZE));
	if (tmpl < 0 || bpf_map__set_inner_map_fd(skel->maps.bells, tmpl) ||
	    redirect_bpf__load(skel))
		return fprintf(stderr, "load nvm_match: %s\n", strerror(errno)), 1;
	if (rules_map_load(skel, &rules, argv[2]))
		return 1;
	fd = bpf_program__fd(skel->progs.nvm_match);
	f = fopen(argv[3], "r");
	if (!f)
		return perror(argv[3]), 1;
	while (fgets(line, sizeof(line), f)) {
		struct nvm_match_run got = { 0 }, want;
		LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &got, .ctx_size_in = sizeof(got));

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		if (!strcmp(line, "(empty)"))
			line[0] = '\0';
		/* Both see what the kernel side reads: at most NVM_PATH_READ - 1 bytes. */
		snprintf(got.path, sizeof(got.path), "%s", line);
		c_side(got.path, argv[2], &want);
		if (bpf_prog_test_run_opts(fd, &o) || o.retval)
			return fprintf(stderr, "run nvm_match: %s\n", strerror(errno)), 1;
		n++;
		if (got.match != want.match || got.rule != want.rule || got.span != want.span ||
		    got.exact != want.exact) {
			bad++;
			printf("FAIL: matcher: \"%s\": BPF match %d rule %u span %u exact %u; C match %d rule %u span %u exact %u\n",
			       got.path, got.match, got.rule, got.span, got.exact, want.match, want.rule,
			       want.span, want.exact);
		}
	}
	fclose(f);
	redirect_bpf__destroy(skel);
	if (!bad)
		printf("ok: matcher: the kernel side and rules_match agree on all %u paths of %s\n", n,
		       argv[3]);
	printf("%u passed, %u failed\n", bad ? 0 : 1, bad);
	return bad ? 1 : 0;
}
