/* Reading and writing other processes' memory through /proc/<pid>/mem.
 * An open mem file pins its address space (the kernel holds the mm), so
 * (tgid, mm) names one process image for as long as the file is cached: a
 * pid that exec'd has a new mm and gets a new file. */
#ifndef NVM_MEMIO_H
#define NVM_MEMIO_H

#include <stddef.h>
#include <stdint.h>

struct memio;

/* memio_new grows the process's fd table to this many files up front
 * (see memio.c: growing it later could wait on a task waiting in BPF). */
#define NVM_FD_TABLE_MIN 1024

struct memio *memio_new(void);
void memio_free(struct memio *m);

/* The mem file of the image (tgid, mm), opened through task tid (which must
 * be that image's, e.g. parked in a syscall). Returns an fd lent to the
 * caller until it gives it back with memio_put (the cache keeps it open
 * meanwhile), or -errno. Thread-safe. */
int memio_fd(struct memio *m, uint32_t tgid, uint32_t tid, uint64_t mm);
void memio_put(struct memio *m, int fd);

/* Exactly len bytes or -1. */
int memio_read(int fd, uint64_t addr, void *buf, size_t len);
/* Exactly len bytes or -1. The caller has just read what is there. */
int memio_write(int fd, uint64_t addr, const void *buf, size_t len);
/* A NUL-terminated string of at most len - 1 bytes: one read when the whole
 * buffer is mapped, else byte by byte up to the end of the mapping. Returns
 * its length, or -1 if nothing could be read. */
int memio_read_str(int fd, uint64_t addr, char *buf, size_t len);
/* Writes want at addr only if the len bytes there still equal expect.
 * Returns 0, 1 if they did not match (nothing written), or -1. */
int memio_swap(int fd, uint64_t addr, const void *expect, const void *want, size_t len);

/* How long one answer's memory I/O takes on this machine, measured on the
 * caller's own memory (open, read, write back): the slowest of a few
 * rounds, in ns. An emulated machine is tens of times slower than real
 * hardware, so limits on answers scale with this. */
uint64_t memio_answer_ns(void);

#endif
