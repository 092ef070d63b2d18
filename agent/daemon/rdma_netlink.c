/* Whether the targets' libibverbs can see the profile's HCAs, and what the
 * agent does for it. libibverbs lists devices through the kernel's RDMA
 * netlink first and reads sysfs only when that socket cannot be had. On a
 * kernel without ib_core the socket fails (EPROTONOSUPPORT) and sysfs,
 * where the HCAs are, is read; on one with ib_core (loaded, or loadable:
 * the first such socket loads it) the socket works and lists no HCA. There
 * the agent fails a target's socket itself, where BPF LSM attaches. */
#include "daemon/rdma_netlink.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "engine/probe.h"
#include "lib/log.h"

/* ib_core is loaded, or installed where modprobe would find it. */
static bool kernel_has_ib_core(void)
{
	char path[512], line[1024];
	struct utsname u;
	bool found = false;
	FILE *f;

	if (!access("/sys/module/ib_core", F_OK))
		return true;
	uname(&u);
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.dep", u.release);
	if (!(f = fopen(path, "r")))
		return false;
	/* "kernel/drivers/infiniband/core/ib_core.ko.xz: deps..." */
	while (!found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, ":")] = '\0';
		found = strstr(line, "/ib_core.ko") != NULL;
	}
	fclose(f);
	return found;
}

bool agent_no_rdma_netlink(const struct nvm_model *m)
{
	struct probe_item lsm;

	if (!m->ib.nhcas)
		return false;
	if (!kernel_has_ib_core()) {
		nvm_info("InfiniBand: %u HCAs; this kernel has no ib_core (neither loaded nor "
			 "installed), so a target's RDMA netlink socket fails and libibverbs reads "
			 "sysfs, where they are", m->ib.nhcas);
		return false;
	}
	probe_lsm(&lsm);
	if (lsm.ok) {
		nvm_info("InfiniBand: %u HCAs; this kernel has ib_core, whose RDMA netlink would "
			 "list none: a target's socket(AF_NETLINK, NETLINK_RDMA) fails with "
			 "EPROTONOSUPPORT (BPF LSM socket_create), so libibverbs reads sysfs",
			 m->ib.nhcas);
		return true;
	}
	nvm_warn("InfiniBand: %u HCAs, but this kernel has ib_core and no BPF LSM (%s): a "
		 "target's libibverbs asks RDMA netlink, which lists none (ibv_devices: 0 HCAs "
		 "found); ibstat, ibstatus, lstopo and sysfs readers see them", m->ib.nhcas,
		 lsm.why);
	return false;
}
