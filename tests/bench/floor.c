/* floor enter|exit: attaches the empty tp_btf/sys_enter program
 * (floor.bpf.c), with "exit" the empty sys_exit one too, says "attached",
 * and keeps them attached until SIGTERM or SIGINT. */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	bool with_exit = argc > 1 && strcmp(argv[1], "exit") == 0;
	struct floor_bpf *skel;

	if (argc != 2 || (!with_exit && strcmp(argv[1], "enter") != 0)) {
		fprintf(stderr, "usage: floor enter|exit\n");
		return 2;
	}
	skel = floor_bpf__open();
	if (skel && !with_exit)
		bpf_program__set_autoload(skel->progs.floor_sys_exit, false);
	if (!skel || floor_bpf__load(skel) || floor_bpf__attach(skel)) {
		fprintf(stderr, "floor: load or attach the empty programs: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	floor_bpf__destroy(skel);
	return 0;
}
