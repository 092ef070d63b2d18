#include "engine/memio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/realtime.h"

#define CACHE_SIZE 64

/* A cached file is lent, not duplicated: a dup and a close for every
 * request cost two syscalls more than its memory I/O. A lent file is
 * not evicted until it is given back. */
struct entry {
	uint32_t tgid;
	uint64_t mm;
	int fd;          /* -1: a free entry */
	unsigned refs;   /* callers holding fd now: not evicted meanwhile */
	uint64_t used;   /* for least-recently-used eviction */
};

struct memio {
	pthread_mutex_t lock; /* the cache; never held while a file opens */
	struct entry e[CACHE_SIZE];
	uint64_t clock;
};

/* The fd table a thread grows to open a file past its end is swapped in
 * after synchronize_rcu() when threads share it, as the agent's do. A task
 * waiting in a BPF program is inside an RCU read section, so that grace
 * period, and with it the open of a mem file a request needs, lasts until
 * the task stops waiting: the request misses. So the table is grown once
 * here, before any task waits, to room for every file the agent keeps
 * (its maps, the cache, sockets) and more (NVM_FD_TABLE_MIN, memio.h).
 * It never shrinks. */
static void reserve_fd_table(void)
{
	struct rlimit r;
	rlim_t want = NVM_FD_TABLE_MIN;
	int any, fd;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
		if (r.rlim_cur < want && r.rlim_max >= want) {
			r.rlim_cur = want;
			setrlimit(RLIMIT_NOFILE, &r);
		}
		if (r.rlim_cur < want)
			want = r.rlim_cur;
	}
	any = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (any < 0)
		return;
	fd = fcntl(any, F_DUPFD_CLOEXEC, (int)want - 1); /* the table now covers it */
	if (fd >= 0)
		close(fd);
	close(any);
}

struct memio *memio_new(void)
{
	struct memio *m = calloc(1, sizeof(*m));

	reserve_fd_table();

	if (m) {
		realtime_mutex_init(&m->lock);
		for (int i = 0; i < CACHE_SIZE; i++)
			m->e[i].fd = -1;
	}
	return m;
}

void memio_free(struct memio *m)
{
	if (!m)
		return;
	for (int i = 0; i < CACHE_SIZE; i++)
		if (m->e[i].fd >= 0)
			close(m->e[i].fd);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* Lends the cached file of (tgid, mm): its fd, or -1. Locked by the caller. */
static int lend(struct memio *m, uint32_t tgid, uint64_t mm)
{
	for (int i = 0; i < CACHE_SIZE; i++) {
		struct entry *e = &m->e[i];

		if (e->fd >= 0 && e->tgid == tgid && e->mm == mm) {
			e->used = ++m->clock;
			e->refs++;
			return e->fd;
		}
	}
	return -1;
}

/* Caches fd for (tgid, mm), lent to the caller, in place of the least
 * recently used file nobody holds; not at all if every entry is held. */
static void keep(struct memio *m, uint32_t tgid, uint64_t mm, int fd)
{
	struct entry *victim = NULL;

	for (int i = 0; i < CACHE_SIZE; i++) {
		struct entry *e = &m->e[i];

		if (e->fd < 0) {
			victim = e; /* a free entry: take it */
			break;
		}
		if (!e->refs && (!victim || e->used < victim->used))
			victim = e;
	}
	if (!victim)
		return;
	if (victim->fd >= 0)
		close(victim->fd);
	*victim = (struct entry){ .tgid = tgid, .mm = mm, .fd = fd, .refs = 1,
				  .used = ++m->clock };
}

int memio_fd(struct memio *m, uint32_t tgid, uint32_t tid, uint64_t mm)
{
	char path[64];
	int fd, other;

	pthread_mutex_lock(&m->lock);
	fd = lend(m, tgid, mm);
	pthread_mutex_unlock(&m->lock);
	if (fd >= 0)
		return fd;

	/* Opening can wait (on the process's exec): not under the lock. The
	 * thread that asked may have exited since (a late restore, a fork
	 * repair): its process's memory is the same, so open that. Either
	 * way the bytes are checked before any write. */
	snprintf(path, sizeof(path), "/proc/%u/task/%u/mem", tgid, tid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		snprintf(path, sizeof(path), "/proc/%u/mem", tgid);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	pthread_mutex_lock(&m->lock);
	other = lend(m, tgid, mm); /* another thread cached one meanwhile */
	if (other < 0)
		keep(m, tgid, mm, fd); /* else (all held) ours is used once:
					* memio_put closes what it does not find */
	pthread_mutex_unlock(&m->lock);
	if (other >= 0)
		close(fd);
	return other >= 0 ? other : fd;
}

void memio_put(struct memio *m, int fd)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&m->lock);
	for (int i = 0; i < CACHE_SIZE; i++) {
		struct entry *e = &m->e[i];

		if (e->fd != fd)
			continue;
		e->refs--;
		pthread_mutex_unlock(&m->lock);
		return;
	}
	pthread_mutex_unlock(&m->lock);
	close(fd); /* not cached: the caller's own */
}

int memio_read(int fd, uint64_t addr, void *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len, (off_t)addr);

	return n == (ssize_t)len ? 0 : -1;
}

int memio_write(int fd, uint64_t addr, const void *buf, size_t len)
{
	return pwrite(fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

int memio_read_str(int fd, uint64_t addr, char *buf, size_t len)
{
	size_t n = 0;

	if (memio_read(fd, addr, buf, len - 1) == 0) {
		buf[len - 1] = '\0';
		return (int)strlen(buf);
	}
	while (n + 1 < len && memio_read(fd, addr + n, buf + n, 1) == 0 && buf[n])
		n++;
	if (n == 0 && memio_read(fd, addr, buf, 1))
		return -1;
	buf[n] = '\0';
	return (int)n;
}

int memio_swap(int fd, uint64_t addr, const void *expect, const void *want, size_t len)
{
	unsigned char now[256];

	if (len > sizeof(now) || memio_read(fd, addr, now, len))
		return -1;
	if (memcmp(now, expect, len))
		return 1;
	return memio_write(fd, addr, want, len);
}

uint64_t memio_answer_ns(void)
{
	static char probe[64] = "/proc/driver/nvidia/version";
	uint64_t slowest = 0;

	for (int round = 0; round < 8; round++) {
		uint64_t t0 = now_ns();
		int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		char buf[sizeof(probe)];

		if (fd < 0)
			return 0;
		if (memio_read(fd, (uint64_t)(uintptr_t)probe, buf, sizeof(buf)) == 0)
			memio_write(fd, (uint64_t)(uintptr_t)probe, buf, sizeof(buf));
		close(fd);
		if (now_ns() - t0 > slowest)
			slowest = now_ns() - t0;
	}
	return slowest;
}
