/* devdeny CGROUP MAJOR:MINOR...: attaches to cgroup v2 directory CGROUP a
 * device program (devdeny.bpf.c) that denies those character devices and
 * allows every other, as Slurm's ConstrainDevices does for a job under
 * cgroup/v2, and exits; the program stays attached until the cgroup is
 * removed. Prints "attached". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "devdeny.skel.h"

int main(int argc, char **argv)
{
	struct devdeny_bpf *skel;
	int cg, i;

	if (argc < 3 || argc - 2 > 16) {
		fprintf(stderr, "usage: devdeny CGROUP MAJOR:MINOR... (at most 16)\n");
		return 2;
	}
	skel = devdeny_bpf__open();
	if (!skel)
		return perror("devdeny: open"), 1;
	for (i = 2; i < argc; i++) {
		unsigned major, minor;

		if (sscanf(argv[i], "%u:%u", &major, &minor) != 2) {
			fprintf(stderr, "devdeny: \"%s\" is not MAJOR:MINOR\n", argv[i]);
			return 2;
		}
		skel->rodata->deny[i - 2] = (major << 20) | minor;
	}
	skel->rodata->ndeny = (unsigned)(argc - 2);
	cg = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (cg < 0)
		return perror(argv[1]), 1;
	if (devdeny_bpf__load(skel) ||
	    bpf_prog_attach(bpf_program__fd(skel->progs.devdeny), cg, BPF_CGROUP_DEVICE,
			    BPF_F_ALLOW_MULTI)) {
		fprintf(stderr, "devdeny: load or attach: %s\n", strerror(errno));
		return 1;
	}
	puts("attached");
	return 0;
}
