/* RDMA netlink against the profile's HCAs (rdma_netlink.c). */
#ifndef NVM_RDMA_NETLINK_H
#define NVM_RDMA_NETLINK_H

#include <stdbool.h>

#include "profile/model.h"

/* Whether the engine must fail the targets' NETLINK_RDMA sockets (with a
 * BPF LSM program, which it checks attaches here); logs what was chosen
 * and why. */
bool agent_no_rdma_netlink(const struct nvm_model *m);

#endif
