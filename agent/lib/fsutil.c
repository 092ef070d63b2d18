#include "lib/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"

int fs_write(const char *dir, const char *name, const void *data, size_t len,
	     mode_t mode)
{
	char path[PATH_MAX];
	const char *p = data;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return nvm_err_r(-errno, "create %s: %s", path, strerror(errno));
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			int e = errno;

			close(fd);
			return nvm_err_r(-e, "write %s: %s", path, strerror(e));
		}
		p += n, len -= (size_t)n;
	}
	/* The mode must not depend on the umask of whoever renders. */
	if (fchmod(fd, mode) || close(fd))
		return nvm_err_r(-errno, "finish %s: %s", path, strerror(errno));
	return 0;
}

int fs_copy(const char *src, const char *dir, const char *name, mode_t mode)
{
	struct stat st;
	char *data;
	int fd, r;

	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		r = nvm_err_r(-1, "copy %s: %s", src, fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return r;
	}
	data = malloc((size_t)st.st_size + 1);
	r = data && read(fd, data, (size_t)st.st_size) == st.st_size ? 0 : -1;
	close(fd);
	if (r)
		nvm_err("copy %s: cannot read it whole", src);
	else
		r = fs_write(dir, name, data, (size_t)st.st_size, mode);
	free(data);
	return r;
}

int fs_replace(const char *tmp, const char *dir, const char *name, const void *data,
	       size_t len, mode_t mode)
{
	char path[PATH_MAX], tdir[PATH_MAX], *slash;

	snprintf(tdir, sizeof(tdir), "%s", tmp);
	slash = strrchr(tdir, '/');
	if (!slash)
		return nvm_err_r(-EINVAL, "%s: not a path", tmp);
	*slash = '\0';
	unlink(tmp);
	if (fs_write(tdir, slash + 1, data, len, mode))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (rename(tmp, path)) {
		int e = errno;

		unlink(tmp);
		return nvm_err_r(-e, "rename %s -> %s: %s", tmp, path, strerror(e));
	}
	return 0;
}

int fs_printf(const char *dir, const char *name, const char *fmt, ...)
{
	char buf[16384];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return nvm_err_r(-EOVERFLOW, "%s/%s: content too long", dir, name);
	return fs_write(dir, name, buf, (size_t)n, 0444);
}

int fs_mkdirs(const char *path)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return nvm_err_r(-ENAMETOOLONG, "%s: path too long", path);
	for (char *p = tmp + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;

			*p = '\0';
			if (mkdir(tmp, 0755) && errno != EEXIST)
				return nvm_err_r(-errno, "mkdir %s: %s", tmp, strerror(errno));
			if (!c)
				break;
			*p = c;
		}
	}
	return 0;
}

int fs_symlink(const char *target, const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (symlink(target, path))
		return nvm_err_r(-errno, "symlink %s -> %s: %s", path, target, strerror(errno));
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st, (void)f;
	if ((type == FTW_DP ? rmdir(path) : unlink(path)) && errno != ENOENT)
		nvm_warn("remove %s: %s", path, strerror(errno));
	return 0;
}

int fs_remove_tree(const char *path)
{
	if (path[0] != '/' || !strcmp(path, "/"))
		return nvm_err_r(-EINVAL, "refusing to remove \"%s\"", path);
	if (nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) && errno != ENOENT)
		return -errno;
	return 0;
}

ssize_t fs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

ssize_t fs_read_line(const char *path, char *buf, size_t len)
{
	ssize_t n = fs_read(path, buf, len);

	if (n < 0)
		return n;
	buf[strcspn(buf, "\n")] = '\0';
	return (ssize_t)strlen(buf);
}

int fs_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	err = errno;
	close(fd);
	errno = n < 0 ? err : EIO;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

int fs_exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

int fs_find_beside(const char *name, char *buf, size_t len)
{
	static const char *const near[] = { "", "/../lib/nvmirage" }; /* build/, installed */
	char exe[PATH_MAX];

	if (fs_exe_dir(exe, sizeof(exe)))
		return -1;
	for (unsigned i = 0; i < 2; i++) {
		snprintf(buf, len, "%s%s/%s", exe, near[i], name);
		if (access(buf, R_OK) == 0)
			return 0;
	}
	return -1;
}
