/* infiniband: the HCAs beside the GPUs, in Mokka's schema:
 *
 *   infiniband:
 *     enabled: true
 *     hca_type: "MT4129"         # MT<PCI device id in decimal>: ConnectX-7
 *     fw_version: "28.43.1000"
 *     hw_rev: "0x0"
 *     board_id: "MT_0000000838"
 *     link_layer: "InfiniBand"   # or Ethernet
 *     rate_gbps: 400             # of the 4X port: NDR
 *     port_state: "ACTIVE"
 *     phys_state: "LinkUp"
 *     hcas_per_gpu: 1            # or hca_count: N, spread over the GPUs
 *     guid_prefix: "9b88c2:0301:cd"
 *     node_desc_template: "{node_name} mlx5_{idx}"
 *
 * Each HCA is a PCI function on its GPU's root complex, on the first bus
 * after the GPU's that no other device of that domain has. GUIDs and LIDs
 * come from the node's name and the HCA's index: the same on every render
 * of a node, different on every node of a cluster. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>

#include "lib/log.h"
#include "profile/profile_int.h"

static const char *const port_states[] = { "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
					   NULL };
static const char *const phys_states[] = { "Sleep", "Polling", "Disabled",
					   "PortConfigurationTraining", "LinkUp",
					   "LinkErrorRecovery", "Phy Test", NULL };

/* The position of s in words (any case), from 1 as the kernel numbers
 * states; 0 when it is none of them. */
static unsigned word_number(const char *const *words, const char *s)
{
	for (unsigned i = 0; words[i]; i++)
		if (!strcasecmp(words[i], s))
			return i + 1;
	return 0;
}

static int state_key(struct ydoc *y, yaml_node_t *ib, const char *key, const char *const *words,
		     unsigned *out)
{
	yaml_node_t *n = ydoc_get(y, ib, key);
	char path[64], s[40], allowed[160] = "";

	if (!n)
		return 0;
	snprintf(path, sizeof(path), "infiniband.%s", key);
	if (ydoc_str(y, n, path, s, sizeof(s)))
		return -1;
	*out = word_number(words, s);
	if (*out)
		return 0;
	for (unsigned i = 0; words[i]; i++)
		snprintf(allowed + strlen(allowed), sizeof(allowed) - strlen(allowed), "%s%s",
			 i ? ", " : "", words[i]);
	return ydoc_fail(y, n, path, "\"%s\": expected one of %s", s, allowed);
}

static int str_key(struct ydoc *y, yaml_node_t *ib, const char *key, char *out, size_t len)
{
	yaml_node_t *n = ydoc_get(y, ib, key);
	char path[64];

	snprintf(path, sizeof(path), "infiniband.%s", key);
	return n ? ydoc_str(y, n, path, out, len) : 0;
}

/* hca_type "MT4129": mlx5 names the HCA by its PCI device id in decimal;
 * ConnectX-4 (4115) to ConnectX-8 (4131) physical functions. */
static int parse_hca_type(struct ydoc *y, yaml_node_t *ib, struct nvm_infiniband *out)
{
	yaml_node_t *n = ydoc_get(y, ib, "hca_type");
	char s[16] = "MT4129", *end;
	unsigned long id;

	if (n && ydoc_str(y, n, "infiniband.hca_type", s, sizeof(s)))
		return -1;
	id = strncmp(s, "MT", 2) ? 0 : strtoul(s + 2, &end, 10);
	if (!id || *end || id < 4115 || id > 4131 || id % 2 == 0)
		return ydoc_fail(y, n, "infiniband.hca_type",
				 "\"%s\": expected an mlx5 HCA as MT<PCI device id in decimal>, "
				 "MT4115 (ConnectX-4) to MT4131 (ConnectX-8)", s);
	out->device_id = (unsigned)id;
	return 0;
}

static int parse_rate(struct ydoc *y, yaml_node_t *ib, struct nvm_infiniband *out)
{
	static const unsigned rates[] = { 10, 20, 40, 56, 100, 200, 400, 800 };
	yaml_node_t *n = ydoc_get(y, ib, "rate_gbps");
	uint64_t v = 400;

	if (n && ydoc_uint(y, n, "infiniband.rate_gbps", 100000, &v))
		return -1;
	for (unsigned i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (v == rates[i]) {
			out->rate_gbps = (unsigned)v;
			return 0;
		}
	return ydoc_fail(y, n, "infiniband.rate_gbps",
			 "%llu: expected a 4X port's rate: 10 (SDR), 20 (DDR), 40 (QDR), 56 (FDR), "
			 "100 (EDR), 200 (HDR), 400 (NDR) or 800 (XDR)", (unsigned long long)v);
}

/* The first 8 hex digits of guid_prefix (':' ignored): the GUIDs' upper half. */
static int parse_prefix(struct ydoc *y, yaml_node_t *ib, uint32_t *out)
{
	yaml_node_t *n = ydoc_get(y, ib, "guid_prefix");
	char s[48] = "a088c20300ab", hex[9];
	unsigned k = 0;

	if (n && ydoc_str(y, n, "infiniband.guid_prefix", s, sizeof(s)))
		return -1;
	for (const char *c = s; *c; c++) {
		if (*c == ':')
			continue;
		if (!isxdigit((unsigned char)*c))
			return ydoc_fail(y, n, "infiniband.guid_prefix",
					 "\"%s\": expected hex digits (':' between them allowed)", s);
		if (k < 8)
			hex[k] = *c;
		k++;
	}
	if (k < 8 || k > 16)
		return ydoc_fail(y, n, "infiniband.guid_prefix",
				 "\"%s\": expected 8 to 16 hex digits (the GUIDs' upper 32 bits first)",
				 s);
	hex[8] = '\0';
	*out = (uint32_t)strtoul(hex, NULL, 16);
	return 0;
}

/* "{node_name} mlx5_{idx}" for HCA idx, at most 64 bytes as the kernel's. */
static void node_desc(const char *tmpl, const char *node, unsigned idx, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (const char *c = tmpl; *c && at + 1 < len;) {
		if (!strncmp(c, "{node_name}", 11)) {
			at += (size_t)snprintf(out + at, len - at, "%s", node);
			c += 11;
		} else if (!strncmp(c, "{idx}", 5)) {
			at += (size_t)snprintf(out + at, len - at, "%u", idx);
			c += 5;
		} else {
			out[at++] = *c++;
			out[at] = '\0';
		}
	}
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static bool bus_taken(const struct nvm_model *m, unsigned domain, unsigned bus)
{
	for (unsigned i = 0; i < m->ngpus; i++)
		if (m->gpus[i].domain == domain && m->gpus[i].bus == bus)
			return true;
	for (unsigned i = 0; i < m->ib.nhcas; i++)
		if (m->ib.hcas[i].domain == domain && m->ib.hcas[i].bus == bus)
			return true;
	return false;
}

/* HCA idx beside GPU gpu: the next free bus of its domain after the GPU's,
 * function 0. */
static int place(struct nvm_model *m, unsigned idx, unsigned gpu, uint32_t prefix, uint32_t hash,
		 unsigned total, const char *tmpl)
{
	const struct nvm_gpu *g = &m->gpus[gpu];
	struct nvm_hca *h = &m->ib.hcas[idx];
	unsigned bus = g->bus;

	do
		bus = bus % 255 + 1; /* 1..255: bus 0 is the root complex's own */
	while (bus_taken(m, g->domain, bus) && bus != g->bus);
	if (bus == g->bus)
		return nvm_err_r(-1, "infiniband: no free PCI bus in domain %04x for HCA %u",
				 g->domain, idx);
	memset(h, 0, sizeof(*h));
	h->index = idx;
	h->gpu = gpu;
	h->domain = g->domain;
	h->bus = bus;
	snprintf(h->bus_id, sizeof(h->bus_id), "%04x:%02x:00.0", h->domain, h->bus);
	h->guid = (uint64_t)prefix << 32 | (hash & 0xffffff) << 8 | idx;
	/* Unicast LIDs are 1..0xbfff; the subnet manager is 1. */
	h->lid = 2 + (hash % (0xbf00 / total)) * total + idx;
	node_desc(tmpl, m->node_name, idx, h->node_desc, sizeof(h->node_desc));
	m->ib.nhcas++;
	return 0;
}

static void node_name(struct nvm_model *m)
{
	const char *env = getenv("NODE_NAME");
	struct utsname u;

	if (env && *env) {
		snprintf(m->node_name, sizeof(m->node_name), "%s", env);
		return;
	}
	uname(&u);
	snprintf(m->node_name, sizeof(m->node_name), "%s", u.nodename);
}

int parse_infiniband(struct ydoc *y, yaml_node_t *ib, struct nvm_model *m)
{
	static const char *const keys[] = { "enabled", "hca_type", "fw_version", "hw_rev",
					    "board_id", "link_layer", "rate_gbps", "port_state",
					    "phys_state", "hcas_per_gpu", "hca_count", "guid_prefix",
					    "node_desc_template", NULL };
	struct nvm_infiniband *out = &m->ib;
	char layer[16] = "InfiniBand", rev[16] = "0x0", tmpl[64] = "{node_name} mlx5_{idx}", *end;
	uint64_t per_gpu = 1, count = 0;
	bool enabled = false;
	yaml_node_t *n;
	uint32_t prefix = 0;
	unsigned total;

	memset(out, 0, sizeof(*out));
	node_name(m);
	if (!ib)
		return 0;
	if (!ydoc_is_map(ib))
		return ydoc_fail(y, ib, "infiniband", "expected a mapping");
	if (ydoc_only_keys(y, ib, "infiniband", keys))
		return -1;
	if ((n = ydoc_get(y, ib, "enabled")) && ydoc_bool(y, n, "infiniband.enabled", &enabled))
		return -1;
	snprintf(out->fw_version, sizeof(out->fw_version), "28.39.2048");
	snprintf(out->board_id, sizeof(out->board_id), "MT_0000000838");
	out->port_state = 4; /* ACTIVE */
	out->phys_state = 5; /* LinkUp */
	if (parse_hca_type(y, ib, out) || parse_rate(y, ib, out) || parse_prefix(y, ib, &prefix) ||
	    str_key(y, ib, "fw_version", out->fw_version, sizeof(out->fw_version)) ||
	    str_key(y, ib, "board_id", out->board_id, sizeof(out->board_id)) ||
	    str_key(y, ib, "link_layer", layer, sizeof(layer)) ||
	    str_key(y, ib, "hw_rev", rev, sizeof(rev)) ||
	    str_key(y, ib, "node_desc_template", tmpl, sizeof(tmpl)) ||
	    state_key(y, ib, "port_state", port_states, &out->port_state) ||
	    state_key(y, ib, "phys_state", phys_states, &out->phys_state))
		return -1;
	if (strcasecmp(layer, "InfiniBand") && strcasecmp(layer, "Ethernet"))
		return ydoc_fail(y, ydoc_get(y, ib, "link_layer"), "infiniband.link_layer",
				 "\"%s\": expected InfiniBand or Ethernet", layer);
	out->ethernet = !strcasecmp(layer, "Ethernet");
	out->hw_rev = (unsigned)strtoul(rev, &end, 0);
	if (!rev[0] || *end || out->hw_rev > 0xff)
		return ydoc_fail(y, ydoc_get(y, ib, "hw_rev"), "infiniband.hw_rev",
				 "\"%s\": expected the PCI revision, 0x0 to 0xff", rev);
	if (strspn(out->fw_version, "0123456789.") != strlen(out->fw_version) ||
	    !out->fw_version[0])
		return ydoc_fail(y, ydoc_get(y, ib, "fw_version"), "infiniband.fw_version",
				 "\"%s\" is not a version like 28.43.1000", out->fw_version);
	if ((n = ydoc_get(y, ib, "hcas_per_gpu")) &&
	    ydoc_uint(y, n, "infiniband.hcas_per_gpu", 8, &per_gpu))
		return -1;
	if ((n = ydoc_get(y, ib, "hca_count")) &&
	    ydoc_uint(y, n, "infiniband.hca_count", NVM_MAX_HCAS, &count))
		return -1;
	if (!enabled)
		return 0;
	total = count ? (unsigned)count : (unsigned)per_gpu * m->ngpus;
	if (!total)
		return 0;
	if (total > NVM_MAX_HCAS)
		return ydoc_fail(y, ib, "infiniband.hcas_per_gpu",
				 "%u HCAs for %u GPUs; at most %d are supported", total, m->ngpus,
				 NVM_MAX_HCAS);
	for (unsigned i = 0; i < total; i++)
		/* hcas_per_gpu: side by side; hca_count: one GPU after another. */
		if (place(m, i, count ? i % m->ngpus : i / (unsigned)per_gpu, prefix,
			  fnv1a(m->node_name), total, tmpl))
			return -1;
	return 0;
}
