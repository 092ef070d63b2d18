#include "unit.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "engine/memio.h"

/* The tests read and write this process's own memory through its mem
 * file; distinct fake mm values stand for distinct process images. */
static char text[32] = "/proc/driver/nvidia/version";

static int open_mem(struct memio *m, uint64_t mm)
{
	return memio_fd(m, (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid), mm);
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* The FDSize line of /proc/self/status: how many files the fd table holds. */
static long fd_table_size(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "FDSize: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Opening a file past the end of a shared fd table waits for an RCU grace
 * period, which a task waiting in a BPF program holds off: the table is
 * grown up front, once. Runs first, while this process's table is small. */
static void grows_the_fd_table_up_front(void **state)
{
	struct memio *m;

	(void)state;
	assert_in_range(fd_table_size(), 1, 1023);
	m = memio_new();
	assert_non_null(m);
	assert_true(fd_table_size() >= 1024);
	memio_free(m);
}

static void reads_writes_and_swaps(void **state)
{
	struct memio *m = memio_new();
	uint64_t addr = (uint64_t)(uintptr_t)text;
	char buf[8];
	int fd;

	(void)state;
	fd = open_mem(m, 1);
	assert_true(fd >= 0);
	assert_int_equal(memio_read(fd, addr, buf, 5), 0);
	assert_memory_equal(buf, "/proc", 5);
	assert_int_equal(memio_write(fd, addr + 1, "PROC", 4), 0);
	assert_memory_equal(text, "/PROC", 5);
	/* Swapped back only where the bytes are still the expected ones. */
	assert_int_equal(memio_swap(fd, addr + 1, "XXXX", "proc", 4), 1);
	assert_memory_equal(text, "/PROC", 5);
	assert_int_equal(memio_swap(fd, addr + 1, "PROC", "proc", 4), 0);
	assert_string_equal(text, "/proc/driver/nvidia/version");
	memio_put(m, fd);
	memio_free(m);
}

static void lends_one_file_per_image(void **state)
{
	struct memio *m = memio_new();
	int a, b, c;

	(void)state;
	a = open_mem(m, 1);
	b = open_mem(m, 1);
	c = open_mem(m, 2);
	assert_true(a >= 0 && c >= 0);
	assert_int_equal(a, b); /* lent twice, not duplicated */
	assert_int_not_equal(a, c);
	memio_put(m, a);
	memio_put(m, b);
	memio_put(m, c);
	assert_true(is_open(a) && is_open(c)); /* still cached */
	assert_int_equal(open_mem(m, 1), a);
	memio_put(m, a);
	memio_free(m);
}

/* A file lent out is never evicted: with every entry held, a new image
 * gets a file of its own, closed when given back. */
static void never_evicts_a_lent_file(void **state)
{
	struct memio *m = memio_new();
	int held[64], extra, again;

	(void)state;
	for (int i = 0; i < 64; i++) {
		held[i] = open_mem(m, 100 + (uint64_t)i);
		assert_true(held[i] >= 0);
	}
	extra = open_mem(m, 999);
	assert_true(extra >= 0);
	for (int i = 0; i < 64; i++)
		assert_int_not_equal(extra, held[i]);
	memio_put(m, extra);
	assert_false(is_open(extra));
	for (int i = 0; i < 64; i++)
		assert_true(is_open(held[i]));
	/* Once given back, an entry can make room for another image. */
	memio_put(m, held[0]);
	again = open_mem(m, 999);
	assert_true(again >= 0);
	assert_true(is_open(held[1]));
	memio_put(m, again);
	assert_true(is_open(again)); /* cached now */
	for (int i = 1; i < 64; i++)
		memio_put(m, held[i]);
	memio_free(m);
}

/* The thread that asked has exited: its process's memory serves. */
static void opens_the_process_when_the_thread_is_gone(void **state)
{
	struct memio *m = memio_new();
	char buf[5];
	int fd;

	(void)state;
	fd = memio_fd(m, (uint32_t)getpid(), 0x3ffffff0, 7); /* no such thread */
	assert_true(fd >= 0);
	assert_int_equal(memio_read(fd, (uint64_t)(uintptr_t)text, buf, 5), 0);
	assert_memory_equal(buf, "/proc", 5);
	memio_put(m, fd);
	assert_true(memio_fd(m, 0x3ffffff0, 0x3ffffff0, 8) < 0); /* nor process */
	memio_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grows_the_fd_table_up_front),
		cmocka_unit_test(reads_writes_and_swaps),
		cmocka_unit_test(lends_one_file_per_image),
		cmocka_unit_test(never_evicts_a_lent_file),
		cmocka_unit_test(opens_the_process_when_the_thread_is_gone),
	};

	return cmocka_run_group_tests_name("memio", tests, NULL, NULL);
}
