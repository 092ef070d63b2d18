#include "engine/doorbell.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/log.h"

static int ring(size_t page)
{
	return bpf_map_create(BPF_MAP_TYPE_RINGBUF, "nvm_bell", 0, 0, (__u32)page, NULL);
}

int doorbell_template(size_t page)
{
	int fd = ring(page);

	if (fd < 0)
		return nvm_err_r(-1, "doorbell template: %s", strerror(errno));
	return fd;
}

int doorbell_open(struct doorbell *b, int bells_fd, unsigned cpu, size_t page)
{
	void *p;

	*b = (struct doorbell){ .fd = -1 };
	b->fd = ring(page);
	if (b->fd < 0)
		return nvm_err_r(-1, "doorbell of CPU %u: %s", cpu, strerror(errno));
	/* A ring buffer maps as its consumer page (ours to write), then its
	 * producer page. */
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	if (p == MAP_FAILED)
		return nvm_err_r(-1, "mmap the doorbell of CPU %u: %s", cpu, strerror(errno));
	b->consumer = p;
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, b->fd, (off_t)page);
	if (p == MAP_FAILED)
		return nvm_err_r(-1, "mmap the doorbell of CPU %u: %s", cpu, strerror(errno));
	b->producer = p;
	if (bpf_map_update_elem(bells_fd, &cpu, &b->fd, BPF_ANY))
		return nvm_err_r(-1, "doorbell of CPU %u into the bells map: %s", cpu,
				 strerror(errno));
	return 0;
}

void doorbell_drain(struct doorbell *b)
{
	__u64 prod = __atomic_load_n(b->producer, __ATOMIC_ACQUIRE);

	if (*b->consumer < prod)
		__atomic_store_n(b->consumer, prod, __ATOMIC_RELEASE);
}

void doorbell_close(struct doorbell *b, size_t page)
{
	if (b->consumer)
		munmap(b->consumer, page);
	if (b->producer)
		munmap((void *)b->producer, page);
	if (b->fd >= 0)
		close(b->fd);
	*b = (struct doorbell){ .fd = -1 };
}
