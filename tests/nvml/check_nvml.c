/* Checks nvmirage's libnvidia-ml.so.1 against a profile: loads the library
 * with dlopen, as Slurm and nvidia-smi do, and compares every answer with
 * the profile as nvmirage's own parser reads it.
 *   check_nvml LIB PROFILE      in a target cgroup: every function
 *   check_nvml LIB --outside    outside: nvmlInit says the driver is absent
 * Prints "N passed, N failed". */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/model.h"
#include "nvml.h"
#include "profile/profile.h"

static int passed, failed;
static void *lib;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			passed++;                                               \
		} else {                                                        \
			failed++;                                               \
			printf("FAIL: " __VA_ARGS__);                           \
			printf("\n");                                           \
		}                                                               \
	} while (0)

/* Looks a function up by its exported name and casts it to its type. */
#define FN(type, name) ((type)sym(#name))
static void *sym(const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		printf("FAIL: %s is not exported\n", name);
		failed++;
	}
	return p;
}

typedef nvmlReturn_t (*f_void)(void);
typedef nvmlReturn_t (*f_str)(char *, unsigned int);
typedef nvmlReturn_t (*f_int)(int *);
typedef nvmlReturn_t (*f_uint)(unsigned int *);
typedef nvmlReturn_t (*f_handle)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*f_lookup)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*f_dstr)(nvmlDevice_t, char *, unsigned int);
typedef nvmlReturn_t (*f_duint)(nvmlDevice_t, unsigned int *);
typedef nvmlReturn_t (*f_d2int)(nvmlDevice_t, int *, int *);
typedef nvmlReturn_t (*f_d2uint)(nvmlDevice_t, unsigned int *, unsigned int *);
typedef nvmlReturn_t (*f_pci)(nvmlDevice_t, nvmlPciInfo_t *);
typedef nvmlReturn_t (*f_mem)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*f_mem2)(nvmlDevice_t, nvmlMemory_v2_t *);
typedef nvmlReturn_t (*f_bar1)(nvmlDevice_t, nvmlBAR1Memory_t *);
typedef nvmlReturn_t (*f_brand)(nvmlDevice_t, nvmlBrandType_t *);
typedef nvmlReturn_t (*f_arch)(nvmlDevice_t, nvmlDeviceArchitecture_t *);
typedef nvmlReturn_t (*f_aff)(nvmlDevice_t, unsigned int, unsigned long *);
typedef nvmlReturn_t (*f_affscope)(nvmlDevice_t, unsigned int, unsigned long *, nvmlAffinityScope_t);
typedef nvmlReturn_t (*f_topo)(nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t *);
typedef nvmlReturn_t (*f_state)(nvmlDevice_t, nvmlEnableState_t *);
typedef nvmlReturn_t (*f_procs)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);
typedef nvmlReturn_t (*f_clock)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
static void check_telemetry(const struct nvm_gpu *g, unsigned i, nvmlDevice_t d);
static void check_health(const struct nvm_gpu *g, unsigned i, nvmlDevice_t d);
typedef const char *(*f_err)(nvmlReturn_t);
typedef nvmlReturn_t (*f_lstate)(nvmlDevice_t, unsigned int, nvmlEnableState_t *);
typedef nvmlReturn_t (*f_lpci)(nvmlDevice_t, unsigned int, nvmlPciInfo_t *);
typedef nvmlReturn_t (*f_ltype)(nvmlDevice_t, unsigned int, nvmlIntNvLinkDeviceType_t *);
typedef nvmlReturn_t (*f_luint)(nvmlDevice_t, unsigned int, unsigned int *);

/* Every NVLink of GPU i as the profile wires it: links to peers first (in
 * the profile's GPU order), then to NVSwitches, then down; past the GPU's
 * links INVALID_ARGUMENT; without NVLink NOT_SUPPORTED. */
static void check_nvlinks(const struct nvm_model *m, unsigned i, nvmlDevice_t d)
{
	const struct nvm_nvlink *nv = &m->nvlink;
	int peer_of[NVML_NVLINK_MAX_LINKS];
	unsigned up = 0;

	for (unsigned j = 0; j < m->ngpus; j++)
		for (unsigned k = 0; k < nv->peer[i][j] && up < NVML_NVLINK_MAX_LINKS; k++)
			peer_of[up++] = (int)j;
	for (; up < nv->links && nv->switched; up++)
		peer_of[up] = -1;
	for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; l++) {
		nvmlEnableState_t st = 99;
		nvmlIntNvLinkDeviceType_t type = 99;
		nvmlPciInfo_t pci;
		unsigned version = 0;
		nvmlReturn_t r = FN(f_lstate, nvmlDeviceGetNvLinkState)(d, l, &st);

		if (!nv->version) {
			CHECK(r == NVML_ERROR_NOT_SUPPORTED, "gpu %u link %u: want NOT_SUPPORTED, got %d", i, l, r);
			continue;
		}
		if (l >= nv->links) {
			CHECK(r == NVML_ERROR_INVALID_ARGUMENT, "gpu %u link %u (of %u): want INVALID_ARGUMENT, got %d",
			      i, l, nv->links, r);
			continue;
		}
		CHECK(r == 0 && st == (l < up ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED),
		      "gpu %u link %u: state %d, want %s", i, l, st, l < up ? "enabled" : "disabled");
		CHECK(FN(f_luint, nvmlDeviceGetNvLinkVersion)(d, l, &version) == 0 && version == nv->version,
		      "gpu %u link %u: version %u, want %u", i, l, version, nv->version);
		if (l >= up)
			continue;
		r = FN(f_lpci, nvmlDeviceGetNvLinkRemotePciInfo_v2)(d, l, &pci);
		CHECK(FN(f_ltype, nvmlDeviceGetNvLinkRemoteDeviceType)(d, l, &type) == 0 &&
			      type == (peer_of[l] < 0 ? NVML_NVLINK_DEVICE_TYPE_SWITCH : NVML_NVLINK_DEVICE_TYPE_GPU),
		      "gpu %u link %u: remote type %d", i, l, type);
		if (peer_of[l] >= 0) {
			const struct nvm_gpu *p = &m->gpus[peer_of[l]];

			CHECK(r == 0 && pci.domain == p->domain && pci.bus == p->bus && pci.device == p->device,
			      "gpu %u link %u: remote %s, want %s", i, l, pci.busId, p->bus_id);
		} else {
			CHECK(r == 0 && pci.domain == 0 && pci.bus == 0 && !pci.busId[0],
			      "gpu %u link %u: an NVSwitch, no PCI address of this node", i, l);
		}
	}
}

/* Where each pair of GPUs meets: the profile's GPUs sit right below their
 * root complex, so at its host bridge, else at the NUMA node or across. */
static void check_topology(const struct nvm_model *m, unsigned count)
{
	for (unsigned i = 0; i < count && i < m->ngpus; i++)
		for (unsigned j = 0; j < count && j < m->ngpus; j++) {
			const struct nvm_gpu *a = &m->gpus[i], *b = &m->gpus[j];
			nvmlGpuTopologyLevel_t want, got = -1;
			nvmlDevice_t da, db;

			if (i == j)
				want = NVML_TOPOLOGY_INTERNAL;
			else if (a->root == b->root)
				want = NVML_TOPOLOGY_HOSTBRIDGE;
			else if (m->roots[a->root].numa_node == m->roots[b->root].numa_node)
				want = NVML_TOPOLOGY_NODE;
			else
				want = NVML_TOPOLOGY_SYSTEM;
			FN(f_handle, nvmlDeviceGetHandleByIndex_v2)(i, &da);
			FN(f_handle, nvmlDeviceGetHandleByIndex_v2)(j, &db);
			CHECK(FN(f_topo, nvmlDeviceGetTopologyCommonAncestor)(da, db, &got) == 0 &&
				      got == want, "gpus %u and %u meet at level %d, want %d", i, j, got, want);
		}
}

static unsigned arch_of(const char *name)
{
	return !strcmp(name, "Blackwell") ? NVML_DEVICE_ARCH_BLACKWELL
	     : !strcmp(name, "Hopper") ? NVML_DEVICE_ARCH_HOPPER
	     : !strcmp(name, "Ampere") ? NVML_DEVICE_ARCH_AMPERE : NVML_DEVICE_ARCH_UNKNOWN;
}

static void check_device(const struct nvm_model *m, unsigned i, nvmlDevice_t d)
{
	const struct nvm_gpu *g = &m->gpus[i];
	struct nvm_cpuset want, online;
	char s[128], bus[32];
	nvmlPciInfo_t pci;
	nvmlMemory_t mem;
	nvmlMemory_v2_t mem2 = { .version = nvmlMemory_v2 };
	nvmlBAR1Memory_t bar1;
	nvmlBrandType_t brand;
	nvmlDeviceArchitecture_t arch;
	nvmlEnableState_t state;
	unsigned long aff[4096 / 64];
	unsigned u = 99, u2 = 99, pcount = 7;
	int major = 0, minor = 0;
	nvmlDevice_t other;

	CHECK(FN(f_dstr, nvmlDeviceGetName)(d, s, sizeof(s)) == 0 && !strcmp(s, g->name),
	      "gpu %u name %s, want %s", i, s, g->name);
	CHECK(FN(f_dstr, nvmlDeviceGetName)(d, s, 4) == NVML_ERROR_INSUFFICIENT_SIZE,
	      "gpu %u name into 4 bytes: want INSUFFICIENT_SIZE", i);
	CHECK(FN(f_dstr, nvmlDeviceGetUUID)(d, s, sizeof(s)) == 0 && !strcmp(s, g->uuid),
	      "gpu %u uuid %s, want %s", i, s, g->uuid);
	CHECK(FN(f_dstr, nvmlDeviceGetSerial)(d, s, sizeof(s)) == 0 && !strcmp(s, g->serial),
	      "gpu %u serial %s, want %s", i, s, g->serial);
	CHECK(FN(f_dstr, nvmlDeviceGetBoardPartNumber)(d, s, sizeof(s)) == 0 &&
		      !strcmp(s, g->board_part_number), "gpu %u part number %s", i, s);
	CHECK(FN(f_dstr, nvmlDeviceGetVbiosVersion)(d, s, sizeof(s)) == 0 &&
		      !strcmp(s, g->vbios_version), "gpu %u vbios %s", i, s);
	CHECK(FN(f_brand, nvmlDeviceGetBrand)(d, &brand) == 0 && brand == NVML_BRAND_NVIDIA,
	      "gpu %u brand %d", i, brand);
	CHECK(FN(f_arch, nvmlDeviceGetArchitecture)(d, &arch) == 0 && arch == arch_of(g->architecture),
	      "gpu %u architecture %u for %s", i, arch, g->architecture);
	CHECK(FN(f_d2int, nvmlDeviceGetCudaComputeCapability)(d, &major, &minor) == 0 &&
		      major == (int)g->cc_major && minor == (int)g->cc_minor,
	      "gpu %u compute capability %d.%d", i, major, minor);
	CHECK(FN(f_duint, nvmlDeviceGetMinorNumber)(d, &u) == 0 && u == g->minor,
	      "gpu %u minor %u, want %u", i, u, g->minor);
	CHECK(FN(f_duint, nvmlDeviceGetIndex)(d, &u) == 0 && u == i, "gpu %u index %u", i, u);
	CHECK(FN(f_pci, nvmlDeviceGetPciInfo_v3)(d, &pci) == 0 && pci.domain == g->domain &&
		      pci.bus == g->bus && pci.device == g->device &&
		      pci.pciDeviceId == ((unsigned)g->device_id << 16 | g->vendor_id) &&
		      pci.pciSubSystemId == ((unsigned)g->subsystem_device << 16 | g->subsystem_vendor),
	      "gpu %u pci info", i);
	snprintf(bus, sizeof(bus), "%08X:%02X:%02X.%X", g->domain, g->bus, g->device, g->function);
	CHECK(!strcmp(pci.busId, bus), "gpu %u busId %s, want %s", i, pci.busId, bus);
	CHECK(FN(f_pci, nvmlDeviceGetPciInfo)(d, &pci) == 0 && !strcmp(pci.busId, bus),
	      "gpu %u unversioned PciInfo", i);
	CHECK(FN(f_lookup, nvmlDeviceGetHandleByPciBusId_v2)(g->bus_id, &other) == 0 && other == d,
	      "gpu %u handle by bus id %s", i, g->bus_id);
	CHECK(FN(f_lookup, nvmlDeviceGetHandleByPciBusId_v2)(bus, &other) == 0 && other == d,
	      "gpu %u handle by NVML bus id %s", i, bus);
	CHECK(FN(f_lookup, nvmlDeviceGetHandleByUUID)(g->uuid, &other) == 0 && other == d,
	      "gpu %u handle by uuid", i);
	CHECK(FN(f_lookup, nvmlDeviceGetHandleBySerial)(g->serial, &other) == 0 && other == d,
	      "gpu %u handle by serial", i);
	CHECK(FN(f_mem, nvmlDeviceGetMemoryInfo)(d, &mem) == 0 && mem.total == g->memory_total &&
		      mem.free + mem.used == mem.total, "gpu %u memory %llu", i, mem.total);
	CHECK(FN(f_mem2, nvmlDeviceGetMemoryInfo_v2)(d, &mem2) == 0 && mem2.total == g->memory_total &&
		      mem2.reserved == g->memory_reserved, "gpu %u memory v2", i);
	mem2.version = 1;
	CHECK(FN(f_mem2, nvmlDeviceGetMemoryInfo_v2)(d, &mem2) == NVML_ERROR_ARGUMENT_VERSION_MISMATCH,
	      "gpu %u memory v2 with a wrong version", i);
	CHECK(FN(f_bar1, nvmlDeviceGetBAR1MemoryInfo)(d, &bar1) == 0 && bar1.bar1Total > 0,
	      "gpu %u BAR1", i);
	/* No profile's GPU is a NUMA node itself; the node it hangs off is
	 * its memory affinity. */
	CHECK(FN(f_duint, nvmlDeviceGetNumaNodeId)(d, &u) == NVML_ERROR_NOT_SUPPORTED,
	      "gpu %u: not a NUMA node", i);
	memset(aff, 0, sizeof(aff));
	CHECK(FN(f_affscope, nvmlDeviceGetMemoryAffinity)(d, 4, aff, NVML_AFFINITY_SCOPE_NODE) == 0 &&
		      aff[0] == 1UL << m->roots[g->root].numa_node && !aff[1],
	      "gpu %u memory affinity %#lx", i, aff[0]);
	/* CPU affinity: local_cpulist, the profile's clipped to online CPUs. */
	cpuset_read_file(&online, "/sys/devices/system/cpu/online");
	model_gpu_cpus(m, g, &online, &want);
	CHECK(FN(f_aff, nvmlDeviceGetCpuAffinity)(d, 4096 / 64, aff) == 0 &&
		      !memcmp(aff, want.bits, sizeof(aff)), "gpu %u CPU affinity", i);
	CHECK(FN(f_state, nvmlDeviceGetPersistenceMode)(d, &state) == 0 &&
		      state == NVML_FEATURE_ENABLED, "gpu %u persistence", i);
	CHECK(FN(f_d2uint, nvmlDeviceGetMigMode)(d, &u, &u2) == 0 && u == 0 && u2 == 0,
	      "gpu %u MIG disabled", i);
	CHECK(FN(f_procs, nvmlDeviceGetComputeRunningProcesses_v3)(d, &pcount, NULL) == 0 &&
		      pcount == g->tel.nprocs, "gpu %u running processes: the profile's %u", i,
	      g->tel.nprocs);
	check_telemetry(g, i, d);
	check_health(g, i, d);
	check_nvlinks(m, i, d);
}

typedef nvmlReturn_t (*f_temp)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *);
typedef nvmlReturn_t (*f_thresh)(nvmlDevice_t, nvmlTemperatureThresholds_t, unsigned int *);
typedef nvmlReturn_t (*f_energy)(nvmlDevice_t, unsigned long long *);
typedef nvmlReturn_t (*f_util)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*f_pstate)(nvmlDevice_t, nvmlPstates_t *);

static bool in_range(const struct nvm_range *r, unsigned v)
{
	return r->set && v + 0.5 >= r->lo && v - 0.5 <= r->hi;
}

/* What the profile's run-time sections say, through NVML: fixed values
 * equal, moving ones within their bounds; NOT_SUPPORTED without them. */
/* InfoROM and memory health as the profile has them; what it leaves out
 * NOT_SUPPORTED. */
static void check_health(const struct nvm_gpu *g, unsigned i, nvmlDevice_t d)
{
	typedef nvmlReturn_t (*f_irom)(nvmlDevice_t, nvmlInforomObject_t, char *, unsigned int);
	typedef nvmlReturn_t (*f_rows)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *,
				       unsigned int *);
	typedef nvmlReturn_t (*f_hist)(nvmlDevice_t, nvmlRowRemapperHistogramValues_t *);
	typedef nvmlReturn_t (*f_pages)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int *,
					unsigned long long *);
	typedef nvmlReturn_t (*f_gom)(nvmlDevice_t, nvmlGpuOperationMode_t *, nvmlGpuOperationMode_t *);
	const struct nvm_telemetry *t = &g->tel;
	char text[64] = "";
	unsigned c = 9, u = 9, p = 9, f = 9, n = 0;
	nvmlRowRemapperHistogramValues_t h = { 0 };
	nvmlGpuOperationMode_t cur, pen;
	nvmlReturn_t r;

	r = FN(f_dstr, nvmlDeviceGetInforomImageVersion)(d, text, sizeof(text));
	CHECK(t->inforom_image[0] ? r == 0 && !strcmp(text, t->inforom_image) : r == NVML_ERROR_NOT_SUPPORTED,
	      "gpu %u InfoROM image: %d \"%s\", the profile's \"%s\"", i, r, text, t->inforom_image);
	for (unsigned k = 0; k < NVML_INFOROM_COUNT; k++) {
		text[0] = '\0';
		r = FN(f_irom, nvmlDeviceGetInforomVersion)(d, (nvmlInforomObject_t)k, text, sizeof(text));
		CHECK(t->inforom_object[k][0] ? r == 0 && !strcmp(text, t->inforom_object[k])
					      : r == NVML_ERROR_NOT_SUPPORTED,
		      "gpu %u InfoROM object %u: %d \"%s\"", i, k, r, text);
	}
	r = FN(f_rows, nvmlDeviceGetRemappedRows)(d, &c, &u, &p, &f);
	CHECK(t->remapped ? r == 0 && c == t->remap_corr && u == t->remap_unc && p == t->remap_pending &&
				    f == t->remap_failed
			  : r == NVML_ERROR_NOT_SUPPORTED,
	      "gpu %u remapped rows: %d %u %u %u %u", i, r, c, u, p, f);
	r = FN(f_hist, nvmlDeviceGetRowRemapperHistogram)(d, &h);
	CHECK(t->histogram ? r == 0 && h.max == t->remap_banks[0] && h.none == t->remap_banks[4]
			   : r == NVML_ERROR_NOT_SUPPORTED,
	      "gpu %u bank remap histogram: %d max %u", i, r, h.max);
	r = FN(f_pages, nvmlDeviceGetRetiredPages)(d, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &n, NULL);
	CHECK(t->retired ? r == 0 && n == t->nretired[1] : r == NVML_ERROR_NOT_SUPPORTED,
	      "gpu %u retired pages (double bit): %d, %u", i, r, n);
	r = FN(f_gom, nvmlDeviceGetGpuOperationMode)(d, &cur, &pen);
	CHECK(t->opmode_current >= 0 ? r == 0 && (int)cur == t->opmode_current : r == NVML_ERROR_NOT_SUPPORTED,
	      "gpu %u operation mode: %d", i, r);
}

static void check_telemetry(const struct nvm_gpu *g, unsigned i, nvmlDevice_t d)
{
	const struct nvm_telemetry *t = &g->tel;
	unsigned u = 0, u2 = 0;
	unsigned long long e1 = 0, e2 = 0;
	nvmlUtilization_t util;
	nvmlPstates_t ps;

	if (!t->present) {
		CHECK(FN(f_clock, nvmlDeviceGetClockInfo)(d, NVML_CLOCK_SM, &u) == NVML_ERROR_NOT_SUPPORTED &&
			      FN(f_duint, nvmlDeviceGetPowerUsage)(d, &u) == NVML_ERROR_NOT_SUPPORTED,
		      "gpu %u without telemetry in the profile: clocks and power NOT_SUPPORTED", i);
		return;
	}
	CHECK(FN(f_clock, nvmlDeviceGetClockInfo)(d, NVML_CLOCK_SM, &u) == 0 && u == t->clk_cur[1],
	      "gpu %u SM clock %u MHz (the profile's %u)", i, u, t->clk_cur[1]);
	CHECK(FN(f_clock, nvmlDeviceGetMaxClockInfo)(d, NVML_CLOCK_MEM, &u) == 0 && u == t->clk_max[2],
	      "gpu %u max memory clock %u MHz", i, u);
	u2 = 64;
	{
		unsigned list[64];

		CHECK(FN(f_d2uint, nvmlDeviceGetSupportedMemoryClocks)(d, &u2, list) == 0 &&
			      u2 == t->nmem_clocks && list[0] == t->mem_clocks[0],
		      "gpu %u supported memory clocks (%u)", i, u2);
	}
	CHECK(FN(f_duint, nvmlDeviceGetPowerManagementLimit)(d, &u) == 0 && u == t->power_limit,
	      "gpu %u power limit %u mW", i, u);
	CHECK(FN(f_duint, nvmlDeviceGetPowerUsage)(d, &u) == 0 && in_range(&t->power, u),
	      "gpu %u power draw %u mW within [%.0f, %.0f]", i, u, t->power.lo, t->power.hi);
	CHECK(FN(f_temp, nvmlDeviceGetTemperature)(d, NVML_TEMPERATURE_GPU, &u) == 0 &&
		      in_range(&t->temp_gpu, u),
	      "gpu %u temperature %u C within [%.0f, %.0f]", i, u, t->temp_gpu.lo, t->temp_gpu.hi);
	CHECK(FN(f_thresh, nvmlDeviceGetTemperatureThreshold)(d, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &u) == 0 &&
		      u == t->temp_shutdown, "gpu %u shutdown temperature %u C", i, u);
	CHECK(FN(f_util, nvmlDeviceGetUtilizationRates)(d, &util) == 0 &&
		      in_range(&t->util_gpu, util.gpu) && in_range(&t->util_mem, util.memory),
	      "gpu %u utilization %u %% / %u %% within the profile's bands", i, util.gpu, util.memory);
	CHECK(FN(f_pstate, nvmlDeviceGetPerformanceState)(d, &ps) == 0 && (unsigned)ps == t->pstate,
	      "gpu %u performance state P%u", i, (unsigned)ps);
	CHECK(FN(f_duint, nvmlDeviceGetCurrPcieLinkGeneration)(d, &u) == 0 && u == t->pcie_gen,
	      "gpu %u PCIe generation %u", i, u);
	CHECK(FN(f_duint, nvmlDeviceGetFanSpeed)(d, &u) ==
		      (t->fans ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED),
	      "gpu %u fan speed %s", i, t->fans ? "read" : "NOT_SUPPORTED (no fan)");
	FN(f_energy, nvmlDeviceGetTotalEnergyConsumption)(d, &e1);
	if (i == 0) /* once: it takes a second */
		sleep(2);
	CHECK(FN(f_energy, nvmlDeviceGetTotalEnergyConsumption)(d, &e2) == 0 && e1 >= t->energy_base_mj &&
		      (i ? e2 >= e1 : e2 > e1),
	      "gpu %u energy only grows (%llu then %llu mJ)", i, e1, e2);
}

int main(int argc, char **argv)
{
	static struct nvm_model m;
	char s[128], want[32];
	unsigned count = 0;
	int cuda = 0;

	if (argc != 3)
		return fprintf(stderr, "usage: check_nvml LIB PROFILE|--outside\n"), 2;
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib)
		return printf("FAIL: dlopen: %s\n0 passed, 1 failed\n", dlerror()), 1;
	if (!strcmp(argv[2], "--outside")) {
		nvmlReturn_t r = FN(f_void, nvmlInit_v2)();

		CHECK(r == NVML_ERROR_DRIVER_NOT_LOADED, "outside: nvmlInit_v2 gave %d", r);
		CHECK(!strcmp(FN(f_err, nvmlErrorString)(r), "Driver Not Loaded"), "error string");
		CHECK(FN(f_uint, nvmlDeviceGetCount_v2)(&count) == NVML_ERROR_UNINITIALIZED,
		      "outside: count without init");
		printf("%d passed, %d failed\n", passed, failed);
		return failed != 0;
	}
	if (profile_load(argv[2], 0, &m))
		return printf("0 passed, 1 failed\n"), 1;
	CHECK(FN(f_void, nvmlInit_v2)() == 0, "nvmlInit_v2");
	CHECK(FN(f_void, nvmlInit)() == 0, "nvmlInit (second reference)");
	CHECK(FN(f_str, nvmlSystemGetDriverVersion)(s, sizeof(s)) == 0 && !strcmp(s, m.driver_version),
	      "driver version %s, want %s", s, m.driver_version);
	CHECK(FN(f_str, nvmlSystemGetNVMLVersion)(s, sizeof(s)) == 0 && !strcmp(s, m.nvml_version),
	      "NVML version %s, want %s", s, m.nvml_version);
	snprintf(want, sizeof(want), "%s", m.cuda_version);
	CHECK(FN(f_int, nvmlSystemGetCudaDriverVersion_v2)(&cuda) == 0 &&
		      cuda == atoi(want) * 1000 + atoi(strchr(want, '.') + 1) * 10,
	      "CUDA driver version %d for %s", cuda, want);
	CHECK(FN(f_uint, nvmlDeviceGetCount_v2)(&count) == 0 && count == m.ngpus,
	      "count %u, want %u", count, m.ngpus);
	CHECK(FN(f_uint, nvmlDeviceGetCount)(&count) == 0 && count == m.ngpus, "unversioned count");
	for (unsigned i = 0; i < count && i < m.ngpus; i++) {
		nvmlDevice_t d, d1;

		CHECK(FN(f_handle, nvmlDeviceGetHandleByIndex_v2)(i, &d) == 0, "handle %u", i);
		CHECK(FN(f_handle, nvmlDeviceGetHandleByIndex)(i, &d1) == 0 && d1 == d, "handle v1 %u", i);
		check_device(&m, i, d);
	}
	check_topology(&m, count);
	CHECK(FN(f_handle, nvmlDeviceGetHandleByIndex_v2)(count, &(nvmlDevice_t){ 0 }) ==
		      NVML_ERROR_INVALID_ARGUMENT, "handle past the last GPU");
	CHECK(FN(f_lookup, nvmlDeviceGetHandleByUUID)("GPU-00000000-0000-0000-0000-000000000000",
						       &(nvmlDevice_t){ 0 }) == NVML_ERROR_NOT_FOUND,
	      "unknown UUID: NOT_FOUND");
	CHECK(FN(f_void, nvmlShutdown)() == 0, "shutdown 1");
	CHECK(FN(f_uint, nvmlDeviceGetCount_v2)(&count) == 0, "still initialised after one shutdown");
	CHECK(FN(f_void, nvmlShutdown)() == 0, "shutdown 2");
	CHECK(FN(f_uint, nvmlDeviceGetCount_v2)(&count) == NVML_ERROR_UNINITIALIZED,
	      "uninitialised after the last shutdown");
	CHECK(FN(f_void, nvmlShutdown)() == NVML_ERROR_UNINITIALIZED, "shutdown once too often");
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
