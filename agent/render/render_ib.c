/* The profile's InfiniBand HCAs as a node with mlx5 has them in sysfs
 * (the kernel's formats: drivers/infiniband/core/sysfs.c, hw/mlx5):
 *
 *   devices/<root>/<bdf>/                      the PCI function (mlx5_core)
 *     infiniband/mlx5_N/{node_type,node_guid,...,ports/1/...}
 *     infiniband_verbs/uverbsN/{ibdev,abi_version,dev}    231:192+N
 *     infiniband_mad/{umadN,issmN}/{ibdev,port,dev}        231:N, 231:64+N
 *   class/infiniband/mlx5_N -> ../../devices/<root>/<bdf>/infiniband/mlx5_N
 *   class/infiniband_verbs/{abi_version,uverbsN}, class/infiniband_mad/...
 *   bus/pci/drivers/mlx5_core/, module/{mlx5_core,mlx5_ib,ib_core,...}
 *
 * hwloc follows the class links to the PCI function, NCCL takes the
 * realpath of each device link, rdmamap wants the class entries to be
 * links, libibverbs and libibumad read the attributes. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "lib/fsutil.h"
#include "render/render.h"

#define MELLANOX 0x15b3
#define IB_MAJOR 231       /* uverbs from minor 192, umad from 0, issm from 64 */
#define UVERBS_BASE 192
#define ISSM_BASE 64
#define GIDS 16            /* table entries written; the rest of a real table is zero too */

static const char *const port_states[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					   "ACTIVE_DEFER" };
static const char *const phys_states[] = { "", "Sleep", "Polling", "Disabled",
					   "PortConfigurationTraining", "LinkUp",
					   "LinkErrorRecovery", "Phy Test" };
static const char *const counters[] = {
	"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
	"port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
	"port_xmit_constraint_errors", "port_rcv_constraint_errors",
	"local_link_integrity_errors", "excessive_buffer_overrun_errors", "VL15_dropped",
	"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets",
	"port_xmit_wait", "unicast_xmit_packets", "unicast_rcv_packets",
	"multicast_xmit_packets", "multicast_rcv_packets",
};
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* "400 Gb/sec (4X NDR)", as the kernel's rate attribute prints a 4X port. */
static void rate_text(unsigned gbps, char *out, size_t len)
{
	static const struct { unsigned gbps; const char *name; } names[] = {
		{ 10, "SDR" }, { 20, "DDR" }, { 40, "QDR" }, { 56, "FDR" },
		{ 100, "EDR" }, { 200, "HDR" }, { 400, "NDR" }, { 800, "XDR" },
	};
	const char *name = "";

	for (unsigned i = 0; i < ARRAY_LEN(names); i++)
		if (names[i].gbps == gbps)
			name = names[i].name;
	snprintf(out, len, "%u Gb/sec (4X%s%s)\n", gbps, *name ? " " : "", name);
}

/* A GUID as node_guid prints it: "9c63:c003:005b:1e14". */
static void guid_text(uint64_t g, char *out, size_t len)
{
	snprintf(out, len, "%04x:%04x:%04x:%04x\n", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

/* The PCIe link an HCA of this generation trains at. */
static const char *link_speed(unsigned device_id)
{
	return device_id >= 4129 ? "32.0 GT/s PCIe" : device_id >= 4123 ? "16.0 GT/s PCIe"
									 : "8.0 GT/s PCIe";
}

void render_hca_port_state(const struct nvm_infiniband *ib, const struct nvm_hca *h, char *state,
			   size_t slen, char *phys, size_t plen)
{
	/* port-down: DOWN and Disabled, as a port with its cable pulled. */
	unsigned s = h->port_down ? 1 : ib->port_state, p = h->port_down ? 3 : ib->phys_state;

	snprintf(state, slen, "%u: %s\n", s, port_states[s]);
	snprintf(phys, plen, "%u: %s\n", p, phys_states[p]);
}

static int write_port(const struct nvm_infiniband *ib, const struct nvm_hca *h, const char *dev)
{
	char port[PATH_MAX], sub[PATH_MAX + 16], rate[48], name[16], state[64], phys[64];
	unsigned g0 = (unsigned)(h->guid >> 32), g1 = (unsigned)h->guid;

	snprintf(port, sizeof(port), "%s/ports/1", dev);
	rate_text(ib->rate_gbps, rate, sizeof(rate));
	render_hca_port_state(ib, h, state, sizeof(state), phys, sizeof(phys));
	if (fs_mkdirs(port) || fs_printf(port, "state", "%s", state) ||
	    fs_printf(port, "phys_state", "%s", phys) ||
	    fs_printf(port, "rate", "%s", rate) ||
	    fs_printf(port, "lid", "0x%x\n", ib->ethernet ? 0 : h->lid) ||
	    fs_printf(port, "sm_lid", "0x%x\n", ib->ethernet ? 0 : 1) ||
	    fs_printf(port, "lid_mask_count", "0\n") || fs_printf(port, "sm_sl", "0\n") ||
	    /* A ConnectX-7's on InfiniBand; RoCE's on Ethernet. */
	    fs_printf(port, "cap_mask", "0x%08x\n", ib->ethernet ? 0x04010000u : 0xa751e848u) ||
	    fs_printf(port, "link_layer", "%s\n", ib->ethernet ? "Ethernet" : "InfiniBand"))
		return -1;
	snprintf(sub, sizeof(sub), "%s/gids", port);
	for (unsigned i = 0; i < GIDS; i++) {
		snprintf(name, sizeof(name), "%u", i);
		if ((i == 0 && (fs_mkdirs(sub) ||
				fs_printf(sub, name, "fe80:0000:0000:0000:%04x:%04x:%04x:%04x\n",
					  g0 >> 16, g0 & 0xffff, g1 >> 16, g1 & 0xffff))) ||
		    (i && fs_printf(sub, name, "0000:0000:0000:0000:0000:0000:0000:0000\n")))
			return -1;
	}
	snprintf(sub, sizeof(sub), "%s/pkeys", port);
	for (unsigned i = 0; i < GIDS; i++) {
		snprintf(name, sizeof(name), "%u", i);
		if (fs_mkdirs(sub) || fs_printf(sub, name, "0x%04x\n", i ? 0 : 0xffff))
			return -1;
	}
	snprintf(sub, sizeof(sub), "%s/gid_attrs/types", port);
	for (unsigned i = 0; i < GIDS; i++) {
		snprintf(name, sizeof(name), "%u", i);
		if (fs_mkdirs(sub) || fs_printf(sub, name, "IB/RoCE v1\n"))
			return -1;
	}
	snprintf(sub, sizeof(sub), "%s/counters", port);
	for (unsigned i = 0; i < ARRAY_LEN(counters); i++)
		if (fs_mkdirs(sub) || fs_printf(sub, counters[i], "0\n"))
			return -1;
	return 0;
}

/* devices/<root>/<bdf>/infiniband/mlx5_N; its device link names the
 * function it sits in, as the other class devices' do (devlink). */
static int write_ibdev(const struct nvm_infiniband *ib, const struct nvm_hca *h, const char *fn,
		       const char *devlink)
{
	char dev[PATH_MAX], guid[32];

	snprintf(dev, sizeof(dev), "%s/infiniband/mlx5_%u", fn, h->index);
	guid_text(h->guid, guid, sizeof(guid));
	if (fs_mkdirs(dev) || fs_printf(dev, "node_type", "1: CA\n") ||
	    fs_printf(dev, "node_guid", "%s", guid) || fs_printf(dev, "sys_image_guid", "%s", guid) ||
	    fs_printf(dev, "fw_ver", "%s\n", ib->fw_version) ||
	    fs_printf(dev, "node_desc", "%.64s\n", h->node_desc) ||
	    fs_printf(dev, "hca_type", "MT%u\n", ib->device_id) ||
	    fs_printf(dev, "hw_rev", "%x\n", ib->hw_rev) ||
	    fs_printf(dev, "board_id", "%s\n", ib->board_id) ||
	    fs_printf(dev, "fw_pages", "0\n") || fs_printf(dev, "reg_pages", "0\n") ||
	    fs_printf(dev, "uevent", "NAME=mlx5_%u\n", h->index) ||
	    fs_symlink(devlink, dev, "device") ||
	    fs_symlink("../../../../../class/infiniband", dev, "subsystem"))
		return -1;
	return write_port(ib, h, dev);
}

/* class/<cls>/<name> -> ../../devices/<rc>/<bdf>/<sub>/<name> */
static int class_link(const char *tree, const char *cls, const char *rc, const char *bdf,
		      const char *sub, const char *name)
{
	char dir[PATH_MAX], target[256];

	snprintf(dir, sizeof(dir), "%s/sys/class/%s", tree, cls);
	snprintf(target, sizeof(target), "../../devices/%s/%s/%s/%s", rc, bdf, sub, name);
	return fs_mkdirs(dir) || fs_symlink(target, dir, name) ? -1 : 0;
}

/* A char device of the HCA (uverbs, umad, issm): its class directory in
 * the function fn (ibdev, dev, the links) and its class's link to it. */
static int write_cdev(const char *tree, const char *rc, const char *fn, const struct nvm_hca *h,
		      const char *cls, const char *name, unsigned minor, bool port)
{
	char dir[PATH_MAX + 64], sub[64], devlink[64];

	snprintf(dir, sizeof(dir), "%s/%s/%s", fn, cls, name);
	snprintf(sub, sizeof(sub), "../../../../../class/%s", cls);
	snprintf(devlink, sizeof(devlink), "../../../%s", h->bus_id);
	if (fs_mkdirs(dir) || fs_printf(dir, "ibdev", "mlx5_%u\n", h->index) ||
	    fs_printf(dir, "dev", "%u:%u\n", IB_MAJOR, minor) ||
	    fs_printf(dir, "uevent", "MAJOR=%u\nMINOR=%u\nDEVNAME=infiniband/%s\n", IB_MAJOR, minor,
		      name) ||
	    (port && fs_printf(dir, "port", "1\n")) ||
	    (!port && fs_printf(dir, "abi_version", "1\n")) ||
	    fs_symlink(devlink, dir, "device") || fs_symlink(sub, dir, "subsystem"))
		return -1;
	return class_link(tree, cls, rc, h->bus_id, cls, name);
}

static int write_hca(const struct render_pci_ctx *c, const struct nvm_hca *h, const char *tree)
{
	const struct nvm_infiniband *ib = &c->m->ib;
	int root = c->m->gpus[h->gpu].root;
	const char *rc = c->m->roots[root].id;
	char fn[PATH_MAX], name[32], devlink[64];
	struct render_pci_fn f = {
		.bus_id = h->bus_id, .vendor = MELLANOX, .device = (uint16_t)ib->device_id,
		.sub_vendor = MELLANOX, .sub_device = 0x0026,
		.class_code = ib->ethernet ? 0x020000 : 0x020700, .revision = (uint8_t)ib->hw_rev,
		.irq = 64 + h->index, .link_speed = link_speed(ib->device_id), .link_width = 16,
		.driver = "mlx5_core",
	};
	unsigned char cfg[256];

	snprintf(fn, sizeof(fn), "%s/sys/devices/%s/%s", tree, rc, h->bus_id);
	snprintf(devlink, sizeof(devlink), "../../../%s", h->bus_id);
	render_pci_config_of(&f, cfg);
	if (render_pci_function(&f, cfg, c, root, fn) ||
	    render_pci_links(tree, rc, h->bus_id, "mlx5_core") || write_ibdev(ib, h, fn, devlink))
		return -1;
	snprintf(name, sizeof(name), "uverbs%u", h->index);
	if (write_cdev(tree, rc, fn, h, "infiniband_verbs", name, UVERBS_BASE + h->index, false))
		return -1;
	snprintf(name, sizeof(name), "umad%u", h->index);
	if (write_cdev(tree, rc, fn, h, "infiniband_mad", name, h->index, true))
		return -1;
	snprintf(name, sizeof(name), "issm%u", h->index);
	if (write_cdev(tree, rc, fn, h, "infiniband_mad", name, ISSM_BASE + h->index, true))
		return -1;
	snprintf(name, sizeof(name), "mlx5_%u", h->index);
	return class_link(tree, "infiniband", rc, h->bus_id, "infiniband", name);
}

/* The driver and the modules a node with mlx5 HCAs has loaded. */
static int write_driver(const char *tree)
{
	static const char *const modules[] = { "mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs",
					       "ib_umad" };
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/drivers/mlx5_core", tree);
	if (fs_mkdirs(dir) || fs_write(dir, "bind", "", 0, 0200) ||
	    fs_write(dir, "unbind", "", 0, 0200) || fs_write(dir, "new_id", "", 0, 0200) ||
	    fs_write(dir, "remove_id", "", 0, 0200) || fs_write(dir, "uevent", "", 0, 0200) ||
	    fs_symlink("../../../../module/mlx5_core", dir, "module"))
		return -1;
	for (unsigned i = 0; i < ARRAY_LEN(modules); i++) {
		snprintf(dir, sizeof(dir), "%s/sys/module/%s", tree, modules[i]);
		if (fs_mkdirs(dir) || fs_printf(dir, "initstate", "live\n") ||
		    fs_printf(dir, "refcnt", "0\n"))
			return -1;
	}
	snprintf(dir, sizeof(dir), "%s/sys/module/mlx5_core/drivers", tree);
	return fs_mkdirs(dir) ||
			       fs_symlink("../../../bus/pci/drivers/mlx5_core", dir, "pci:mlx5_core")
		       ? -1
		       : 0;
}

int render_ib(const struct render_pci_ctx *c, const char *tree)
{
	char dir[PATH_MAX];

	if (!c->m->ib.nhcas)
		return 0;
	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband_verbs", tree);
	if (fs_mkdirs(dir) || fs_printf(dir, "abi_version", "6\n"))
		return -1;
	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband_mad", tree);
	if (fs_mkdirs(dir) || fs_printf(dir, "abi_version", "5\n"))
		return -1;
	for (unsigned i = 0; i < c->m->ib.nhcas; i++)
		if (write_hca(c, &c->m->ib.hcas[i], tree))
			return -1;
	return write_driver(tree);
}
