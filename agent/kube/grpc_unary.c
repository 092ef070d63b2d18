/* gRPC's wire format on HTTP/2: a POST to the method's path with
 * content-type application/grpc; request and response are each one
 * length-prefixed message (1 byte "compressed", 4 bytes big-endian length);
 * the outcome is the grpc-status trailer. nghttp2 does the HTTP/2. */
#include "kube/grpc_unary.h"

#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/version.h"

#define MAX_RESPONSE (16u << 20)

struct call {
	int fd;
	const uint8_t *out;      /* the framed request */
	size_t out_len, out_off;
	uint8_t *in;             /* the framed response */
	size_t in_len, in_cap;
	int http_status;
	int grpc_status;         /* -1 until the trailer arrives */
	char grpc_message[256];
	bool closed;
	uint32_t close_code;
	bool too_big;
};

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags,
		       void *user)
{
	struct call *c = user;
	ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);

	(void)s, (void)flags;
	if (n < 0)
		return errno == EAGAIN ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		     void *user)
{
	struct call *c = user;

	(void)s, (void)frame, (void)flags;
	if (namelen == 7 && !memcmp(name, ":status", 7))
		c->http_status = atoi((const char *)value);
	else if (namelen == 11 && !memcmp(name, "grpc-status", 11))
		c->grpc_status = atoi((const char *)value);
	else if (namelen == 12 && !memcmp(name, "grpc-message", 12))
		snprintf(c->grpc_message, sizeof(c->grpc_message), "%.*s", (int)valuelen,
			 (const char *)value);
	return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t stream, const uint8_t *data,
		   size_t len, void *user)
{
	struct call *c = user;

	(void)s, (void)flags, (void)stream;
	if (c->in_len + len > MAX_RESPONSE) {
		c->too_big = true;
		return 0;
	}
	if (c->in_len + len > c->in_cap) {
		size_t cap = c->in_cap ? c->in_cap : 4096;
		uint8_t *p;

		while (cap < c->in_len + len)
			cap *= 2;
		p = realloc(c->in, cap);
		if (!p)
			return NGHTTP2_ERR_CALLBACK_FAILURE;
		c->in = p, c->in_cap = cap;
	}
	memcpy(c->in + c->in_len, data, len);
	c->in_len += len;
	return 0;
}

static int on_close(nghttp2_session *s, int32_t stream, uint32_t code, void *user)
{
	struct call *c = user;

	(void)s, (void)stream;
	c->closed = true;
	c->close_code = code;
	return 0;
}

static ssize_t read_body(nghttp2_session *s, int32_t stream, uint8_t *buf, size_t len,
			 uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct call *c = user;
	size_t n = c->out_len - c->out_off;

	(void)s, (void)stream, (void)src;
	if (n > len)
		n = len;
	memcpy(buf, c->out + c->out_off, n);
	c->out_off += n;
	if (c->out_off == c->out_len)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return (ssize_t)n;
}

static int connect_unix(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: path too long for a unix socket", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "connect %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

#define HDR(n, v) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

/* Runs the session until the stream closes, the peer goes away or time is up. */
static int exchange(nghttp2_session *s, struct call *c, int timeout_ms, char *err, size_t errlen)
{
	long long end = mono_ms() + timeout_ms;

	while (!c->closed) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		uint8_t buf[16384];
		long long left = end - mono_ms();
		ssize_t n;
		int rv = nghttp2_session_send(s);

		if (rv)
			return snprintf(err, errlen, "HTTP/2: %s", nghttp2_strerror(rv)), -1;
		if (nghttp2_session_want_write(s))
			p.events |= POLLOUT;
		if (left <= 0)
			return snprintf(err, errlen, "no answer within %d ms", timeout_ms), -1;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return snprintf(err, errlen, "poll: %s", strerror(errno)), -1;
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = recv(c->fd, buf, sizeof(buf), 0);
		if (n == 0)
			return snprintf(err, errlen, "the server closed the connection"), -1;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return snprintf(err, errlen, "recv: %s", strerror(errno)), -1;
		}
		rv = (int)nghttp2_session_mem_recv(s, buf, (size_t)n);
		if (rv < 0)
			return snprintf(err, errlen, "HTTP/2: %s", nghttp2_strerror(rv)), -1;
	}
	return 0;
}

/* Checks the outcome and unframes the one response message. */
static int unframe(struct call *c, uint8_t **resp, size_t *resp_len, char *err, size_t errlen)
{
	uint32_t len;

	if (c->close_code)
		return snprintf(err, errlen, "stream reset (HTTP/2 error %u)", c->close_code), -1;
	if (c->http_status != 200)
		return snprintf(err, errlen, "HTTP status %d", c->http_status), -1;
	if (c->grpc_status != 0)
		return snprintf(err, errlen, "grpc-status %d%s%s", c->grpc_status,
				c->grpc_message[0] ? ": " : "", c->grpc_message), -1;
	if (c->too_big)
		return snprintf(err, errlen, "response over %u bytes", MAX_RESPONSE), -1;
	if (c->in_len < 5)
		return snprintf(err, errlen, "no response message"), -1;
	if (c->in[0] != 0)
		return snprintf(err, errlen, "compressed response (not asked for)"), -1;
	len = (uint32_t)c->in[1] << 24 | (uint32_t)c->in[2] << 16 | (uint32_t)c->in[3] << 8 |
	      c->in[4];
	if (len != c->in_len - 5)
		return snprintf(err, errlen, "response frame of %u bytes, %zu received", len,
				c->in_len - 5), -1;
	*resp = malloc(len ? len : 1);
	if (!*resp)
		return snprintf(err, errlen, "out of memory"), -1;
	memcpy(*resp, c->in + 5, len);
	*resp_len = len;
	return 0;
}

int grpc_unary(const char *socket_path, const char *method, const uint8_t *req, size_t req_len,
	       uint8_t **resp, size_t *resp_len, int timeout_ms, char *err, size_t errlen)
{
	struct call c = { .grpc_status = -1 };
	nghttp2_session_callbacks *cb;
	nghttp2_session *s = NULL;
	nghttp2_data_provider body = { .read_callback = read_body };
	nghttp2_nv hdrs[] = {
		HDR(":method", "POST"), HDR(":scheme", "http"), HDR(":path", method),
		HDR(":authority", "localhost"), HDR("content-type", "application/grpc"),
		HDR("te", "trailers"), HDR("user-agent", "nvmirage/" NVM_VERSION),
	};
	uint8_t *framed = malloc(req_len + 5);
	int r = -1;

	if (!framed)
		return snprintf(err, errlen, "out of memory"), -1;
	framed[0] = 0;
	framed[1] = (uint8_t)(req_len >> 24), framed[2] = (uint8_t)(req_len >> 16);
	framed[3] = (uint8_t)(req_len >> 8), framed[4] = (uint8_t)req_len;
	memcpy(framed + 5, req, req_len);
	c.out = framed, c.out_len = req_len + 5;
	c.fd = connect_unix(socket_path, err, errlen);
	if (c.fd < 0)
		goto out;
	nghttp2_session_callbacks_new(&cb);
	nghttp2_session_callbacks_set_send_callback(cb, on_send);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
	r = nghttp2_session_client_new(&s, cb, &c);
	nghttp2_session_callbacks_del(cb);
	if (r) {
		snprintf(err, errlen, "HTTP/2: %s", nghttp2_strerror(r));
		r = -1;
		goto out;
	}
	nghttp2_submit_settings(s, NGHTTP2_FLAG_NONE, NULL, 0);
	if (nghttp2_submit_request(s, NULL, hdrs, sizeof(hdrs) / sizeof(hdrs[0]), &body, &c) < 0) {
		snprintf(err, errlen, "HTTP/2: cannot submit the request");
		goto out;
	}
	r = exchange(s, &c, timeout_ms, err, errlen);
	if (!r)
		r = unframe(&c, resp, resp_len, err, errlen);
out:
	if (s)
		nghttp2_session_del(s);
	if (c.fd >= 0)
		close(c.fd);
	free(c.in);
	free(framed);
	return r;
}
