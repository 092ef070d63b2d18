/* Real-time scheduling for the patch service's threads. */
#ifndef NVM_REALTIME_H
#define NVM_REALTIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* The patch service threads' SCHED_FIFO priority. */
#define NVM_RT_PRIORITY 50

enum rt_outcome {
	RT_OK,      /* SCHED_FIFO where the thread was */
	RT_MOVED,   /* SCHED_FIFO after moving to the cpu hierarchy's root */
	RT_REFUSED, /* still SCHED_OTHER: why says what refused it */
};

/* Makes the calling thread SCHED_FIFO at prio. When the kernel refuses
 * because the thread's cgroup v1 "cpu" group has no real-time budget
 * (cpu.rt_runtime_us is 0, as for most services and containers on kernels
 * with RT_GROUP_SCHED), moves the thread to the root of that hierarchy, which
 * has the system's budget, and tries again. why (when not RT_OK) says what
 * was found and done. */
enum rt_outcome realtime_self(int prio, char *why, size_t len);

/* A mutex with priority inheritance, for a lock the real-time threads
 * share with the main thread (not real-time): if a target task preempted
 * the main thread while it held the lock, a real-time thread would wait
 * behind it while that task spins for an answer. Inheritance lifts the
 * holder to the waiter's priority, so it finishes at once. */
void realtime_mutex_init(pthread_mutex_t *m);

/* A section run at SCHED_FIFO prio by a thread that is not real-time
 * otherwise (the main thread), where it holds a lock the real-time threads
 * wait for: a target task cannot preempt it there, nor keep it off its
 * CPU while an answer waits on it; a child it forks inherits the priority.
 * A thread that is real-time already stays as it is. Where the kernel
 * refuses, the section runs as before and why says so (raised false). */
struct rt_section {
	bool raised;
	bool refused;
	char why[256];
};

void realtime_enter(struct rt_section *s, int prio);
void realtime_leave(struct rt_section *s);

#endif
