/* --query-gpu=... and --query-compute-apps=... with --format=csv: the
 * headers and value forms of nvidia-smi (units after the number, [N/A]
 * where NVML has no value), a line per GPU or per process. */
#include <stdio.h>
#include <string.h>

#include "smi/forms.h"

enum {
	F_INDEX, F_NAME, F_UUID, F_SERIAL, F_BUS_ID, F_PCI_DOMAIN, F_PCI_BUS, F_PCI_DEVICE,
	F_PCI_DEVICE_ID, F_PCI_SUB_ID, F_DRIVER, F_VBIOS, F_COUNT, F_PERSISTENCE, F_PSTATE,
	F_TEMP, F_TEMP_MEM, F_POWER, F_POWER_AVG, F_POWER_INSTANT, F_POWER_LIMIT,
	F_POWER_DEFAULT, F_POWER_MIN, F_POWER_MAX, F_MEM_TOTAL, F_MEM_RESERVED, F_MEM_USED,
	F_MEM_FREE, F_UTIL_GPU, F_UTIL_MEM, F_CLK_GR, F_CLK_SM, F_CLK_MEM, F_CLK_VIDEO,
	F_MAX_GR, F_MAX_SM, F_MAX_MEM, F_APP_GR, F_APP_MEM, F_FAN, F_COMPUTE_MODE, F_ECC_MODE,
	F_ECC_UNCORRECTED, F_MIG_MODE, F_GEN, F_GEN_MAX, F_WIDTH, F_WIDTH_MAX, F_DISPLAY_ACTIVE,
	F_DISPLAY_MODE, F_ACCOUNTING, F_INFOROM,
	/* --query-compute-apps only */
	F_PID, F_PROCESS_NAME, F_USED_MEMORY,
};

struct field {
	const char *name, *alias, *header;
	int id;
	bool apps; /* a --query-compute-apps field (else --query-gpu) */
};

static const struct field fields[] = {
	{ "index", NULL, "index", F_INDEX, false },
	{ "name", "gpu_name", "name", F_NAME, false },
	{ "uuid", "gpu_uuid", "uuid", F_UUID, false },
	{ "serial", "gpu_serial", "serial", F_SERIAL, false },
	{ "pci.bus_id", "gpu_bus_id", "pci.bus_id", F_BUS_ID, false },
	{ "pci.domain", NULL, "pci.domain", F_PCI_DOMAIN, false },
	{ "pci.bus", NULL, "pci.bus", F_PCI_BUS, false },
	{ "pci.device", NULL, "pci.device", F_PCI_DEVICE, false },
	{ "pci.device_id", NULL, "pci.device_id", F_PCI_DEVICE_ID, false },
	{ "pci.sub_device_id", NULL, "pci.sub_device_id", F_PCI_SUB_ID, false },
	{ "driver_version", NULL, "driver_version", F_DRIVER, false },
	{ "vbios_version", NULL, "vbios_version", F_VBIOS, false },
	{ "count", NULL, "count", F_COUNT, false },
	{ "persistence_mode", NULL, "persistence_mode", F_PERSISTENCE, false },
	{ "pstate", NULL, "pstate", F_PSTATE, false },
	{ "temperature.gpu", NULL, "temperature.gpu", F_TEMP, false },
	{ "temperature.memory", NULL, "temperature.memory", F_TEMP_MEM, false },
	{ "power.draw", NULL, "power.draw [W]", F_POWER, false },
	{ "power.draw.average", NULL, "power.draw.average [W]", F_POWER_AVG, false },
	{ "power.draw.instant", NULL, "power.draw.instant [W]", F_POWER_INSTANT, false },
	{ "power.limit", NULL, "power.limit [W]", F_POWER_LIMIT, false },
	{ "power.default_limit", NULL, "power.default_limit [W]", F_POWER_DEFAULT, false },
	{ "power.min_limit", NULL, "power.min_limit [W]", F_POWER_MIN, false },
	{ "power.max_limit", NULL, "power.max_limit [W]", F_POWER_MAX, false },
	{ "memory.total", NULL, "memory.total [MiB]", F_MEM_TOTAL, false },
	{ "memory.reserved", NULL, "memory.reserved [MiB]", F_MEM_RESERVED, false },
	{ "memory.used", NULL, "memory.used [MiB]", F_MEM_USED, false },
	{ "memory.free", NULL, "memory.free [MiB]", F_MEM_FREE, false },
	{ "utilization.gpu", NULL, "utilization.gpu [%]", F_UTIL_GPU, false },
	{ "utilization.memory", NULL, "utilization.memory [%]", F_UTIL_MEM, false },
	{ "clocks.gr", "clocks.current.graphics", "clocks.current.graphics [MHz]", F_CLK_GR, false },
	{ "clocks.sm", "clocks.current.sm", "clocks.current.sm [MHz]", F_CLK_SM, false },
	{ "clocks.mem", "clocks.current.memory", "clocks.current.memory [MHz]", F_CLK_MEM, false },
	{ "clocks.video", "clocks.current.video", "clocks.current.video [MHz]", F_CLK_VIDEO, false },
	{ "clocks.max.gr", "clocks.max.graphics", "clocks.max.graphics [MHz]", F_MAX_GR, false },
	{ "clocks.max.sm", NULL, "clocks.max.sm [MHz]", F_MAX_SM, false },
	{ "clocks.max.mem", "clocks.max.memory", "clocks.max.memory [MHz]", F_MAX_MEM, false },
	{ "clocks.applications.graphics", "clocks.applications.gr",
	  "clocks.applications.graphics [MHz]", F_APP_GR, false },
	{ "clocks.applications.memory", "clocks.applications.mem",
	  "clocks.applications.memory [MHz]", F_APP_MEM, false },
	{ "fan.speed", NULL, "fan.speed [%]", F_FAN, false },
	{ "compute_mode", NULL, "compute_mode", F_COMPUTE_MODE, false },
	{ "ecc.mode.current", NULL, "ecc.mode.current", F_ECC_MODE, false },
	{ "ecc.errors.uncorrected.volatile.total", NULL, "ecc.errors.uncorrected.volatile.total",
	  F_ECC_UNCORRECTED, false },
	{ "mig.mode.current", NULL, "mig.mode.current", F_MIG_MODE, false },
	{ "pcie.link.gen.current", NULL, "pcie.link.gen.current", F_GEN, false },
	{ "pcie.link.gen.max", NULL, "pcie.link.gen.max", F_GEN_MAX, false },
	{ "pcie.link.width.current", NULL, "pcie.link.width.current", F_WIDTH, false },
	{ "pcie.link.width.max", NULL, "pcie.link.width.max", F_WIDTH_MAX, false },
	{ "display_active", NULL, "display_active", F_DISPLAY_ACTIVE, false },
	{ "display_mode", NULL, "display_mode", F_DISPLAY_MODE, false },
	{ "accounting.mode", NULL, "accounting.mode", F_ACCOUNTING, false },
	{ "inforom.img", "inforom.image", "inforom.img", F_INFOROM, false },
	{ "gpu_name", NULL, "gpu_name", F_NAME, true },
	{ "gpu_bus_id", NULL, "gpu_bus_id", F_BUS_ID, true },
	{ "gpu_serial", NULL, "gpu_serial", F_SERIAL, true },
	{ "gpu_uuid", NULL, "gpu_uuid", F_UUID, true },
	{ "pid", NULL, "pid", F_PID, true },
	{ "process_name", "name", "process_name", F_PROCESS_NAME, true },
	{ "used_memory", "used_gpu_memory", "used_gpu_memory [MiB]", F_USED_MEMORY, true },
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

int smi_csv_parse(struct smi_csv *c, const char *list, char *bad, size_t len)
{
	char copy[1024], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", list);
	c->nfields = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned f = 0;

		while (f < NFIELDS && !(fields[f].apps == c->apps &&
					(!strcmp(tok, fields[f].name) ||
					 (fields[f].alias && !strcmp(tok, fields[f].alias)))))
			f++;
		if (f == NFIELDS || c->nfields == sizeof(c->fields) / sizeof(c->fields[0])) {
			snprintf(bad, len, "%s", tok);
			return -1;
		}
		c->fields[c->nfields++] = (int)f;
	}
	if (!c->nfields) {
		snprintf(bad, len, "%s", list);
		return -1;
	}
	return 0;
}

const char *smi_csv_names(bool apps)
{
	static char names[2][2048];
	char *out = names[apps];

	if (!out[0])
		for (unsigned f = 0; f < NFIELDS; f++)
			if (fields[f].apps == apps)
				snprintf(out + strlen(out), sizeof(names[0]) - strlen(out), "%s%s",
					 out[0] ? ", " : "", fields[f].name);
	return out;
}

#define NA "[N/A]"

static void watts(char *buf, size_t len, nvmlReturn_t r, unsigned mw)
{
	if (r == NVML_SUCCESS)
		snprintf(buf, len, "%.2f W", mw / 1000.0);
}

static void mhz(const struct smi_api *api, nvmlDevice_t d, bool max, nvmlClockType_t t, char *buf,
		size_t len)
{
	unsigned v;

	if ((max ? SMI(api, max_clock, d, t, &v) : SMI(api, clock, d, t, &v)) == NVML_SUCCESS)
		snprintf(buf, len, "%u MHz", v);
}

static void app_mhz(const struct smi_api *api, nvmlDevice_t d, nvmlClockType_t t, char *buf,
		    size_t len)
{
	unsigned v;

	if (SMI(api, app_clock, d, t, &v) == NVML_SUCCESS)
		snprintf(buf, len, "%u MHz", v);
}

static void state(char *buf, size_t len, nvmlReturn_t r, nvmlEnableState_t s)
{
	if (r == NVML_SUCCESS)
		snprintf(buf, len, "%s", smi_enabled(s));
}

/* One GPU's value of field id into buf (left as [N/A] where NVML has none). */
static void gpu_value(const struct smi_api *api, const struct smi_gpu *g, unsigned total, int id,
		      char *buf, size_t len)
{
	nvmlDevice_t d = g->dev;
	nvmlPciInfo_t pci;
	nvmlMemory_v2_t mem = { .version = nvmlMemory_v2 };
	nvmlUtilization_t u;
	nvmlEnableState_t s, s2;
	nvmlPstates_t ps;
	nvmlComputeMode_t cm;
	unsigned long long ull;
	unsigned v, v2;
	nvmlReturn_t r;
	bool have_pci = SMI(api, pci, d, &pci) == NVML_SUCCESS;
	bool have_mem = SMI(api, memory, d, &mem) == NVML_SUCCESS;
	bool have_util = SMI(api, utilization, d, &u) == NVML_SUCCESS;

	snprintf(buf, len, NA);
	switch (id) {
	case F_INDEX: snprintf(buf, len, "%u", g->index); break;
	case F_NAME: SMI(api, name, d, buf, (unsigned)len); break;
	case F_UUID: SMI(api, uuid, d, buf, (unsigned)len); break;
	case F_SERIAL: SMI(api, serial, d, buf, (unsigned)len); break;
	case F_VBIOS: SMI(api, vbios, d, buf, (unsigned)len); break;
	case F_DRIVER: SMI(api, driver, buf, (unsigned)len); break;
	case F_INFOROM: SMI(api, inforom_image, d, buf, (unsigned)len); break;
	case F_BUS_ID: if (have_pci) snprintf(buf, len, "%s", pci.busId); break;
	case F_PCI_DOMAIN: if (have_pci) snprintf(buf, len, "0x%04X", pci.domain); break;
	case F_PCI_BUS: if (have_pci) snprintf(buf, len, "0x%02X", pci.bus); break;
	case F_PCI_DEVICE: if (have_pci) snprintf(buf, len, "0x%02X", pci.device); break;
	case F_PCI_DEVICE_ID: if (have_pci) snprintf(buf, len, "0x%08X", pci.pciDeviceId); break;
	case F_PCI_SUB_ID: if (have_pci) snprintf(buf, len, "0x%08X", pci.pciSubSystemId); break;
	case F_COUNT: snprintf(buf, len, "%u", total); break;
	case F_PERSISTENCE: r = SMI(api, persistence, d, &s); state(buf, len, r, s); break;
	case F_DISPLAY_ACTIVE: r = SMI(api, display_active, d, &s); state(buf, len, r, s); break;
	case F_DISPLAY_MODE: r = SMI(api, display_mode, d, &s); state(buf, len, r, s); break;
	case F_ACCOUNTING: r = SMI(api, accounting, d, &s); state(buf, len, r, s); break;
	case F_ECC_MODE: r = SMI(api, ecc_mode, d, &s, &s2); state(buf, len, r, s); break;
	case F_ECC_UNCORRECTED:
		if (SMI(api, ecc_total, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
			&ull) == NVML_SUCCESS)
			snprintf(buf, len, "%llu", ull);
		break;
	case F_MIG_MODE:
		if (SMI(api, mig, d, &v, &v2) == NVML_SUCCESS)
			snprintf(buf, len, "%s", smi_enabled(v));
		break;
	case F_PSTATE:
		if (SMI(api, pstate, d, &ps) == NVML_SUCCESS && ps != NVML_PSTATE_UNKNOWN)
			snprintf(buf, len, "P%d", (int)ps);
		break;
	case F_TEMP:
		if (SMI(api, temperature, d, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
			snprintf(buf, len, "%u", v);
		break;
	case F_TEMP_MEM:
		/* nvidia-smi's own exception: plain N/A, without brackets. */
		snprintf(buf, len, "N/A");
		if (smi_field(api, d, 82 /* NVML_FI_DEV_MEMORY_TEMP */, &v) && v)
			snprintf(buf, len, "%u", v);
		break;
	case F_POWER: r = SMI(api, power, d, &v); watts(buf, len, r, v); break;
	case F_POWER_AVG:
		r = smi_field(api, d, 185 /* POWER_AVERAGE */, &v) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
		watts(buf, len, r, v);
		break;
	case F_POWER_INSTANT:
		r = smi_field(api, d, 186 /* POWER_INSTANT */, &v) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
		watts(buf, len, r, v);
		break;
	case F_POWER_LIMIT: r = SMI(api, power_limit, d, &v); watts(buf, len, r, v); break;
	case F_POWER_DEFAULT: r = SMI(api, power_default, d, &v); watts(buf, len, r, v); break;
	case F_POWER_MIN: r = SMI(api, power_range, d, &v, &v2); watts(buf, len, r, v); break;
	case F_POWER_MAX: r = SMI(api, power_range, d, &v2, &v); watts(buf, len, r, v); break;
	case F_MEM_TOTAL: if (have_mem) snprintf(buf, len, "%llu MiB", mem.total >> 20); break;
	case F_MEM_RESERVED: if (have_mem) snprintf(buf, len, "%llu MiB", mem.reserved >> 20); break;
	case F_MEM_USED: if (have_mem) snprintf(buf, len, "%llu MiB", mem.used >> 20); break;
	case F_MEM_FREE: if (have_mem) snprintf(buf, len, "%llu MiB", mem.free >> 20); break;
	case F_UTIL_GPU: if (have_util) snprintf(buf, len, "%u %%", u.gpu); break;
	case F_UTIL_MEM: if (have_util) snprintf(buf, len, "%u %%", u.memory); break;
	case F_CLK_GR: mhz(api, d, false, NVML_CLOCK_GRAPHICS, buf, len); break;
	case F_CLK_SM: mhz(api, d, false, NVML_CLOCK_SM, buf, len); break;
	case F_CLK_MEM: mhz(api, d, false, NVML_CLOCK_MEM, buf, len); break;
	case F_CLK_VIDEO: mhz(api, d, false, NVML_CLOCK_VIDEO, buf, len); break;
	case F_MAX_GR: mhz(api, d, true, NVML_CLOCK_GRAPHICS, buf, len); break;
	case F_MAX_SM: mhz(api, d, true, NVML_CLOCK_SM, buf, len); break;
	case F_MAX_MEM: mhz(api, d, true, NVML_CLOCK_MEM, buf, len); break;
	case F_APP_GR: app_mhz(api, d, NVML_CLOCK_GRAPHICS, buf, len); break;
	case F_APP_MEM: app_mhz(api, d, NVML_CLOCK_MEM, buf, len); break;
	case F_FAN:
		if (SMI(api, fans, d, &v2) == NVML_SUCCESS && v2 && SMI(api, fan, d, &v) == NVML_SUCCESS)
			snprintf(buf, len, "%u %%", v);
		break;
	case F_COMPUTE_MODE:
		if (SMI(api, compute_mode, d, &cm) == NVML_SUCCESS)
			snprintf(buf, len, "%s", cm == NVML_COMPUTEMODE_DEFAULT ? "Default"
						 : cm == NVML_COMPUTEMODE_PROHIBITED ? "Prohibited"
						 : "Exclusive_Process");
		break;
	case F_GEN: if (SMI(api, pcie_gen, d, &v) == NVML_SUCCESS) snprintf(buf, len, "%u", v); break;
	case F_GEN_MAX: if (SMI(api, pcie_gen_max, d, &v) == NVML_SUCCESS) snprintf(buf, len, "%u", v); break;
	case F_WIDTH: if (SMI(api, pcie_width, d, &v) == NVML_SUCCESS) snprintf(buf, len, "%u", v); break;
	case F_WIDTH_MAX: if (SMI(api, pcie_width_max, d, &v) == NVML_SUCCESS) snprintf(buf, len, "%u", v); break;
	}
}

static void print_header(const struct smi_csv *c)
{
	for (unsigned f = 0; f < c->nfields; f++)
		printf("%s%s", fields[c->fields[f]].header, f + 1 < c->nfields ? ", " : "\n");
}

static void print_apps(const struct smi_api *api, const struct smi_csv *c, const struct smi_gpu *g,
		       unsigned total)
{
	struct smi_proc procs[64];
	unsigned np = smi_processes(api, g->dev, procs, 64);

	for (unsigned p = 0; p < np; p++) {
		if (procs[p].type != 'C')
			continue;
		for (unsigned f = 0; f < c->nfields; f++) {
			char buf[256] = NA;
			int id = fields[c->fields[f]].id;

			if (id == F_PID)
				snprintf(buf, sizeof(buf), "%u", procs[p].pid);
			else if (id == F_USED_MEMORY)
				snprintf(buf, sizeof(buf), "%llu MiB", procs[p].used >> 20);
			else if (id == F_PROCESS_NAME)
				SMI(api, process_name, procs[p].pid, buf, sizeof(buf));
			else
				gpu_value(api, g, total, id, buf, sizeof(buf));
			printf("%s%s", buf, f + 1 < c->nfields ? ", " : "\n");
		}
	}
}

int smi_csv(const struct smi_api *api, const struct smi_csv *c, const struct smi_gpu *gpus,
	    unsigned n, unsigned total)
{
	if (c->header)
		print_header(c);
	for (unsigned i = 0; i < n; i++) {
		if (c->apps) {
			print_apps(api, c, &gpus[i], total);
			continue;
		}
		for (unsigned f = 0; f < c->nfields; f++) {
			char buf[256];

			gpu_value(api, &gpus[i], total, fields[c->fields[f]].id, buf, sizeof(buf));
			printf("%s%s", buf, f + 1 < c->nfields ? ", " : "\n");
		}
	}
	return 0;
}
