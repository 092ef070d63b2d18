/* The processes running on a GPU: the profile's (Mokka's processes
 * section), compute or graphics. Processes of the node's own are not
 * listed: a CUDA process holds /dev/nvidiaN open while it has a context,
 * and on a node without the driver no open of that node succeeds (ENXIO),
 * so nothing can hold it. nvmlSystemGetProcessName answers for the
 * profile's processes by the profile's names, and for any other pid from
 * /proc (argv[0], else comm), as NVML does. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* The profile's processes of the GPU: "process=PID USED_BYTES TYPE NAME"
 * lines of its telemetry file (TYPE c: compute, g: graphics). */
unsigned nvml_gpu_processes(const struct nvmlDevice_st *dev, bool graphics,
			    struct nvm_proc *out, unsigned max)
{
	const char *p = dev->procs_text;
	unsigned n = 0;

	while (p && *p && n < max) {
		unsigned pid;
		unsigned long long used;
		char type;

		if (!strncmp(p, "process=", 8) &&
		    sscanf(p + 8, "%u %llu %c", &pid, &used, &type) == 3 &&
		    (type == 'g') == graphics) {
			out[n].pid = pid;
			out[n].used = used;
			n++;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

/* The name NVML gives a process: its command's path (argv[0]), else its
 * comm; a profile's process by the profile's name. */
int nvml_process_name(unsigned pid, char *out, size_t len)
{
	char path[64], buf[256];
	int fd;
	ssize_t n;

	for (unsigned i = 0; i < nvml_ndev; i++) {
		const char *p = nvml_devs[i].procs_text;

		while (p && *p) {
			unsigned ppid;
			int at = 0;

			if (!strncmp(p, "process=", 8) &&
			    sscanf(p + 8, "%u %*u %*c %n", &ppid, &at) == 1 && ppid == pid && at) {
				snprintf(out, len, "%.*s", (int)strcspn(p + 8 + at, "\n"), p + 8 + at);
				return 0;
			}
			p = strchr(p, '\n');
			if (p)
				p++;
		}
	}
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0 || !buf[0]) {
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
		if (nvml_read_text(path, buf, sizeof(buf)))
			return -1;
		buf[strcspn(buf, "\n")] = '\0';
	} else {
		buf[n] = '\0';
	}
	snprintf(out, len, "%s", buf);
	return 0;
}
