/* MIG layout changes on a running agent (nvmirage mig, through the control
 * socket): the model changes, the tree follows. */
#ifndef NVM_DAEMON_MIG_H
#define NVM_DAEMON_MIG_H

#include <json-c/json.h>

#include "daemon/agent.h"

/* action "create" (list: profiles, see mig_create) or "destroy" (list: GPU
 * instance ids or "all") on the GPU gpu names, rendered. Returns 0, or -1
 * with why set (nothing changed). */
int agent_mig(struct agent *a, const char *gpu, const char *action, const char *list, char *why,
	      size_t len);
/* Each GPU with MIG on and its GPU instances, for the status. */
json_object *agent_mig_json(const struct agent *a);

#endif
