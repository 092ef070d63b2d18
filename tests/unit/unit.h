/* Helpers shared by the cmocka unit tests. */
#ifndef NVM_UNIT_H
#define NVM_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Captures what the code under test writes to stderr. */
static char captured[8192];
static int saved_stderr = -1;
static char capture_path[64];

static inline void capture_begin(void)
{
	int fd;

	fflush(stderr);
	snprintf(capture_path, sizeof(capture_path), "/tmp/nvm-unit-err.XXXXXX");
	fd = mkstemp(capture_path);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static inline const char *capture_end(void)
{
	FILE *f;
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	f = fopen(capture_path, "r");
	n = f ? fread(captured, 1, sizeof(captured) - 1, f) : 0;
	if (f)
		fclose(f);
	captured[n] = '\0';
	unlink(capture_path);
	return captured;
}

/* Reads a whole file; the caller frees. *len gets its size. */
static inline char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static inline void spit(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The source tree (tests run from it). */
static inline const char *srcdir(void)
{
	const char *s = getenv("NVM_SRCDIR");

	return s ? s : ".";
}

#endif
