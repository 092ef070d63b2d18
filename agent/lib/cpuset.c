#include "lib/cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fsutil.h"

void cpuset_clear(struct nvm_cpuset *s) { memset(s, 0, sizeof(*s)); }

void cpuset_set(struct nvm_cpuset *s, unsigned cpu)
{
	if (cpu < NVM_MAX_CPUS)
		s->bits[cpu / 64] |= 1ULL << (cpu % 64);
}

bool cpuset_has(const struct nvm_cpuset *s, unsigned cpu)
{
	return cpu < NVM_MAX_CPUS && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

bool cpuset_empty(const struct nvm_cpuset *s) { return cpuset_span(s) == 0; }

unsigned cpuset_span(const struct nvm_cpuset *s)
{
	for (int w = NVM_MAX_CPUS / 64 - 1; w >= 0; w--)
		if (s->bits[w])
			return w * 64 + 64 - __builtin_clzll(s->bits[w]);
	return 0;
}

void cpuset_and(struct nvm_cpuset *dst, const struct nvm_cpuset *a)
{
	for (size_t w = 0; w < NVM_MAX_CPUS / 64; w++)
		dst->bits[w] &= a->bits[w];
}

void cpuset_range(struct nvm_cpuset *s, unsigned first, unsigned last)
{
	for (unsigned c = first; c <= last && c < NVM_MAX_CPUS; c++)
		cpuset_set(s, c);
}

static int parse_cpu(const char **p, unsigned *out, const char **why)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)**p)) {
		*why = "expected a CPU number";
		return -1;
	}
	errno = 0;
	v = strtoul(*p, &end, 10);
	if (errno || v >= NVM_MAX_CPUS) {
		*why = "CPU number out of range (0..4095)";
		return -1;
	}
	*out = (unsigned)v;
	*p = end;
	return 0;
}

int cpuset_parse_list(struct nvm_cpuset *s, const char *text, const char **why)
{
	const char *p = text;

	cpuset_clear(s);
	while (*p && *p != '\n') {
		unsigned first, last;

		if (parse_cpu(&p, &first, why))
			return -1;
		last = first;
		if (*p == '-') {
			p++;
			if (parse_cpu(&p, &last, why))
				return -1;
			if (last < first) {
				*why = "range ends before it starts";
				return -1;
			}
		}
		cpuset_range(s, first, last);
		if (*p == ',') {
			p++;
			if (!*p || *p == '\n') {
				*why = "trailing comma";
				return -1;
			}
		} else if (*p && *p != '\n') {
			*why = "unexpected character (want N, N-M, comma separated)";
			return -1;
		}
	}
	if (cpuset_empty(s)) {
		*why = "empty CPU list";
		return -1;
	}
	return 0;
}

int cpuset_format_list(const struct nvm_cpuset *s, char *buf, size_t len)
{
	size_t off = 0;
	unsigned span = cpuset_span(s);

	buf[0] = '\0';
	for (unsigned c = 0; c < span; c++) {
		unsigned last = c;
		int n;

		if (!cpuset_has(s, c))
			continue;
		while (last + 1 < span && cpuset_has(s, last + 1))
			last++;
		n = last == c ? snprintf(buf + off, len - off, "%s%u", off ? "," : "", c)
			      : snprintf(buf + off, len - off, "%s%u-%u", off ? "," : "", c, last);
		if (n < 0 || (size_t)n >= len - off)
			return -1;
		off += n;
		c = last;
	}
	return (int)off;
}

int cpuset_format_mask(const struct nvm_cpuset *s, unsigned nbits, char *buf,
		       size_t len)
{
	unsigned groups = nbits ? (nbits + 31) / 32 : 1;
	size_t off = 0;

	for (int g = (int)groups - 1; g >= 0; g--) {
		uint32_t word = (uint32_t)(s->bits[g / 2] >> ((g % 2) * 32));
		int n;

		if (g == (int)groups - 1) {
			/* The kernel does not pad the leading group, except that
			 * it prints exactly the bits nbits covers. */
			unsigned top = nbits - 32 * (groups - 1);
			int digits = top ? (int)((top + 3) / 4) : 1;

			n = snprintf(buf + off, len - off, "%0*x", digits, word);
		} else {
			n = snprintf(buf + off, len - off, ",%08x", word);
		}
		if (n < 0 || (size_t)n >= len - off)
			return -1;
		off += n;
	}
	return (int)off;
}

int cpuset_read_file(struct nvm_cpuset *s, const char *path)
{
	char text[4096];
	const char *why;
	ssize_t n = fs_read(path, text, sizeof(text));

	if (n < 0)
		return (int)n;
	return cpuset_parse_list(s, text, &why) ? -EINVAL : 0;
}
