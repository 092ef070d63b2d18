#include "daemon/control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/log.h"

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return nvm_err_r(-1, "%s: socket path too long", path);
	strcpy(sa->sun_path, path);
	return 0;
}

int control_listen(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	if (fill_addr(&sa, path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return nvm_err_r(-1, "socket: %s", strerror(errno));
	unlink(path); /* a stale socket: the root lock says nobody else owns it */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 8)) {
		nvm_err("control socket %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int control_query(const char *path, char *buf, size_t len)
{
	struct sockaddr_un sa;
	size_t off = 0;
	int fd;

	if (fill_addr(&sa, path))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		nvm_err("no agent answers at %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (off + 1 < len) {
		ssize_t n = read(fd, buf + off, len - 1 - off);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	return off ? 0 : nvm_err_r(-1, "%s: empty answer", path);
}
