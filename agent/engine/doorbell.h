/* The kernel side's doorbells: one ring buffer per CPU, in the bells map
 * (an array of maps indexed by CPU). A record in a CPU's ring wakes the
 * service threads of that CPU, which sleep in epoll on its fd. Records
 * carry nothing the threads need: they only wake them. */
#ifndef NVM_DOORBELL_H
#define NVM_DOORBELL_H

#include <stddef.h>
#include <linux/types.h>

struct doorbell {
	int fd;                  /* the ring; -1 when not created */
	__u64 *consumer;         /* the ring's positions, mapped */
	const __u64 *producer;
};

/* A ring like the ones doorbell_open makes, as the bells map's inner map
 * template (the object's own declares 4096 bytes, not the page size).
 * Returns its fd, or -1 with the reason logged. */
int doorbell_template(size_t page);
/* Creates CPU cpu's ring of page bytes and puts it in the bells map.
 * Returns 0, or -1 with the reason logged. */
int doorbell_open(struct doorbell *b, int bells_fd, unsigned cpu, size_t page);
/* Marks every record rung so far as seen. */
void doorbell_drain(struct doorbell *b);
void doorbell_close(struct doorbell *b, size_t page);

#endif
