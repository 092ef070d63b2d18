/* nvidia-smi -q: the sections of driver 580's report (../reference
 * smi-q.txt) that NVML's public calls answer, each line as the real tool
 * prints it (keys padded to column 55). Sections the look-alike cannot
 * fill from public calls are left out rather than guessed; `-q` of the
 * real tool, given to the agent with --nvidia-smi, prints them all. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "smi/forms.h"

#define KEY_WIDTH 55
#define NA "N/A"

static void section(int depth, const char *name)
{
	printf("%*s%s\n", depth * 4, "", name);
}

static __attribute__((format(printf, 3, 4))) void kv(int depth, const char *key, const char *fmt,
						     ...)
{
	va_list ap;

	printf("%*s%-*s: ", depth * 4, "", KEY_WIDTH - depth * 4, key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* "<n> <unit>" where NVML answered, else N/A. */
static void kv_unit(int depth, const char *key, nvmlReturn_t r, unsigned long long v,
		    const char *unit)
{
	if (r == NVML_SUCCESS)
		kv(depth, key, *unit ? "%llu %s" : "%llu", v, unit);
	else
		kv(depth, key, NA);
}

static void kv_watts(int depth, const char *key, nvmlReturn_t r, unsigned mw)
{
	if (r == NVML_SUCCESS)
		kv(depth, key, "%.2f W", mw / 1000.0);
	else
		kv(depth, key, NA);
}

static void kv_state(int depth, const char *key, nvmlReturn_t r, nvmlEnableState_t s)
{
	kv(depth, key, "%s", r == NVML_SUCCESS ? smi_enabled(s) : NA);
}

static void kv_string(int depth, const char *key, nvmlReturn_t r, const char *s)
{
	kv(depth, key, "%s", r == NVML_SUCCESS ? s : NA);
}

/* The call first, then its value: a function's arguments have no order. */
#define KV_UNIT(depth, key, call, v, unit)                                       \
	do {                                                                     \
		nvmlReturn_t r_ = (call);                                        \
		kv_unit(depth, key, r_, v, unit);                                \
	} while (0)
#define KV_WATTS(depth, key, call, v)                                            \
	do {                                                                     \
		nvmlReturn_t r_ = (call);                                        \
		kv_watts(depth, key, r_, v);                                     \
	} while (0)
#define KV_STATE(depth, key, call, v)                                            \
	do {                                                                     \
		nvmlReturn_t r_ = (call);                                        \
		kv_state(depth, key, r_, v);                                     \
	} while (0)

static const char *brand_name(nvmlBrandType_t b)
{
	switch (b) {
	case NVML_BRAND_NVIDIA: return "NVIDIA";
	case NVML_BRAND_TESLA: return "Tesla";
	case NVML_BRAND_QUADRO: return "Quadro";
	case NVML_BRAND_GEFORCE: return "GeForce";
	default: return "Unknown";
	}
}

static const char *arch_name(nvmlDeviceArchitecture_t a)
{
	switch (a) {
	case NVML_DEVICE_ARCH_VOLTA: return "Volta";
	case NVML_DEVICE_ARCH_TURING: return "Turing";
	case NVML_DEVICE_ARCH_AMPERE: return "Ampere";
	case NVML_DEVICE_ARCH_ADA: return "Ada Lovelace";
	case NVML_DEVICE_ARCH_HOPPER: return "Hopper";
	case NVML_DEVICE_ARCH_BLACKWELL: return "Blackwell";
	default: return "Unknown";
	}
}

static void identity(const struct smi_api *api, nvmlDevice_t d)
{
	char s[96];
	nvmlBrandType_t brand;
	nvmlDeviceArchitecture_t arch;
	nvmlEnableState_t e;
	unsigned v, v2;
	nvmlReturn_t r;

	kv_string(1, "Product Name", SMI(api, name, d, s, sizeof(s)), s);
	r = SMI(api, brand, d, &brand);
	kv_string(1, "Product Brand", r, r == NVML_SUCCESS ? brand_name(brand) : NA);
	r = SMI(api, arch, d, &arch);
	kv_string(1, "Product Architecture", r, r == NVML_SUCCESS ? arch_name(arch) : NA);
	KV_STATE(1, "Display Active", SMI(api, display_active, d, &e), e);
	KV_STATE(1, "Persistence Mode", SMI(api, persistence, d, &e), e);
	section(1, "MIG Mode");
	r = SMI(api, mig, d, &v, &v2);
	kv_state(2, "Current", r, v);
	kv_state(2, "Pending", r, v2);
	KV_STATE(1, "Accounting Mode", SMI(api, accounting, d, &e), e);
	KV_UNIT(1, "Accounting Mode Buffer Size", SMI(api, accounting_size, d, &v), v, "");
	kv_string(1, "Serial Number", SMI(api, serial, d, s, sizeof(s)), s);
	kv_string(1, "GPU UUID", SMI(api, uuid, d, s, sizeof(s)), s);
	KV_UNIT(1, "Minor Number", SMI(api, minor, d, &v), v, "");
	kv_string(1, "VBIOS Version", SMI(api, vbios, d, s, sizeof(s)), s);
	r = SMI(api, multi_gpu, d, &v);
	kv_string(1, "MultiGPU Board", r, v ? "Yes" : "No");
	r = SMI(api, board_id, d, &v);
	if (r == NVML_SUCCESS)
		kv(1, "Board ID", "0x%x", v);
	else
		kv(1, "Board ID", NA);
	kv_string(1, "Board Part Number", SMI(api, part_number, d, s, sizeof(s)), s);
	section(1, "Inforom Version");
	kv_string(2, "Image Version", SMI(api, inforom_image, d, s, sizeof(s)), s);
	kv_string(2, "OEM Object", SMI(api, inforom, d, NVML_INFOROM_OEM, s, sizeof(s)), s);
	kv_string(2, "ECC Object", SMI(api, inforom, d, NVML_INFOROM_ECC, s, sizeof(s)), s);
	kv_string(2, "Power Management Object",
		  SMI(api, inforom, d, NVML_INFOROM_POWER, s, sizeof(s)), s);
}

static void pci(const struct smi_api *api, nvmlDevice_t d)
{
	nvmlPciInfo_t p;
	unsigned v;
	nvmlReturn_t r;

	section(1, "PCI");
	if (SMI(api, pci, d, &p) == NVML_SUCCESS) {
		kv(2, "Bus", "0x%02X", p.bus);
		kv(2, "Device", "0x%02X", p.device);
		kv(2, "Domain", "0x%04X", p.domain);
		kv(2, "Device Id", "0x%08X", p.pciDeviceId);
		kv(2, "Bus Id", "%s", p.busId);
		kv(2, "Sub System Id", "0x%08X", p.pciSubSystemId);
	}
	section(2, "GPU Link Info");
	section(3, "PCIe Generation");
	r = SMI(api, pcie_gen_max, d, &v);
	kv_unit(4, "Max", r, v, "");
	r = SMI(api, pcie_gen, d, &v);
	kv_unit(4, "Current", r, v, "");
	section(3, "Link Width");
	if (SMI(api, pcie_width_max, d, &v) == NVML_SUCCESS)
		kv(4, "Max", "%ux", v);
	else
		kv(4, "Max", NA);
	if (SMI(api, pcie_width, d, &v) == NVML_SUCCESS)
		kv(4, "Current", "%ux", v);
	else
		kv(4, "Current", NA);
}

static void memory(const struct smi_api *api, nvmlDevice_t d)
{
	nvmlMemory_v2_t m = { .version = nvmlMemory_v2 };
	nvmlBAR1Memory_t b;
	nvmlComputeMode_t cm;
	nvmlUtilization_t u;
	nvmlReturn_t r = SMI(api, memory, d, &m);
	unsigned v, period;

	section(1, "FB Memory Usage");
	kv_unit(2, "Total", r, m.total >> 20, "MiB");
	kv_unit(2, "Reserved", r, m.reserved >> 20, "MiB");
	kv_unit(2, "Used", r, m.used >> 20, "MiB");
	kv_unit(2, "Free", r, m.free >> 20, "MiB");
	r = SMI(api, bar1, d, &b);
	section(1, "BAR1 Memory Usage");
	kv_unit(2, "Total", r, b.bar1Total >> 20, "MiB");
	kv_unit(2, "Used", r, b.bar1Used >> 20, "MiB");
	kv_unit(2, "Free", r, b.bar1Free >> 20, "MiB");
	r = SMI(api, compute_mode, d, &cm);
	kv_string(1, "Compute Mode", r,
		  cm == NVML_COMPUTEMODE_DEFAULT ? "Default"
		  : cm == NVML_COMPUTEMODE_PROHIBITED ? "Prohibited" : "Exclusive_Process");
	section(1, "Utilization");
	r = SMI(api, utilization, d, &u);
	kv_unit(2, "GPU", r, u.gpu, "%");
	kv_unit(2, "Memory", r, u.memory, "%");
	r = SMI(api, encoder, d, &v, &period);
	kv_unit(2, "Encoder", r, v, "%");
	r = SMI(api, decoder, d, &v, &period);
	kv_unit(2, "Decoder", r, v, "%");
}

static void ecc(const struct smi_api *api, nvmlDevice_t d)
{
	static const char *const scope[] = { "Volatile", "Aggregate" };
	nvmlEnableState_t cur, pend;
	nvmlReturn_t r = SMI(api, ecc_mode, d, &cur, &pend);
	unsigned long long v;

	section(1, "ECC Mode");
	kv_state(2, "Current", r, cur);
	kv_state(2, "Pending", r, pend);
	section(1, "ECC Errors");
	for (int s = 0; s < 2; s++) {
		section(2, scope[s]);
		r = SMI(api, ecc_count, d, NVML_MEMORY_ERROR_TYPE_CORRECTED, (nvmlEccCounterType_t)s,
			NVML_MEMORY_LOCATION_DRAM, &v);
		kv_unit(3, "DRAM Correctable", r, v, "");
		r = SMI(api, ecc_count, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, (nvmlEccCounterType_t)s,
			NVML_MEMORY_LOCATION_DRAM, &v);
		kv_unit(3, "DRAM Uncorrectable", r, v, "");
	}
}

static void thermal_power(const struct smi_api *api, nvmlDevice_t d)
{
	unsigned v, lo, hi;
	nvmlReturn_t r;

	section(1, "Temperature");
	KV_UNIT(2, "GPU Current Temp", SMI(api, temperature, d, NVML_TEMPERATURE_GPU, &v), v, "C");
	if (smi_field(api, d, 82 /* NVML_FI_DEV_MEMORY_TEMP */, &v))
		kv(2, "Memory Current Temp", "%u C", v);
	else
		kv(2, "Memory Current Temp", NA);
	section(1, "GPU Power Readings");
	r = smi_field(api, d, 185 /* POWER_AVERAGE */, &v) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
	kv_watts(2, "Average Power Draw", r, v);
	r = smi_field(api, d, 186 /* POWER_INSTANT */, &v) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
	kv_watts(2, "Instantaneous Power Draw", r, v);
	KV_WATTS(2, "Current Power Limit", SMI(api, power_limit, d, &v), v);
	r = smi_field(api, d, 192 /* POWER_REQUESTED_LIMIT */, &v) ? NVML_SUCCESS
								  : NVML_ERROR_NOT_SUPPORTED;
	kv_watts(2, "Requested Power Limit", r, v);
	KV_WATTS(2, "Default Power Limit", SMI(api, power_default, d, &v), v);
	r = SMI(api, power_range, d, &lo, &hi);
	kv_watts(2, "Min Power Limit", r, lo);
	kv_watts(2, "Max Power Limit", r, hi);
}

static void clocks(const struct smi_api *api, nvmlDevice_t d)
{
	static const char *const names[] = { "Graphics", "SM", "Memory", "Video" };
	unsigned v;

	section(1, "Clocks");
	for (int c = 0; c < 4; c++)
		KV_UNIT(2, names[c], SMI(api, clock, d, (nvmlClockType_t)c, &v), v, "MHz");
	section(1, "Applications Clocks");
	KV_UNIT(2, "Graphics", SMI(api, app_clock, d, NVML_CLOCK_GRAPHICS, &v), v, "MHz");
	KV_UNIT(2, "Memory", SMI(api, app_clock, d, NVML_CLOCK_MEM, &v), v, "MHz");
	section(1, "Default Applications Clocks");
	KV_UNIT(2, "Graphics", SMI(api, default_app_clock, d, NVML_CLOCK_GRAPHICS, &v), v, "MHz");
	KV_UNIT(2, "Memory", SMI(api, default_app_clock, d, NVML_CLOCK_MEM, &v), v, "MHz");
	section(1, "Max Clocks");
	for (int c = 0; c < 4; c++)
		KV_UNIT(2, names[c], SMI(api, max_clock, d, (nvmlClockType_t)c, &v), v, "MHz");
	section(1, "Max Customer Boost Clocks");
	KV_UNIT(2, "Graphics", SMI(api, boost_clock, d, NVML_CLOCK_GRAPHICS, &v), v, "MHz");
}

static void processes(const struct smi_api *api, nvmlDevice_t d)
{
	struct smi_proc procs[64];
	unsigned n = smi_processes(api, d, procs, 64);

	if (!n) {
		kv(1, "Processes", "None");
		return;
	}
	section(1, "Processes");
	for (unsigned p = 0; p < n; p++) {
		char name[256];

		kv(2, "GPU instance ID", NA);
		kv(2, "Compute instance ID", NA);
		kv(2, "Process ID", "%u", procs[p].pid);
		kv(3, "Type", "%c", procs[p].type);
		kv_string(3, "Name", SMI(api, process_name, procs[p].pid, name, sizeof(name)), name);
		kv(3, "Used GPU Memory", "%llu MiB", procs[p].used >> 20);
	}
}

static void gpu(const struct smi_api *api, const struct smi_gpu *g)
{
	nvmlDevice_t d = g->dev;
	nvmlPciInfo_t p;
	nvmlPstates_t ps;
	unsigned v, nfans = 0;

	printf("GPU %s\n", SMI(api, pci, d, &p) == NVML_SUCCESS ? p.busId : NA);
	identity(api, d);
	pci(api, d);
	if (SMI(api, fans, d, &nfans) == NVML_SUCCESS && nfans && SMI(api, fan, d, &v) == NVML_SUCCESS)
		kv(1, "Fan Speed", "%u %%", v);
	else
		kv(1, "Fan Speed", NA);
	if (SMI(api, pstate, d, &ps) == NVML_SUCCESS && ps != NVML_PSTATE_UNKNOWN)
		kv(1, "Performance State", "P%d", (int)ps);
	else
		kv(1, "Performance State", NA);
	memory(api, d);
	ecc(api, d);
	thermal_power(api, d);
	clocks(api, d);
	processes(api, d);
}

int smi_query(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n)
{
	char driver[80] = NA, now[32];
	time_t t = time(NULL);
	unsigned total = 0;
	int cuda;

	SMI(api, driver, driver, sizeof(driver));
	SMI(api, count, &total);
	strftime(now, sizeof(now), "%a %b %e %H:%M:%S %Y", localtime(&t));
	printf("\n==============NVSMI LOG==============\n\n");
	kv(0, "Timestamp", "%s", now);
	kv(0, "Driver Version", "%s", driver);
	if (SMI(api, cuda, &cuda) == NVML_SUCCESS)
		kv(0, "CUDA Version", "%d.%d", cuda / 1000, cuda % 1000 / 10);
	else
		kv(0, "CUDA Version", NA);
	printf("\n");
	kv(0, "Attached GPUs", "%u", total);
	for (unsigned i = 0; i < n; i++) {
		gpu(api, &gpus[i]);
		printf("\n");
	}
	return 0;
}
