/* The PCI side of sysfs: device directories under their root complexes,
 * /sys/bus/pci/{devices,drivers/nvidia} and /sys/module/nvidia. Where the
 * tree stands in for a directory the host also has, it links the host's real
 * entries too, so a redirect hides nothing the host has. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "profile/fault.h"
#include "render/render.h"

void render_pci_config_of(const struct render_pci_fn *f, unsigned char cfg[256])
{
	memset(cfg, 0, 256);
	cfg[0x00] = f->vendor & 0xff, cfg[0x01] = f->vendor >> 8;
	cfg[0x02] = f->device & 0xff, cfg[0x03] = f->device >> 8;
	cfg[0x04] = 0x06;                       /* command: memory space, bus master */
	cfg[0x08] = f->revision;
	cfg[0x09] = f->class_code & 0xff;       /* programming interface */
	cfg[0x0a] = (f->class_code >> 8) & 0xff; /* subclass */
	cfg[0x0b] = (f->class_code >> 16) & 0xff; /* class */
	cfg[0x0e] = 0x00;                       /* header type 0 */
	cfg[0x2c] = f->sub_vendor & 0xff, cfg[0x2d] = f->sub_vendor >> 8;
	cfg[0x2e] = f->sub_device & 0xff, cfg[0x2f] = f->sub_device >> 8;
	cfg[0x3c] = f->irq & 0xff;              /* interrupt line */
	cfg[0x3d] = 0x01;                       /* interrupt pin INTA */
}

static void gpu_fn(const struct nvm_gpu *g, struct render_pci_fn *f)
{
	memset(f, 0, sizeof(*f));
	f->bus_id = g->bus_id;
	f->vendor = g->vendor_id;
	f->device = g->device_id;
	f->sub_vendor = g->subsystem_vendor;
	f->sub_device = g->subsystem_device;
	f->class_code = g->class_code;
	f->revision = g->revision;
	f->irq = g->irq;
	f->link_speed = g->link_speed;
	f->link_width = g->link_width;
	f->driver = "nvidia";
}

void render_pci_config(const struct nvm_gpu *g, unsigned char cfg[256])
{
	struct render_pci_fn f;

	/* A GPU that has fallen off the bus answers every config read with
	 * all ones, as the root complex does for a device that is gone
	 * (lspci: "rev ff", "Unknown header type 7f"). */
	if (g->fault.mode == NVM_FAULT_FALLEN) {
		memset(cfg, 0xff, 256);
		return;
	}
	gpu_fn(g, &f);
	render_pci_config_of(&f, cfg);
}

unsigned render_pci_revision(const struct nvm_gpu *g)
{
	unsigned char cfg[256];

	render_pci_config(g, cfg);
	return cfg[0x08];
}

static int read_host_cpus(const char *host, const char *which, struct nvm_cpuset *s)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/%s", host, which);
	if (cpuset_read_file(s, path))
		return nvm_err_r(-1, "cannot read the host's CPUs from %s", path);
	return 0;
}

int render_pci_function(const struct render_pci_fn *f, const unsigned char cfg[256],
			const struct render_pci_ctx *c, int root, const char *dir)
{
	char list[8192], mask[2048], res[1024] = "", driver[64];
	struct nvm_cpuset cpus;
	int numa = c->m->roots[root].numa_node;
	unsigned cls = f->class_code;
	size_t off = 0;

	model_root_cpus(c->m, root, c->clip, &cpus);
	if (cpuset_format_list(&cpus, list, sizeof(list)) < 0 ||
	    cpuset_format_mask(&cpus, c->mask_bits, mask, sizeof(mask)) < 0)
		return nvm_err_r(-1, "%s: CPU affinity too long to print", f->bus_id);
	for (int i = 0; i < 13; i++)
		off += (size_t)snprintf(res + off, sizeof(res) - off,
					"0x%016x 0x%016x 0x%016x\n", 0, 0, 0);
	snprintf(driver, sizeof(driver), "../../../bus/pci/drivers/%s", f->driver);
	if (fs_mkdirs(dir) ||
	    fs_printf(dir, "vendor", "0x%04x\n", f->vendor) ||
	    fs_printf(dir, "device", "0x%04x\n", f->device) ||
	    fs_printf(dir, "subsystem_vendor", "0x%04x\n", f->sub_vendor) ||
	    fs_printf(dir, "subsystem_device", "0x%04x\n", f->sub_device) ||
	    fs_printf(dir, "class", "0x%06x\n", cls) ||
	    fs_printf(dir, "revision", "0x%02x\n", cfg[0x08]) ||
	    fs_printf(dir, "numa_node", "%d\n", numa) ||
	    fs_printf(dir, "local_cpulist", "%s\n", list) ||
	    fs_printf(dir, "local_cpus", "%s\n", mask) ||
	    fs_printf(dir, "irq", "%u\n", f->irq) ||
	    fs_printf(dir, "enable", "1\n") ||
	    fs_printf(dir, "current_link_speed", "%s\n", f->link_speed) ||
	    fs_printf(dir, "max_link_speed", "%s\n", f->link_speed) ||
	    fs_printf(dir, "current_link_width", "%u\n", f->link_width) ||
	    fs_printf(dir, "max_link_width", "%u\n", f->link_width) ||
	    fs_printf(dir, "modalias", "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n",
		      f->vendor, f->device, f->sub_vendor, f->sub_device, (cls >> 16) & 0xff,
		      (cls >> 8) & 0xff, cls & 0xff) ||
	    fs_printf(dir, "uevent",
		      "DRIVER=%s\nPCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\n"
		      "PCI_SLOT_NAME=%s\nMODALIAS=pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X\n",
		      f->driver, cls, f->vendor, f->device, f->sub_vendor, f->sub_device,
		      f->bus_id, f->vendor, f->device, f->sub_vendor, f->sub_device,
		      (cls >> 16) & 0xff, (cls >> 8) & 0xff, cls & 0xff) ||
	    fs_write(dir, "resource", res, off, 0444) ||
	    fs_write(dir, "config", cfg, 256, 0644) ||
	    fs_symlink(driver, dir, "driver") ||
	    fs_symlink("../../../bus/pci", dir, "subsystem"))
		return -1;
	return 0;
}

static int write_device(const struct render_pci_ctx *c, const struct nvm_gpu *g, const char *dir)
{
	struct render_pci_fn f;
	unsigned char cfg[256];

	gpu_fn(g, &f);
	render_pci_config(g, cfg);
	return render_pci_function(&f, cfg, c, g->root, dir);
}

static bool is_mock_device(const struct nvm_model *m, const char *name)
{
	for (unsigned i = 0; i < m->ngpus; i++)
		if (!strcmp(m->gpus[i].bus_id, name))
			return true;
	for (unsigned i = 0; i < m->ib.nhcas; i++)
		if (!strcmp(m->ib.hcas[i].bus_id, name))
			return true;
	return false;
}

/* Links every entry of the host's directory real (as seen under host) into
 * dir, skipping the names the tree provides itself. Entries that are links
 * point at their resolved real path, so they stay valid from inside the tree. */
int render_mirror_host_dir(const struct nvm_model *m, const char *host, const char *real,
			   const char *dir)
{
	char hpath[PATH_MAX], epath[PATH_MAX + 256], target[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(hpath, sizeof(hpath), "%s%s", strcmp(host, "/") ? host : "", real);
	d = opendir(hpath);
	if (!d)
		return 0; /* the host has no such directory: nothing to keep */
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (is_mock_device(m, e->d_name)) {
			nvm_warn("%s/%s exists on the host; the profile's device hides it", real,
				 e->d_name);
			continue;
		}
		snprintf(epath, sizeof(epath), "%s/%s", dir, e->d_name);
		if (!faccessat(AT_FDCWD, epath, F_OK, AT_SYMLINK_NOFOLLOW))
			continue; /* the tree has its own (pci_bus/, with the profile's buses) */
		snprintf(epath, sizeof(epath), "%s/%s", hpath, e->d_name);
		if (e->d_type == DT_LNK) {
			if (!realpath(epath, target))
				continue; /* dangling on the host too */
		} else {
			snprintf(target, sizeof(target), "%s", epath);
		}
		if (fs_symlink(target, dir, e->d_name)) {
			ret = -1;
			break;
		}
	}
	closedir(d);
	return ret;
}

/* GPU i's NVLinks for NVML, in link order: "nvlink_version=5",
 * "nvlink_links=18" (links it has), "nvlink_peers=0009:06:00.0/4 ..." (the
 * first links, to those GPUs), "nvlink_switch=14" (the next, to NVSwitches);
 * the rest are down. Nothing for a profile without NVLink. */
static void nvlink_line(const struct nvm_model *m, unsigned i, char *out, size_t len)
{
	const struct nvm_nvlink *nv = &m->nvlink;
	unsigned used = 0;
	size_t at;

	out[0] = '\0';
	if (!nv->version)
		return;
	at = (size_t)snprintf(out, len, "nvlink_version=%u\nnvlink_links=%u\nnvlink_peers=",
			      nv->version, nv->links);
	for (unsigned j = 0; j < m->ngpus && at < len; j++)
		if (nv->peer[i][j]) {
			at += (size_t)snprintf(out + at, len - at, "%s%s/%u", used ? " " : "",
					       m->gpus[j].bus_id, nv->peer[i][j]);
			used += nv->peer[i][j];
		}
	if (at < len)
		snprintf(out + at, len - at, "\nnvlink_switch=%u\n",
			 nv->switched ? nv->links - used : 0);
}

/* GPU g's MIG for NVML, nothing with MIG off (so such a GPU's file is as
 * before):
 *   mig=CURRENT PENDING
 *   mig_profiles=NAME:ID:SLICES:SIZE:STARTS:MB:SMS:CE:DEC:ENC:JPG:OFA ...
 *   mig_gi=GI_ID:PROFILE_ID:START ...
 *   mig_ci=GI_ID:CI_ID:SLICES:START ...
 * the board's GPU instance profiles (what nvidia-smi mig -lgip lists),
 * then the GPU instances, then their compute instances (START in slices
 * of the GPU instance). */
static size_t mig_line(const struct nvm_gpu *g, char *out, size_t len)
{
	size_t at = 0;

	if (!g->mig.enabled && !g->mig.pending)
		return 0;
	at += (size_t)snprintf(out + at, len - at, "mig=%d %d\nmig_profiles=", g->mig.enabled,
			       g->mig.pending);
	for (const struct nvm_mig_profile *p = g->mig.table; p && p->name && at < len; p++)
		at += (size_t)snprintf(out + at, len - at, "%s%s:%u:%u:%u:%u:%u:%u:%u:%u:%u:%u:%u",
				       p == g->mig.table ? "" : " ", p->name, p->id, p->slices,
				       p->size, p->starts, p->memory_mb, p->sms, p->copy_engines,
				       p->decoders, p->encoders, p->jpegs, p->ofas);
	if (at < len)
		at += (size_t)snprintf(out + at, len - at, "\nmig_gi=");
	for (unsigned k = 0; k < g->mig.ngi && at < len; k++)
		at += (size_t)snprintf(out + at, len - at, "%s%u:%u:%u", k ? " " : "", g->mig.gi[k].id,
				       g->mig.gi[k].profile->id, g->mig.gi[k].start);
	if (at < len)
		at += (size_t)snprintf(out + at, len - at, "\nmig_ci=");
	for (unsigned k = 0, n = 0; k < g->mig.ngi; k++)
		for (unsigned c = 0; c < g->mig.gi[k].nci && at < len; c++, n++)
			at += (size_t)snprintf(out + at, len - at, "%s%u:%u:%u:%u", n ? " " : "",
					       g->mig.gi[k].id, g->mig.gi[k].ci[c].id,
					       g->mig.gi[k].ci[c].slices, g->mig.gi[k].ci[c].start);
	if (at < len)
		at += (size_t)snprintf(out + at, len - at, "\n");
	return at < len ? at : len;
}

size_t render_nvml_gpu_text(const struct nvm_model *m, unsigned i, char *buf, size_t len)
{
	const struct nvm_gpu *g = &m->gpus[i];
	char links[NVM_MAX_GPUS * 20];
	size_t at;

	nvlink_line(m, i, links, sizeof(links));
	at = (size_t)snprintf(buf, len,
			      "index=%u\nname=%s\nbrand=%s\narchitecture=%s\nserial=%s\n"
			      "board_part_number=%s\nmemory_total=%llu\nmemory_reserved=%llu\n"
			      "cc_major=%u\ncc_minor=%u\n%s",
			      g->index, g->name, g->brand, g->architecture, g->serial,
			      g->board_part_number, (unsigned long long)g->memory_total,
			      (unsigned long long)g->memory_reserved, g->cc_major, g->cc_minor, links);
	if (at < len)
		at += mig_line(g, buf + at, len - at);
	return at < len ? at : len;
}

size_t render_gpu_state_text(const struct nvm_gpu *g, char *buf, size_t len)
{
	const struct nvm_fault *f = &g->fault;
	size_t at = (size_t)snprintf(buf, len, "mode=%s\necc_errors=%u\necc_pending=%d\nxids=",
				     fault_mode_name(f->mode), f->ecc_errors, f->ecc_pending);

	for (unsigned k = 0; k < f->nxids && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, "%s%llu:%u", k ? " " : "",
				       (unsigned long long)f->xids[k].seq, f->xids[k].code);
	if (at < len)
		at += (size_t)snprintf(buf + at, len - at, "\n");
	return at < len ? at : len - 1;
}

/* What NVML reports and no driver file carries (memory, architecture, ...),
 * for nvmirage's libnvidia-ml. It lives under sys/module/nvidia, a redirected
 * path, so only processes that see the profile's driver files see it. */
static int render_nvml_extras(const struct nvm_model *m, const char *tree)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/sys/module/nvidia/nvmirage", tree);
	if (fs_mkdirs(dir) ||
	    fs_printf(dir, "system", "cuda_version=%s\nnvml_version=%s\n", m->cuda_version,
		      m->nvml_version))
		return -1;
	for (unsigned i = 0; i < m->ngpus; i++) {
		const struct nvm_gpu *g = &m->gpus[i];
		char text[NVM_NVML_TEXT], state[1024], name[64];
		size_t n = render_nvml_gpu_text(m, i, text, sizeof(text));

		if (n >= sizeof(text) - 1)
			return nvm_err_r(-1, "%s/%s: NVML's file of the GPU is too long", dir, g->bus_id);
		if (fs_write(dir, g->bus_id, text, n, 0444))
			return -1;
		snprintf(name, sizeof(name), "%s.state", g->bus_id);
		if (fs_write(dir, name, state, render_gpu_state_text(g, state, sizeof(state)), 0444))
			return -1;
		if (g->tel.present) {
			char tel[8192];

			snprintf(name, sizeof(name), "%s.telemetry", g->bus_id);
			if (fs_write(dir, name, tel, render_telemetry_text(g, tel, sizeof(tel)), 0444))
				return -1;
		}
	}
	return 0;
}

int render_pci_links(const char *tree, const char *rc, const char *bus_id, const char *driver)
{
	char dir[PATH_MAX], target[256];

	snprintf(target, sizeof(target), "../../../devices/%s/%s", rc, bus_id);
	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices", tree);
	if (fs_symlink(target, dir, bus_id))
		return -1;
	snprintf(target, sizeof(target), "../../../../devices/%s/%s", rc, bus_id);
	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/drivers/%s", tree, driver);
	return fs_mkdirs(dir) || fs_symlink(target, dir, bus_id) ? -1 : 0;
}

int render_sysfs(const struct nvm_model *m, const struct render_opts *o,
		 const char *tree)
{
	char dir[PATH_MAX], devdir[PATH_MAX + 64], real[64];
	struct nvm_cpuset online, possible, all;
	struct render_pci_ctx ctx = { .m = m };
	const struct nvm_cpuset *clip = NULL;
	unsigned mask_bits;

	cpuset_clear(&all);
	for (unsigned r = 0; r < m->nroots; r++)
		for (unsigned w = 0; w < NVM_MAX_CPUS / 64; w++)
			all.bits[w] |= m->roots[r].cpus.bits[w];
	mask_bits = cpuset_span(&all);
	if (o->clip_cpus) {
		if (read_host_cpus(o->host, "online", &online) ||
		    read_host_cpus(o->host, "possible", &possible))
			return -1;
		clip = &online;
		/* The kernel sizes local_cpus by the CPUs it could have. */
		mask_bits = cpuset_span(&possible);
	}
	ctx.clip = clip;
	ctx.mask_bits = mask_bits;
	if (render_pci_buses(m, o->host, tree))
		return -1;

	for (unsigned r = 0; r < m->nroots; r++) {
		snprintf(dir, sizeof(dir), "%s/sys/devices/%s", tree, m->roots[r].id);
		if (fs_mkdirs(dir))
			return -1;
		snprintf(real, sizeof(real), "/sys/devices/%s", m->roots[r].id);
		if (render_mirror_host_dir(m, o->host, real, dir))
			return -1;
	}
	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/drivers/nvidia", tree);
	if (fs_mkdirs(dir))
		return -1;
	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices", tree);
	if (fs_mkdirs(dir) || render_mirror_host_dir(m, o->host, "/sys/bus/pci/devices", dir))
		return -1;

	for (unsigned i = 0; i < m->ngpus; i++) {
		const struct nvm_gpu *g = &m->gpus[i];
		const char *rc = m->roots[g->root].id;

		snprintf(devdir, sizeof(devdir), "%s/sys/devices/%s/%s", tree, rc, g->bus_id);
		if (write_device(&ctx, g, devdir) || render_pci_links(tree, rc, g->bus_id, "nvidia"))
			return -1;
	}
	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/drivers/nvidia", tree);
	if (fs_symlink("../../../../module/nvidia", dir, "module"))
		return -1;
	snprintf(dir, sizeof(dir), "%s/sys/module/nvidia", tree);
	if (fs_mkdirs(dir) || fs_printf(dir, "version", "%s\n", m->driver_version) ||
	    fs_printf(dir, "initstate", "live\n") || render_ib(&ctx, tree))
		return -1;
	return render_nvml_extras(m, tree);
}
