/* The baseline users have today: an LD_PRELOAD shim that sends opens of
 * /proc/driver/nvidia/... to a tree at $NVM_SHIM_ROOT. Only for the bench. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char prefix[] = "/proc/driver/nvidia";

static const char *redirect(const char *path, char *buf, size_t len)
{
	const char *root = getenv("NVM_SHIM_ROOT");

	if (!root || strncmp(path, prefix, sizeof(prefix) - 1) ||
	    (path[sizeof(prefix) - 1] && path[sizeof(prefix) - 1] != '/'))
		return path;
	snprintf(buf, len, "%s/proc/driver/nvidia%s", root, path + sizeof(prefix) - 1);
	return buf;
}

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	char buf[4096];
	mode_t mode = 0;
	va_list ap;

	if (!real)
		real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return real(redirect(path, buf, sizeof(buf)), flags, mode);
}
