/* CPU sets as the kernel prints them: lists ("0-3,8") and masks ("ff,ffffffff"). */
#ifndef NVM_CPUSET_H
#define NVM_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NVM_MAX_CPUS 4096

struct nvm_cpuset {
	uint64_t bits[NVM_MAX_CPUS / 64];
};

void cpuset_clear(struct nvm_cpuset *s);
void cpuset_set(struct nvm_cpuset *s, unsigned cpu);
bool cpuset_has(const struct nvm_cpuset *s, unsigned cpu);
bool cpuset_empty(const struct nvm_cpuset *s);
/* Highest CPU in the set plus one; 0 for an empty set. */
unsigned cpuset_span(const struct nvm_cpuset *s);
void cpuset_and(struct nvm_cpuset *dst, const struct nvm_cpuset *a);
void cpuset_range(struct nvm_cpuset *s, unsigned first, unsigned last);

/* Parses "0-3,8,10-11" (optional trailing newline). Returns 0, or -1 with
 * *why set to a static description of what is wrong. */
int cpuset_parse_list(struct nvm_cpuset *s, const char *text, const char **why);

/* Formats as a list ("0-3,8"). Returns the length, or -1 if buf is short. */
int cpuset_format_list(const struct nvm_cpuset *s, char *buf, size_t len);

/* Formats as the kernel's hex mask in 32-bit groups separated by commas,
 * wide enough for nbits CPUs, e.g. "ff,ffffffff" for 40 CPUs all set. */
int cpuset_format_mask(const struct nvm_cpuset *s, unsigned nbits, char *buf,
		       size_t len);

/* Reads a list file such as /sys/devices/system/cpu/online. */
int cpuset_read_file(struct nvm_cpuset *s, const char *path);

#endif
