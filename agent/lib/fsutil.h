/* Small file-system helpers that report their own errors. */
#ifndef NVM_FSUTIL_H
#define NVM_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Writes len bytes to dir/name (created, mode), all or nothing reported. */
int fs_write(const char *dir, const char *name, const void *data, size_t len,
	     mode_t mode);
/* Like fs_write for a printf-formatted text. */
/* Replaces dir/name with data in one rename: written first to tmp (a path on
 * the same file system, outside any directory a reader lists), so that a
 * reader opens the old file or the new one, whole. */
int fs_replace(const char *tmp, const char *dir, const char *name, const void *data,
	       size_t len, mode_t mode);
int fs_printf(const char *dir, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* mkdir -p, mode 0755. */
int fs_mkdirs(const char *path);
int fs_symlink(const char *target, const char *dir, const char *name);
/* Copies the regular file src to dir/name with mode (which must not
 * exist). Returns 0, or -1 (reported). */
int fs_copy(const char *src, const char *dir, const char *name, mode_t mode);
/* rm -rf; refuses "/" and relative paths. */
int fs_remove_tree(const char *path);
/* Reads a whole small file into buf (NUL-terminated); returns its length or -errno. */
ssize_t fs_read(const char *path, char *buf, size_t len);
/* The first line of a small file, without its newline; its length or -errno. */
ssize_t fs_read_line(const char *path, char *buf, size_t len);
/* Writes s to the existing file path in one write (a cgroup or proc file).
 * Returns 0, or -1 with errno set. Reports nothing. */
int fs_write_str(const char *path, const char *s);
/* The folder of this process's executable. Returns 0 or -1. */
int fs_exe_dir(char *buf, size_t len);
/* nvmirage's file name next to this binary (build/) or in ../lib/nvmirage
 * from it (as installed, and in the image), into buf: 0, or -1 when in
 * neither. */
int fs_find_beside(const char *name, char *buf, size_t len);

#endif
