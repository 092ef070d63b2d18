/* floor: attaches the empty tp_btf/sys_enter program (floor.bpf.c), says
 * "attached", and keeps it attached until SIGTERM or SIGINT. */
#include <errno.h>
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

int main(void)
{
	struct floor_bpf *skel = floor_bpf__open_and_load();

	if (!skel || floor_bpf__attach(skel)) {
		fprintf(stderr, "floor: load or attach the empty program: %s\n", strerror(errno));
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
