/* Timing loops for `make bench`.
 *   bench openclose N PATH         N x openat+close; prints ns_per_op
 *   bench latency N SLEEP_US PATH  N x open+read+close, sleeping between;
 *                                  prints median/p99/max in us and bad reads
 *   bench wake N SLEEP_US          N x waking a real-time thread asleep in
 *                                  epoll on another CPU, sleeping between:
 *                                  what any wake-up of an idle agent costs
 *                                  here (median/p99/max in us)
 *   bench calibrate                what this machine takes for the kind of
 *                                  work the agent does to answer (opening,
 *                                  reading and writing a process's memory
 *                                  file; forks), in ns: the fastest and the
 *                                  median of 7 rounds. A guest's time scale
 *                                  is its median over the host's fastest */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

static void print_latency(double *t, long n, long bad)
{
	qsort(t, n, sizeof(double), cmp);
	printf("median_us=%.1f p99_us=%.1f max_us=%.1f bad=%ld of %ld\n", t[n / 2],
	       t[(long)(n * 0.99)], t[n - 1], bad, n);
}

/* The woken side of `bench wake`: like an agent service thread, pinned,
 * SCHED_FIFO, asleep in epoll; it answers through memory. */
static int wake_fd;
static volatile int woken;

static void *waiter(void *arg)
{
	struct sched_param sp = { .sched_priority = 50 };
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = epoll_create1(0);
	uint64_t v;

	(void)arg;
	sched_setscheduler(0, SCHED_FIFO, &sp);
	epoll_ctl(ep, EPOLL_CTL_ADD, wake_fd, &ev);
	for (;;) {
		if (epoll_wait(ep, &ev, 1, -1) == 1 && read(wake_fd, &v, sizeof(v)) == sizeof(v))
			woken = 1;
	}
	return NULL;
}

static int wake_bench(long n, useconds_t pause)
{
	double *t = malloc(sizeof(double) * n);
	int here = sched_getcpu(), there = -1;
	cpu_set_t set, one;
	pthread_attr_t attr;
	pthread_t th;

	sched_getaffinity(0, sizeof(set), &set);
	for (int c = 0; c < CPU_SETSIZE && there < 0; c++)
		if (CPU_ISSET(c, &set) && c != here)
			there = c;
	if (!t || there < 0) {
		fprintf(stderr, "bench wake: needs two CPUs\n");
		return 1;
	}
	CPU_ZERO(&one);
	CPU_SET(here, &one);
	sched_setaffinity(0, sizeof(one), &one);
	CPU_ZERO(&one);
	CPU_SET(there, &one);
	wake_fd = eventfd(0, 0);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	pthread_create(&th, &attr, waiter, NULL);
	for (long i = 0; i < n; i++) {
		uint64_t one_event = 1;
		double t0;

		usleep(pause);
		woken = 0;
		t0 = now_ns();
		if (write(wake_fd, &one_event, sizeof(one_event)) != sizeof(one_event))
			return 1;
		while (!woken)
			;
		t[i] = (now_ns() - t0) / 1000;
	}
	print_latency(t, n, 0);
	return 0;
}

/* One round of `bench calibrate`, in ns. */
static double calibrate_round(void)
{
	static char word[64] = "calibrate";
	double t0 = now_ns();

	for (int i = 0; i < 200; i++) {
		int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		char buf[sizeof(word)];

		if (fd < 0 || pread(fd, buf, sizeof(buf), (off_t)(uintptr_t)word) != sizeof(buf) ||
		    pwrite(fd, buf, sizeof(buf), (off_t)(uintptr_t)word) != sizeof(buf))
			return -1;
		close(fd);
	}
	for (int i = 0; i < 10; i++) {
		pid_t c = fork();

		if (c == 0)
			_exit(0);
		if (c < 0 || waitpid(c, NULL, 0) != c)
			return -1;
	}
	return now_ns() - t0;
}

static int calibrate(void)
{
	double t[7];

	for (int i = 0; i < 7; i++)
		if ((t[i] = calibrate_round()) < 0) {
			perror("bench calibrate");
			return 1;
		}
	qsort(t, 7, sizeof(double), cmp);
	printf("fastest_ns=%.0f\nmedian_ns=%.0f\n", t[0], t[3]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "calibrate"))
		return calibrate();
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
		print_latency(t, n, bad);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "wake"))
		return wake_bench(atol(argv[2]), (useconds_t)atol(argv[3]));
	fprintf(stderr, "usage: bench openclose N PATH | getppid N | latency N SLEEP_US PATH | wake N SLEEP_US | calibrate\n");
	return 2;
}
