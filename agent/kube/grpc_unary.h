/* One unary gRPC call over a unix socket: HTTP/2 (nghttp2) without TLS, as
 * the kubelet serves its local APIs. */
#ifndef NVM_GRPC_UNARY_H
#define NVM_GRPC_UNARY_H

#include <stddef.h>
#include <stdint.h>

/* Calls method ("/package.Service/Method") with the encoded request; on
 * success *resp (malloc'd, caller frees) holds the encoded response. Returns
 * 0, or -1 with err saying what failed (connect, HTTP/2, grpc-status). */
int grpc_unary(const char *socket_path, const char *method, const uint8_t *req, size_t req_len,
	       uint8_t **resp, size_t *resp_len, int timeout_ms, char *err, size_t errlen);

#endif
