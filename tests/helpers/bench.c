/* Timing loops for `make bench`.
 *   bench openclose N PATH         N x openat+close; prints ns_per_op
 *   bench latency N SLEEP_US PATH  N x open+read+close, sleeping between;
 *                                  prints median/p99/max in us and bad reads */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "openclose")) {
		long n = atol(argv[2]);
		double t0 = now_ns();

		for (long i = 0; i < n; i++) {
			int fd = openat(AT_FDCWD, argv[3], O_RDONLY);

			if (fd >= 0)
				close(fd);
		}
		printf("ns_per_op=%.0f\n", (now_ns() - t0) / n);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "getppid")) {
		/* A syscall no rule can match: what every other syscall pays. */
		long n = atol(argv[2]);
		double t0 = now_ns();

		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		printf("ns_per_op=%.1f\n", (now_ns() - t0) / n);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "latency")) {
		long n = atol(argv[2]), bad = 0;
		useconds_t pause = (useconds_t)atol(argv[3]);
		double *t = malloc(sizeof(double) * n);

		for (long i = 0; i < n; i++) {
			char buf[64] = "";
			double t0;
			int fd;

			usleep(pause);
			t0 = now_ns();
			fd = open(argv[4], O_RDONLY);
			if (fd >= 0) {
				if (read(fd, buf, sizeof(buf)) < 13 || strncmp(buf, "NVRM version:", 13))
					bad++;
				close(fd);
			} else {
				bad++;
			}
			t[i] = (now_ns() - t0) / 1000;
		}
		qsort(t, n, sizeof(double), cmp);
		printf("median_us=%.1f p99_us=%.1f max_us=%.1f bad=%ld of %ld\n", t[n / 2],
		       t[(long)(n * 0.99)], t[n - 1], bad, n);
		return 0;
	}
	fprintf(stderr, "usage: bench openclose N PATH | getppid N | latency N SLEEP_US PATH\n");
	return 2;
}
