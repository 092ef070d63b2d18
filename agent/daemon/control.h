/* The agent's control socket: a unix socket next to the tree root. A
 * client writes one request line, JSON ({"op": "status"}, {"op": "fault",
 * "gpu": "0", "mode": "lost", "xid": 0}), closes its writing side and reads
 * one JSON line back. A client that writes nothing gets the status. Anyone
 * who can open the socket may ask the status; only root may change
 * anything (the peer's credentials decide). */
#ifndef NVM_CONTROL_H
#define NVM_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

/* Listens at path, mode 0666: the status is for anyone. */
int control_listen(const char *path);
/* The request line of a connection just accepted into buf (empty if the
 * client sent none within a moment), and whether the peer is root. */
void control_read_request(int fd, char *buf, size_t len, bool *root);
/* Sends request to the agent at path and reads its whole answer (the
 * status grows with the targets): the caller frees it. NULL: reported. */
char *control_request(const char *path, const char *request);
/* The status of the agent at path. */
char *control_query(const char *path);

#endif
