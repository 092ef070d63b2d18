/* The one clock the agent measures with: CLOCK_MONOTONIC, which the BPF
 * side's bpf_ktime_get_ns() also reads, so their times compare. */
#ifndef NVM_CLOCK_H
#define NVM_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline long long mono_ms(void)
{
	return (long long)(now_ns() / 1000000);
}

#endif
