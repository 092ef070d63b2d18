/* A GPU as the driver files describe it: /proc/driver/nvidia/gpus/<bdf>/
 * information, the PCI device's sysfs attributes, and what no driver file
 * carries (memory, architecture, serial, NVLinks) from
 * /sys/module/nvidia/nvmirage/<bdf>, which the tree provides under the same
 * redirect. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

int nvml_read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

/* "Key:<whitespace>value" lines of an information file. */
static void info_value(const char *text, const char *key, char *out, size_t len)
{
	const char *p = strstr(text, key);

	out[0] = '\0';
	if (!p)
		return;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
}

void nvml_extra_value(const char *text, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *p = text;

	out[0] = '\0';
	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			p += klen + 1;
			snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
			return;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

static unsigned sysfs_hex(const char *bdf, const char *attr)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", bdf, attr);
	return nvml_read_text(path, buf, sizeof(buf)) ? 0 : (unsigned)strtoul(buf, NULL, 16);
}

/* Where the GPU hangs in the PCIe tree: its sysfs link's target below
 * devices/, root complex first (topology.c compares two). */
static void read_pci_path(struct nvmlDevice_st *d)
{
	char link[PATH_MAX], target[PATH_MAX];
	ssize_t n;
	const char *at;

	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s", d->bus_id);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return;
	target[n] = '\0';
	at = strstr(target, "devices/");
	snprintf(d->pci_path, sizeof(d->pci_path), "%s", at ? at + strlen("devices/") : "");
}

/* local_cpulist ("0-71,144-215") into d->cpus. */
static void read_cpus(struct nvmlDevice_st *d)
{
	char path[256], buf[4096], *p;

	memset(d->cpus, 0, sizeof(d->cpus));
	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/nvidia/%s/local_cpulist", d->bus_id);
	if (nvml_read_text(path, buf, sizeof(buf)))
		return;
	for (p = buf; *p && *p != '\n';) {
		unsigned long a = strtoul(p, &p, 10), b = a;

		if (*p == '-')
			b = strtoul(p + 1, &p, 10);
		for (unsigned long c = a; c <= b && c < MAX_CPUS; c++)
			d->cpus[c / 8] |= (unsigned char)(1u << (c % 8));
		if (*p == ',')
			p++;
		else
			break;
	}
}

/* The NVLinks, in link order: "nvlink_peers=0009:06:00.0/4 ..." first (the
 * link's far end is that GPU), then nvlink_switch links to NVSwitches, the
 * rest of nvlink_links down. */
static void read_nvlinks(const char *extra, struct nvmlDevice_st *d)
{
	char v[64 * 20], *save = NULL;
	unsigned n = 0;

	nvml_extra_value(extra, "nvlink_version", v, sizeof(v));
	d->nvlink_version = (unsigned)atoi(v);
	nvml_extra_value(extra, "nvlink_links", v, sizeof(v));
	d->nvlink_count = (unsigned)atoi(v);
	if (d->nvlink_count > NVML_NVLINK_MAX_LINKS)
		d->nvlink_count = NVML_NVLINK_MAX_LINKS;
	nvml_extra_value(extra, "nvlink_peers", v, sizeof(v));
	for (char *t = strtok_r(v, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *slash = strchr(t, '/');
		unsigned k = slash ? (unsigned)atoi(slash + 1) : 0;

		if (slash)
			*slash = '\0';
		for (; k && n < d->nvlink_count; k--, n++) {
			d->links[n].up = true;
			snprintf(d->links[n].bus_id, sizeof(d->links[n].bus_id), "%s", t);
		}
	}
	nvml_extra_value(extra, "nvlink_switch", v, sizeof(v));
	for (unsigned k = (unsigned)atoi(v); k && n < d->nvlink_count; k--, n++)
		d->links[n].up = d->links[n].to_switch = true;
}

int nvml_load_device(const char *bdf, struct nvmlDevice_st *d)
{
	char path[256], text[4096], extra[4096], v[128];

	memset(d, 0, sizeof(*d));
	snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%s/information", bdf);
	if (nvml_read_text(path, text, sizeof(text)))
		return -1;
	snprintf(d->bus_id, sizeof(d->bus_id), "%s", bdf);
	if (sscanf(bdf, "%x:%x:%x.%x", &d->domain, &d->bus, &d->dev, &d->fn) != 4)
		return -1;
	info_value(text, "Model:", d->name, sizeof(d->name));
	info_value(text, "GPU UUID:", d->uuid, sizeof(d->uuid));
	info_value(text, "Video BIOS:", d->vbios, sizeof(d->vbios));
	info_value(text, "Device Minor:", v, sizeof(v));
	d->minor = (unsigned)strtoul(v, NULL, 10);
	d->vendor = sysfs_hex(bdf, "vendor");
	d->device = sysfs_hex(bdf, "device");
	d->sub_vendor = sysfs_hex(bdf, "subsystem_vendor");
	d->sub_device = sysfs_hex(bdf, "subsystem_device");
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bdf);
	d->numa_node = nvml_read_text(path, v, sizeof(v)) ? -1 : atoi(v);
	read_pci_path(d);
	read_cpus(d);

	snprintf(path, sizeof(path), "/sys/module/nvidia/nvmirage/%s", bdf);
	if (nvml_read_text(path, extra, sizeof(extra)))
		extra[0] = '\0';
	nvml_extra_value(extra, "serial", d->serial, sizeof(d->serial));
	nvml_extra_value(extra, "board_part_number", d->part, sizeof(d->part));
	nvml_extra_value(extra, "architecture", d->arch, sizeof(d->arch));
	nvml_extra_value(extra, "brand", d->brand, sizeof(d->brand));
	nvml_extra_value(extra, "memory_total", v, sizeof(v));
	d->mem_total = strtoull(v, NULL, 10);
	nvml_extra_value(extra, "memory_reserved", v, sizeof(v));
	d->mem_reserved = strtoull(v, NULL, 10);
	nvml_extra_value(extra, "cc_major", v, sizeof(v));
	d->cc_major = (unsigned)atoi(v);
	nvml_extra_value(extra, "cc_minor", v, sizeof(v));
	d->cc_minor = (unsigned)atoi(v);
	read_nvlinks(extra, d);
	nvml_load_mig(extra, d);
	nvml_load_telemetry(d);
	return 0;
}
