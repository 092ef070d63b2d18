/* The agent's control socket: a unix socket next to the tree root that
 * answers each connection with the agent's status as one JSON line. */
#ifndef NVM_CONTROL_H
#define NVM_CONTROL_H

#include <stddef.h>

int control_listen(const char *path);
/* Reads the status of the agent at path into buf. Returns 0 or -1 (reported). */
int control_query(const char *path, char *buf, size_t len);

#endif
