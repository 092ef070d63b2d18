/* GPU faults on a running agent (nvmirage fault, through the control
 * socket): the model changes, the tree follows. */
#ifndef NVM_DAEMON_FAULTS_H
#define NVM_DAEMON_FAULTS_H

#include <json-c/json.h>

#include "daemon/agent.h"

/* Applies fault mode (see fault_apply) to the GPU gpu names and renders
 * it. Returns 0, or -1 with why set (nothing changed). */
int agent_fault(struct agent *a, const char *gpu, const char *mode, unsigned xid, char *why,
		size_t len);
/* The faults in force, for the status: one object per GPU that has any. */
json_object *agent_faults_json(const struct agent *a);

#endif
