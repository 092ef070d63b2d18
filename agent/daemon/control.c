#include "daemon/control.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0666) || listen(fd, 8)) {
		nvm_err("control socket %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The agent answers from its main loop: a client gets this long to send
 * its request before it is taken for one that sends none (the status). */
#define REQUEST_WAIT_MS 200

void control_read_request(int fd, char *buf, size_t len, bool *root)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	size_t off = 0;

	*root = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.uid == 0;
	while (off + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, REQUEST_WAIT_MS) <= 0)
			break;
		n = read(fd, buf + off, len - 1 - off);
		if (n <= 0)
			break;
		off += (size_t)n;
		if (memchr(buf, '\n', off))
			break;
	}
	buf[off] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

char *control_request(const char *path, const char *request)
{
	struct sockaddr_un sa;
	size_t off = 0, cap = 16384;
	char *buf = malloc(cap);
	int fd;

	if (!buf)
		return nvm_err("out of memory"), NULL;
	if (fill_addr(&sa, path))
		goto fail;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		nvm_err("no agent answers at %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) < 0 || shutdown(fd, SHUT_WR)) {
		nvm_err("%s: %s", path, strerror(errno));
		close(fd);
		goto fail;
	}
	for (;;) {
		ssize_t n;

		if (off + 1 == cap) {
			char *more = realloc(buf, cap * 2);

			if (!more) {
				nvm_err("%s: out of memory for the answer", path);
				close(fd);
				goto fail;
			}
			buf = more, cap *= 2;
		}
		if ((n = read(fd, buf + off, cap - 1 - off)) <= 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	close(fd);
	if (off)
		return buf;
	nvm_err("%s: empty answer", path);
fail:
	free(buf);
	return NULL;
}

char *control_query(const char *path)
{
	return control_request(path, "{\"op\": \"status\"}");
}
