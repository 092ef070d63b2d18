#include "render/rules.h"
#include "render/render.h"

#include <stdio.h>
#include <string.h>

#include "lib/log.h"

#define NVIDIA_MAJOR 195

static struct nvm_rule *add(struct nvm_rules *rs, enum nvm_rule_kind kind, const char *from,
			    const char *name, const char *target, unsigned minor)
{
	static struct nvm_rule spare; /* what a rule past the last slot writes to */
	struct nvm_rule *r = rs->n < NVM_RULES_MAX ? &rs->r[rs->n++] : (rs->dropped++, &spare);

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->major = NVIDIA_MAJOR;
	r->minor = minor;
	r->mode = 0666;
	snprintf(r->from, sizeof(r->from), "%s", from);
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->target, sizeof(r->target), "%s", target);
	return r;
}

/* The paths where the dynamic linker looks for a library its cache has no
 * entry for, in its order (glibc on Debian and Ubuntu; /lib64 and
 * /usr/lib64 elsewhere; /lib and /usr/lib last, where an image has no
 * multiarch directories: the linker skips a directory it found missing),
 * each system directory's glibc-hwcaps subdirectories first. The first it
 * tries is one of /lib's, so a path too long for a rule
 * (/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v4/..., 66 bytes) is
 * never reached and is left out. */
#if defined(__x86_64__)
static const char *const lib_dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					"/lib64", "/usr/lib64", "/lib", "/usr/lib" };
static const char *const hwcaps[] = { "", "/glibc-hwcaps/x86-64-v4", "/glibc-hwcaps/x86-64-v3",
				      "/glibc-hwcaps/x86-64-v2" };
#elif defined(__aarch64__)
static const char *const lib_dirs[] = { "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
					"/lib64", "/usr/lib64", "/lib", "/usr/lib" };
static const char *const hwcaps[] = { "" }; /* glibc has none for arm64 */
#else
static const char *const lib_dirs[] = { "/lib64", "/usr/lib64", "/lib", "/usr/lib" };
static const char *const hwcaps[] = { "" };
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The driver's user space, as the container toolkit puts it into a GPU
 * container: NVML by both names a program asks for (Slurm dlopens the
 * unversioned one first), and nvidia-smi where a shell's PATH finds it. */
static void collect_userspace(struct nvm_rules *rs)
{
	static const char *const names[] = { "libnvidia-ml.so.1", "libnvidia-ml.so" };
	char from[NVM_RULE_FROM_MAX + 16];

	for (unsigned d = 0; d < ARRAY_LEN(lib_dirs); d++)
		for (unsigned h = 0; h < ARRAY_LEN(hwcaps); h++)
			for (unsigned n = 0; n < ARRAY_LEN(names); n++) {
				snprintf(from, sizeof(from), "%s%s/%s", lib_dirs[d], hwcaps[h],
					 names[n]);
				if (strlen(from) < NVM_RULE_FROM_MAX)
					add(rs, NVM_RULE_FILE, from, "l", NVM_TREE_NVML, 0);
			}
	add(rs, NVM_RULE_FILE, "/usr/bin/nvidia-smi", "x", NVM_TREE_SMI, 0)->exec = true;
}

/* The HCAs' classes, driver and modules (render_ib.c), and their device
 * nodes. */
static void collect_infiniband(struct nvm_rules *rs, bool device_nodes)
{
	static const struct { const char *from, *name; } dirs[] = {
		{ "/sys/class/infiniband", "ib" },
		{ "/sys/class/infiniband_verbs", "iv" },
		{ "/sys/class/infiniband_mad", "im" },
		{ "/sys/bus/pci/drivers/mlx5_core", "mc" },
		{ "/sys/module/mlx5_core", "k1" },
		{ "/sys/module/mlx5_ib", "k2" },
		{ "/sys/module/ib_core", "k3" },
		{ "/sys/module/ib_uverbs", "k4" },
		{ "/sys/module/ib_umad", "k5" },
	};

	for (unsigned i = 0; i < ARRAY_LEN(dirs); i++)
		add(rs, NVM_RULE_DIR, dirs[i].from, dirs[i].name, dirs[i].from + 1, 0);
	if (device_nodes)
		add(rs, NVM_RULE_DIR, "/dev/infiniband", "di", "dev/infiniband", 0);
}

static void collect_gpu_nodes(const struct nvm_model *m, struct nvm_rules *rs);

static void collect(const struct nvm_model *m, bool device_nodes, bool userspace,
		    struct nvm_rules *rs)
{
	char from[64], name[8], target[64];

	rs->n = rs->dropped = 0;
	if (userspace)
		collect_userspace(rs);
	add(rs, NVM_RULE_DIR, "/proc/driver/nvidia", "p", "proc/driver/nvidia", 0);
	add(rs, NVM_RULE_DIR, "/sys/bus/pci/devices", "b", "sys/bus/pci/devices", 0);
	add(rs, NVM_RULE_DIR, "/sys/bus/pci/drivers/nvidia", "n", "sys/bus/pci/drivers/nvidia", 0);
	add(rs, NVM_RULE_DIR, "/sys/module/nvidia", "m", "sys/module/nvidia", 0);
	for (unsigned i = 0; i < m->nroots; i++) {
		snprintf(from, sizeof(from), "/sys/devices/%s", m->roots[i].id);
		snprintf(name, sizeof(name), "r%u", i);
		snprintf(target, sizeof(target), "sys/devices/%s", m->roots[i].id);
		add(rs, NVM_RULE_DIR, from, name, target, 0);
	}
	if (device_nodes)
		collect_gpu_nodes(m, rs);
	if (render_has_mig(m))
		add(rs, NVM_RULE_DIR, "/proc/driver/nvidia-caps", "g", "proc/driver/nvidia-caps", 0);
	/* NCCL's PCI walk goes through the buses' class links (pci_bus.c). */
	add(rs, NVM_RULE_DIR, "/sys/class/pci_bus", "q", "sys/class/pci_bus", 0);
	if (m->ib.nhcas)
		collect_infiniband(rs, device_nodes);
}

/* /dev/nvidiaN, nvidiactl, nvidia-modeset, nvidia-uvm(-tools), nvidia-caps. */
static void collect_gpu_nodes(const struct nvm_model *m, struct nvm_rules *rs)
{
	char from[64], name[8], target[64];

	for (unsigned i = 0; i < m->ngpus; i++) {
		snprintf(from, sizeof(from), "/dev/nvidia%u", m->gpus[i].minor);
		snprintf(name, sizeof(name), "%u", m->gpus[i].minor);
		snprintf(target, sizeof(target), "dev/nvidia%u", m->gpus[i].minor);
		add(rs, NVM_RULE_NODE, from, name, target, m->gpus[i].minor);
	}
	add(rs, NVM_RULE_NODE, "/dev/nvidiactl", "c", "dev/nvidiactl", 255);
	add(rs, NVM_RULE_NODE, "/dev/nvidia-modeset", "s", "dev/nvidia-modeset", 254);
	/* What a real node has besides (see render_devices). */
	add(rs, NVM_RULE_NODE, "/dev/nvidia-uvm", "u", "dev/nvidia-uvm", 0)->major = m->uvm_major;
	add(rs, NVM_RULE_NODE, "/dev/nvidia-uvm-tools", "t", "dev/nvidia-uvm-tools", 1)->major =
		m->uvm_major;
	add(rs, NVM_RULE_DIR, "/dev/nvidia-caps", "k", "dev/nvidia-caps", 0);
}

/* Bytes the alias needs beyond the root: "/" + name, and for a directory one
 * more for the trailing '/' of an exact match. */
static unsigned alias_extra(const struct nvm_rule *r)
{
	return 1 + (unsigned)strlen(r->name) + (r->kind == NVM_RULE_DIR);
}

unsigned rules_max_root_len(const struct nvm_model *m, bool device_nodes, bool userspace)
{
	static struct nvm_rules rs;
	unsigned best = NVM_RULE_FROM_MAX;

	collect(m, device_nodes, userspace, &rs);
	for (unsigned i = 0; i < rs.n; i++) {
		unsigned fit = (unsigned)strlen(rs.r[i].from) - alias_extra(&rs.r[i]);

		if (fit < best)
			best = fit;
	}
	return best;
}

int rules_build(const struct nvm_model *m, const char *root, bool device_nodes,
		bool userspace, struct nvm_rules *rs)
{
	size_t rootlen = strlen(root);

	if (root[0] != '/')
		return nvm_err_r(-1, "tree root \"%s\" must be an absolute path", root);
	collect(m, device_nodes, userspace, rs);
	if (rs->dropped)
		return nvm_err_r(-1, "the profile makes %u redirect rules; at most %d are supported",
				 rs->n + rs->dropped, NVM_RULES_MAX);
	/* The kernel side tells a rewritten path by its root: the root must be
	 * neither a redirected path nor inside or above one. */
	for (unsigned i = 0; i < rs->n; i++) {
		const char *from = rs->r[i].from;
		size_t flen = strlen(from);

		if (rootlen <= flen ? !strncmp(from, root, rootlen) &&
					      (from[rootlen] == '/' || from[rootlen] == '\0')
				    : !strncmp(root, from, flen) && root[flen] == '/')
			return nvm_err_r(-1, "tree root %s overlaps the redirected path %s", root,
					 from);
	}
	for (unsigned i = 0; i < rs->n; i++) {
		struct nvm_rule *r = &rs->r[i];
		size_t need = rootlen + alias_extra(r);
		char name[sizeof(r->name)];

		memcpy(name, r->name, sizeof(name));
		snprintf(r->alias, sizeof(r->alias), "%s/%s", root, name);
		if (need > strlen(r->from))
			return nvm_err_r(-1, "rule %s -> %s/%s does not fit: the alias needs %zu "
					     "bytes%s, the path has %zu; use a tree root of at most %u "
					     "characters (this one has %zu)",
					 r->from, root, r->name, need,
					 r->kind == NVM_RULE_DIR ? " (with its trailing '/')" : "",
					 strlen(r->from), rules_max_root_len(m, device_nodes, userspace),
					 rootlen);
	}
	return 0;
}

int rules_match(const struct nvm_rules *rs, const char *path, unsigned *span,
		bool *exact)
{
	char canon[NVM_RULE_FROM_MAX + 1];
	size_t k = 0;

	if (path[0] != '/')
		return -1;
	/* Walk the path, folding "//" and testing each component boundary. */
	for (size_t j = 0;; j++) {
		char c = path[j];

		if ((c == '/' || c == '\0') && k > 1) {
			canon[k] = '\0';
			for (unsigned i = 0; i < rs->n; i++) {
				if (strcmp(rs->r[i].from, canon))
					continue;
				*span = (unsigned)j;
				*exact = path[j + strspn(path + j, "/")] == '\0';
				return (int)i;
			}
		}
		if (c == '\0' || k >= NVM_RULE_FROM_MAX - 1)
			return -1;
		if (c == '/' && k && canon[k - 1] == '/')
			continue;
		canon[k++] = c;
	}
}

unsigned rules_replacement_len(const struct nvm_rule *r, bool exact)
{
	return (unsigned)strlen(r->alias) + (exact && r->kind == NVM_RULE_DIR);
}

int rules_replacement(const struct nvm_rule *r, unsigned span, bool exact, char *out)
{
	size_t alen = strlen(r->alias);
	size_t need = rules_replacement_len(r, exact);
	size_t pad;

	if (need > span)
		return -1;
	pad = span - need;
	memset(out, '/', pad);
	memcpy(out + pad, r->alias, alen);
	if (need > alen)
		out[pad + alen] = '/';
	return 0;
}
