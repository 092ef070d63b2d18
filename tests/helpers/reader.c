/* A reader of the NVIDIA driver files, for the kernel tests. Each mode does
 * what a real client does and prints key=value lines the tests check; it
 * also checks that every path buffer it passed still holds its original
 * bytes afterwards (exit 3 if not; see check_literals for a late restore).
 *
 *   reader literal            opendir/readdir gpus + fopen version (string literals)
 *   reader buffers BDF        heap and stack paths: stat, access, readlink, open
 *   reader raw                open/read with raw syscall(SYS_openat)
 *   reader loop N             N opens+reads of version; counts good reads
 *   reader threads T N        T threads x N opens through one literal
 *   reader tree N             2 threads x N opens through one literal, forks,
 *                             and execs "reader literal" in a forked pid
 *   reader forks N            2 threads opening all along while the main
 *                             thread forks N children, each checking its
 *                             copy of the paths (a patch copied by a fork
 *                             must be repaired before the child runs)
 *   reader mapping N          2 threads x N opens while a third maps and
 *                             unmaps memory all along (holding the process's
 *                             memory lock, which the agent's writes need)
 *   reader blocked PATH [GO]  one open of PATH (a FIFO: it blocks inside the
 *                             syscall, its bytes rewritten, until a writer
 *                             comes), then a line read from it; with GO, it
 *                             says what its path held when the open
 *                             returned (after_open=), then waits for file
 *                             GO to exist before its last check (a restore
 *                             left to the agent's janitor comes meanwhile)
 *   reader rdma-netlink       opens a NETLINK_RDMA socket, as libibverbs first
 *                             does: rdma_netlink=ok or the error
 *   reader vfork PATH ARGS... runs PATH with vfork and execv, as posix_spawn
 *                             and dash do (the child shares this process's
 *                             memory until its exec), from a copy of PATH
 *                             in this process's memory; says whether the
 *                             copy holds PATH again once the child is done
 *   reader nvml               dlopen("libnvidia-ml.so.1") as a program that
 *                             uses NVML does (the dynamic linker's own
 *                             search), then how many GPUs it counts
 *
 * loop, threads, tree, forks and mapping take "data" as a last argument: their opens
 * then go through one writable global copy of the path (.data) instead of
 * the literal, a page the kernel side itself can write (in-kernel rewrite).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *self;

/* The literals live in .rodata: a read-only page. Their copies let us check
 * they end as they began. */
static const char gpus_dir[] = "/proc/driver/nvidia/gpus";
static const char version_path[] = "/proc/driver/nvidia/version";
static char gpus_copy[sizeof(gpus_dir)], version_copy[sizeof(version_path)];
/* The writable copy ("data"), and the path the loops open. */
static char version_data[sizeof(version_path)];
static const char *loop_path = version_path;
/* The literals as memory: compared through these, not by name, or the
 * compiler compares the copies with the contents it knows the literals
 * were built with (immediates), and never looks at their bytes. */
static const char *volatile gpus_mem = gpus_dir, *volatile version_mem = version_path;

static void save_literals(void)
{
	memcpy(gpus_copy, gpus_dir, sizeof(gpus_dir));
	memcpy(version_copy, version_path, sizeof(version_path));
	memcpy(version_data, version_path, sizeof(version_path));
}

static bool literals_hold(void)
{
	return !memcmp(gpus_copy, gpus_mem, sizeof(gpus_dir)) &&
	       !memcmp(version_copy, version_mem, sizeof(version_path)) &&
	       !memcmp(version_copy, version_data, sizeof(version_path));
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Exits 3 unless the paths hold their original bytes. A restore (or a fork
 * child's repair) whose deadline passed is left to the agent, which does it
 * when it next runs (late_restores, fork_missed): until then the alias
 * stays. That is said (literals_late=, then literals_back_ms=, for the
 * tests to hold against the agent's log of passed deadlines) and waited
 * for, at most LATE_MAX_MS. */
#define LATE_MAX_MS 20000
static void check_literals(const char *who)
{
	struct timespec t0;

	if (literals_hold())
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	printf("literals_late=%s pid=%d: %s %s %s (at %p %p %p)\n", who, (int)getpid(), gpus_dir,
	       version_path, version_data, (void *)gpus_dir, (void *)version_path,
	       (void *)version_data);
	while (!literals_hold() && ms_since(&t0) < LATE_MAX_MS)
		usleep(20 * 1000);
	if (!literals_hold()) {
		printf("literals_intact=no (%s): %s %s %s\n", who, gpus_dir, version_path,
		       version_data);
		fflush(stdout);
		exit(3);
	}
	printf("literals_back_ms=%ld (%s)\n", ms_since(&t0), who);
}

static int read_version(const char *path)
{
	char buf[256] = "";
	int fd = open(path, O_RDONLY), ok;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ok = n > 0 && !strncmp(buf, "NVRM version:", 13);
	return ok;
}

static int mode_literal(void)
{
	DIR *d = opendir(gpus_dir);
	struct dirent *e;
	char line[512] = "";
	FILE *f;
	int n = 0;

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				printf("gpu=%s\n", e->d_name);
				n++;
			}
		closedir(d);
	}
	printf("gpus=%d\n", n);
	f = fopen(version_path, "r");
	if (f && fgets(line, sizeof(line), f))
		line[strcspn(line, "\n")] = '\0';
	if (f)
		fclose(f);
	printf("version=%s\n", f ? line : "(none)");
	check_literals("literal");
	printf("literals_intact=yes\n");
	return 0;
}

/* The first line of the file at path, without its newline; false (errno
 * set) if it does not open. */
static bool first_line(const char *path, char *line, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, line, len - 1);
	line[n > 0 ? n : 0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	close(fd);
	return true;
}

static int mode_buffers(const char *bdf)
{
	char stackbuf[128], *heap = malloc(128), copy[128], target[256], list[64] = "";
	struct stat st;
	ssize_t n;

	snprintf(stackbuf, sizeof(stackbuf), "/sys/bus/pci/drivers/nvidia/%s", bdf);
	snprintf(heap, 128, "/proc/driver/nvidia/gpus/%s/information", bdf);
	memcpy(copy, stackbuf, sizeof(copy));

	printf("stat=%s\n", stat(heap, &st) == 0 && S_ISREG(st.st_mode) ? "file" : strerror(errno));
	printf("access=%s\n", access(heap, R_OK) == 0 ? "ok" : strerror(errno));
	n = readlink(stackbuf, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	printf("readlink=%s\n", n > 0 ? target : strerror(errno));
	if (memcmp(copy, stackbuf, sizeof(copy)))
		return printf("buffers_intact=no\n"), 3;
	strcat(stackbuf, "/local_cpulist");
	memcpy(copy, stackbuf, sizeof(copy));
	printf("local_cpulist=%s\n", first_line(stackbuf, list, sizeof(list)) ? list : strerror(errno));
	if (memcmp(copy, stackbuf, sizeof(copy)) ||
	    strncmp(heap, "/proc/driver/nvidia/gpus/", 25))
		return printf("buffers_intact=no\n"), 3;
	printf("buffers_intact=yes\n");
	free(heap);
	return 0;
}

static int mode_raw(void)
{
	char buf[256] = "";
	long fd = syscall(SYS_openat, AT_FDCWD, version_path, O_RDONLY);
	long n = fd >= 0 ? syscall(SYS_read, fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		syscall(SYS_close, fd);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	printf("raw=%s\n", fd >= 0 ? buf : strerror(errno));
	check_literals("raw");
	return 0;
}

static int loops;

static void *loop_thread(void *arg)
{
	long good = 0;

	(void)arg;
	for (int i = 0; i < loops; i++)
		good += read_version(loop_path);
	return (void *)good;
}

static long run_threads(int nthreads)
{
	pthread_t t[64];
	long good = 0;

	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, loop_thread, NULL);
	for (int i = 0; i < nthreads; i++) {
		void *r;

		pthread_join(t[i], &r);
		good += (long)r;
	}
	return good;
}

static int mode_threads(int nthreads, int n)
{
	long good;

	loops = n;
	good = run_threads(nthreads);
	check_literals("threads");
	printf("good=%ld of %d\n", good, nthreads * n);
	return 0;
}

/* The shape of a shell running jobs: threads reading through one literal,
 * forked children that read and check their copy, and a child that execs a
 * reader in the same pid. Prints the reads, the ones that missed the
 * profile, and the rounds where something else broke (a child's literals
 * not the original, a child that died). */
static int mode_tree(int n)
{
	long reads = 0, missed = 0;
	int broken = 0, st;

	loops = n;
	for (int round = 0; round < 4; round++) {
		pid_t c = fork();

		if (c == 0) {
			/* The child's copy of the literals must be the original,
			 * whatever was patched in the parent when it forked. */
			check_literals("fork child");
			if (!read_version(loop_path))
				_exit(4);
			check_literals("fork child after read");
			if (round % 2 == 0) {
				execl(self, self, "literal", (char *)NULL);
				_exit(5);
			}
			_exit(0);
		}
		reads += 2L * n + 1;
		missed += 2L * n - run_threads(2);
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st)) {
			broken++;
			printf("tree_child_died=round %d: %s\n", round,
			       WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "lost");
		} else if (WEXITSTATUS(st) == 4) {
			missed++;
		} else if (WEXITSTATUS(st)) {
			broken++;
			printf("tree_child_died=round %d: exit %d (3: literals not back, 5: exec failed)\n",
			       round, WEXITSTATUS(st));
		}
	}
	check_literals("tree parent");
	printf("tree_reads=%ld\ntree_missed=%ld\ntree_broken=%d\n", reads, missed, broken);
	printf("tree_bad=%ld\n", missed + broken);
	return 0;
}

static volatile int forks_stop;

static void *open_until_stopped(void *arg)
{
	long n = 0;

	(void)arg;
	while (!forks_stop)
		n += read_version(loop_path);
	return (void *)n;
}

static int mode_forks(int n)
{
	pthread_t t[2];
	int broken = 0, st;
	long opens = 0;

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, open_until_stopped, NULL);
	for (int i = 0; i < n; i++) {
		pid_t c = fork();

		if (c == 0) {
			check_literals("fork child"); /* exits 3 if not intact */
			_exit(0);
		}
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
			broken++;
	}
	forks_stop = 1;
	for (int i = 0; i < 2; i++) {
		void *r;

		pthread_join(t[i], &r);
		opens += (long)r;
	}
	check_literals("forks parent");
	printf("forks=%d\nforks_broken=%d\nforks_opens=%ld\n", n, broken, opens);
	return 0;
}

static volatile int mapping_stop;

static void *mapper(void *arg)
{
	(void)arg;
	while (!mapping_stop) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			break;
		memset(p, 1, 1 << 16);
		munmap(p, 1 << 20);
	}
	return NULL;
}

static int mode_mapping(int n)
{
	pthread_t m;
	long good;

	loops = n;
	pthread_create(&m, NULL, mapper, NULL);
	good = run_threads(2);
	mapping_stop = 1;
	pthread_join(m, NULL);
	check_literals("mapping");
	printf("good=%ld of %d\n", good, 2 * n);
	return 0;
}
/* The open blocks inside the syscall with the path rewritten, long enough
 * for the agent to be killed meanwhile: the buffer must end as it began
 * all the same. */
static int mode_blocked(const char *path, const char *go)
{
	char buf[128], copy[128], line[64] = "";

	snprintf(buf, sizeof(buf), "%s", path);
	memcpy(copy, buf, sizeof(copy));
	printf("opening=%s\n", buf);
	printf("read=%s\n", first_line(buf, line, sizeof(line)) ? line : strerror(errno));
	if (go) {
		printf("after_open=%s\n", memcmp(copy, buf, sizeof(copy)) ? "rewritten" : "intact");
		for (int i = 0; i < 1200 && access(go, F_OK); i++)
			usleep(50 * 1000);
	}
	if (memcmp(copy, buf, sizeof(copy)))
		return printf("buffer_intact=no: %s\n", buf), 3;
	printf("buffer_intact=yes\n");
	return 0;
}

static int mode_vfork(char **argv)
{
	static char path[256];
	int status = -1;
	pid_t pid;

	snprintf(path, sizeof(path), "%s", argv[0]);
	pid = vfork();
	if (pid == 0) {
		execv(path, argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return perror("vfork"), 1;
	printf("vfork_status=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	printf("vfork_path_intact=%s\n", strcmp(path, argv[0]) ? path : "yes");
	return 0;
}

static int mode_nvml(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	int (*init)(void), (*count)(unsigned *);
	unsigned n = 0;

	if (!h) {
		printf("nvml=%s\n", dlerror());
		return 1;
	}
	*(void **)&init = dlsym(h, "nvmlInit_v2");
	*(void **)&count = dlsym(h, "nvmlDeviceGetCount_v2");
	if (!init || !count || init() || count(&n)) {
		printf("nvml=init failed\n");
		return 1;
	}
	printf("nvml_gpus=%u\n", n);
	return 0;
}

/* What libibverbs tries first: a NETLINK_RDMA socket. "rdma_netlink=ok"
 * where the kernel gives one, else the error. */
static int mode_rdma_netlink(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 20 /* NETLINK_RDMA */);

	if (fd < 0) {
		printf("rdma_netlink=%s\n", strerror(errno));
		return 0;
	}
	close(fd);
	printf("rdma_netlink=ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	self = argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	save_literals();
	if (argc >= 3 && !strcmp(argv[argc - 1], "data")) {
		loop_path = version_data;
		argc--;
	}
	if (argc >= 2 && !strcmp(argv[1], "literal"))
		return mode_literal();
	if (argc >= 3 && !strcmp(argv[1], "buffers"))
		return mode_buffers(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "raw"))
		return mode_raw();
	if (argc >= 3 && !strcmp(argv[1], "loop")) {
		int n = atoi(argv[2]), good = 0;

		for (int i = 0; i < n; i++)
			good += read_version(loop_path);
		check_literals("loop");
		printf("good=%d of %d\n", good, n);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "threads"))
		return mode_threads(atoi(argv[2]), atoi(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "tree"))
		return mode_tree(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "forks"))
		return mode_forks(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "mapping"))
		return mode_mapping(atoi(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "blocked"))
		return mode_blocked(argv[2], argc >= 4 ? argv[3] : NULL);
	if (argc >= 2 && !strcmp(argv[1], "nvml"))
		return mode_nvml();
	if (argc >= 3 && !strcmp(argv[1], "vfork"))
		return mode_vfork(argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "rdma-netlink"))
		return mode_rdma_netlink();
	fprintf(stderr, "usage: reader literal|buffers BDF|raw|loop N|threads T N|tree N|forks N|mapping N [data]|blocked PATH [GO]|nvml|vfork PATH ARGS|rdma-netlink\n");
	return 2;
}
