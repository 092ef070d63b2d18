/* One device of a profile: its own keys, else device_defaults'. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "profile/profile_int.h"

/* A device key: its own value if it has one, else device_defaults'. */
struct devctx {
	struct ydoc *y;
	yaml_node_t *dev, *defaults;
	unsigned i;
};

static yaml_node_t *dev_key(struct devctx *c, const char *section,
			    const char *key, char *path, size_t plen)
{
	yaml_node_t *sources[2] = { c->dev, c->defaults };

	for (int s = 0; s < 2; s++) {
		yaml_node_t *n = sources[s];

		if (section)
			n = ydoc_get(c->y, n, section);
		n = ydoc_get(c->y, n, key);
		if (n) {
			if (s == 0)
				snprintf(path, plen, "devices[%u].%s%s%s", c->i,
					 section ? section : "", section ? "." : "", key);
			else
				snprintf(path, plen, "device_defaults.%s%s%s",
					 section ? section : "", section ? "." : "", key);
			return n;
		}
	}
	snprintf(path, plen, "devices[%u].%s%s%s", c->i, section ? section : "",
		 section ? "." : "", key);
	return NULL;
}

static int dev_str(struct devctx *c, const char *section, const char *key,
		   bool required, char *buf, size_t len, const char *dflt)
{
	char path[128];
	yaml_node_t *n = dev_key(c, section, key, path, sizeof(path));

	if (!n) {
		if (required)
			return ydoc_fail(c->y, c->dev, path, "missing (required)");
		snprintf(buf, len, "%s", dflt);
		return 0;
	}
	return ydoc_str(c->y, n, path, buf, len);
}

static int dev_uint(struct devctx *c, const char *section, const char *key,
		    uint64_t max, uint64_t dflt, bool required, uint64_t *out)
{
	char path[128];
	yaml_node_t *n = dev_key(c, section, key, path, sizeof(path));

	if (!n) {
		if (required)
			return ydoc_fail(c->y, c->dev, path, "missing (required)");
		*out = dflt;
		return 0;
	}
	return ydoc_uint(c->y, n, path, max, out);
}

/* DDDD:BB:DD.F in hex, any case; stored lower-case. Rejects anything else
 * (so no '/' or ".." can reach a path). */
int parse_bus_id(const char *s, struct nvm_gpu *g)
{
	static const char form[] = "hhhh:hh:hh.h";
	unsigned d, b, dev, f;

	if (strlen(s) != sizeof(form) - 1)
		return -1;
	for (size_t i = 0; form[i]; i++) {
		if (form[i] == 'h' ? !isxdigit((unsigned char)s[i]) : s[i] != form[i])
			return -1;
	}
	if (sscanf(s, "%4x:%2x:%2x.%1x", &d, &b, &dev, &f) != 4 || dev > 0x1f || f > 7)
		return -1;
	g->domain = d, g->bus = b, g->device = dev, g->function = f;
	snprintf(g->bus_id, sizeof(g->bus_id), "%04x:%02x:%02x.%x", d, b, dev, f);
	return 0;
}

static bool valid_uuid(const char *s)
{
	static const char form[] = "GPU-hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh";

	if (strlen(s) != sizeof(form) - 1)
		return false;
	for (size_t i = 0; form[i]; i++)
		if (form[i] == 'h' ? !isxdigit((unsigned char)s[i]) : s[i] != form[i])
			return false;
	return true;
}

/* A stable UUID for a profile without one, derived from the bus id. */
static void derive_uuid(const struct nvm_gpu *g, char *buf, size_t len)
{
	uint64_t h = 1469598103934665603ULL, h2;

	for (const char *p = g->bus_id; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h2 = h * 0x9e3779b97f4a7c15ULL;
	snprintf(buf, len, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(h >> 32),
		 (unsigned)(h >> 16) & 0xffff, (unsigned)h & 0xffff,
		 (unsigned)(h2 >> 48), (unsigned long long)(h2 & 0xffffffffffffULL));
}

/* Who the device is: names, bus id, minor, UUID. */
static int parse_identity(struct devctx *c, struct nvm_gpu *g)
{
	struct ydoc *y = c->y;
	char path[128], bus[32];
	uint64_t v;
	yaml_node_t *n;

	if (dev_uint(c, NULL, "index", NVM_MAX_GPUS - 1, c->i, false, &v))
		return -1;
	g->index = (unsigned)v;
	if (dev_str(c, NULL, "name", true, g->name, sizeof(g->name), "") ||
	    dev_str(c, NULL, "brand", false, g->brand, sizeof(g->brand), "NVIDIA") ||
	    dev_str(c, NULL, "architecture", false, g->architecture,
		    sizeof(g->architecture), "") ||
	    dev_str(c, NULL, "serial", false, g->serial, sizeof(g->serial), "") ||
	    dev_str(c, NULL, "board_part_number", false, g->board_part_number,
		    sizeof(g->board_part_number), "") ||
	    dev_str(c, NULL, "vbios_version", false, g->vbios_version,
		    sizeof(g->vbios_version), "96.00.00.00.01"))
		return -1;

	if (dev_str(c, "pci", "bus_id", true, bus, sizeof(bus), ""))
		return -1;
	if (parse_bus_id(bus, g)) {
		n = dev_key(c, "pci", "bus_id", path, sizeof(path));
		return ydoc_fail(y, n, path,
				 "\"%s\" is not a PCI address of the form DDDD:BB:DD.F (hex)", bus);
	}
	if (dev_uint(c, NULL, "minor_number", UINT32_MAX, 0, true, &v))
		return -1;
	if (v > NVM_MAX_MINOR) {
		n = dev_key(c, NULL, "minor_number", path, sizeof(path));
		return ydoc_fail(y, n, path, "%llu is outside 0..%d",
				 (unsigned long long)v, NVM_MAX_MINOR);
	}
	g->minor = (unsigned)v;

	n = dev_key(c, NULL, "uuid", path, sizeof(path));
	if (!n) {
		derive_uuid(g, g->uuid, sizeof(g->uuid));
		return 0;
	}
	if (ydoc_str(y, n, path, g->uuid, sizeof(g->uuid)))
		return -1;
	if (!valid_uuid(g->uuid))
		return ydoc_fail(y, n, path,
				 "\"%s\" is not GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", g->uuid);
	return 0;
}

/* What the PCI bus shows of it: ids, class, revision, link. */
static int parse_pci(struct devctx *c, struct nvm_gpu *g)
{
	uint64_t v;

	/* (device << 16) | vendor, as Mokka writes them. */
	if (dev_uint(c, "pci", "device_id", UINT32_MAX, 0, true, &v))
		return -1;
	g->device_id = (uint16_t)(v >> 16);
	g->vendor_id = (uint16_t)v;
	if (dev_uint(c, "pci", "subsystem_id", UINT32_MAX,
		     ((uint64_t)g->device_id << 16) | g->vendor_id, false, &v))
		return -1;
	g->subsystem_device = (uint16_t)(v >> 16);
	g->subsystem_vendor = (uint16_t)v;
	if (dev_uint(c, "pci", "class_code", 0xffffff, 0x030200, false, &v))
		return -1;
	g->class_code = (uint32_t)v;
	if (dev_uint(c, "pci", "revision", 0xff, 0xa1, false, &v))
		return -1;
	g->revision = (uint8_t)v;
	if (dev_uint(c, "pci", "link_width", 32, 16, false, &v))
		return -1;
	g->link_width = (unsigned)v;
	return dev_str(c, "pci", "link_speed", false, g->link_speed, sizeof(g->link_speed),
		       "32.0 GT/s PCIe");
}

/* What the driver and NVML report besides: compute capability, memory,
 * IRQ, DMA width, GSP firmware. */
static int parse_driver_view(struct devctx *c, const char *driver, struct nvm_gpu *g)
{
	char mode[32];
	uint64_t v;

	if (dev_uint(c, "compute_capability", "major", 99, 0, false, &v))
		return -1;
	g->cc_major = (unsigned)v;
	if (dev_uint(c, "compute_capability", "minor", 99, 0, false, &v))
		return -1;
	g->cc_minor = (unsigned)v;
	if (dev_uint(c, "memory", "total_bytes", UINT64_MAX, 0, false, &g->memory_total) ||
	    dev_uint(c, "memory", "reserved_bytes", UINT64_MAX, 0, false,
		     &g->memory_reserved))
		return -1;
	if (dev_uint(c, NULL, "irq", 1023, 0, false, &v))
		return -1;
	g->irq = v ? (unsigned)v : 150 + g->minor; /* plausible MSI vector */
	if (dev_uint(c, NULL, "dma_bits", 64, 52, false, &v))
		return -1;
	g->dma_bits = (unsigned)v;

	/* GSP firmware line: only when the profile says firmware is in use. */
	if (dev_str(c, "gsp_firmware", "mode", false, mode, sizeof(mode), "") ||
	    dev_str(c, "gsp_firmware", "version", false, g->gsp_firmware,
		    sizeof(g->gsp_firmware), ""))
		return -1;
	if (!strcasecmp(mode, "disabled") || !strcasecmp(mode, "off"))
		g->gsp_firmware[0] = '\0';
	else if (!g->gsp_firmware[0] && mode[0])
		snprintf(g->gsp_firmware, sizeof(g->gsp_firmware), "%s", driver);
	return 0;
}

int parse_device(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults, unsigned i,
		 const char *driver, struct nvm_gpu *g)
{
	struct devctx c = { y, dev, defaults, i };

	memset(g, 0, sizeof(*g));
	g->line = (int)dev->start_mark.line + 1;
	g->col = (int)dev->start_mark.column + 1;
	g->root = -1;
	if (!ydoc_is_map(dev))
		return ydoc_fail(y, dev, "devices", "each device must be a mapping");
	if (parse_identity(&c, g) || parse_pci(&c, g) || parse_driver_view(&c, driver, g))
		return -1;
	return 0;
}
