/* What a process sees of GPU faults through NVML (dlopen, as Slurm and
 * nvidia-smi load it), and of the files a fault replaces:
 *
 *   check_faults LIB events MS N     waits for N Xid events (each within MS),
 *                                    registered on every GPU; prints "ready"
 *                                    once registered, then "xid BUS CODE" per
 *                                    event or "timeout"
 *   check_faults LIB ecc BUS         the GPU's ECC counters and remapping
 *   check_faults LIB handles         per GPU index: its bus id, or the error
 *   check_faults LIB hold BUS FILE   takes the GPU's handle, prints "ready",
 *                                    waits for FILE, then asks its name
 *   check_faults - reads PATH N A B  reads PATH until it has read file A's
 *                                    bytes and B's N times each (at most
 *                                    READS_MAX reads): how many reads were
 *                                    A, B, or anything else
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml.h"

static void *lib;

static void *sym(const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		printf("missing %s\n", name);
		exit(2);
	}
	return p;
}
#define FN(type, name) ((type)sym(#name))

typedef nvmlReturn_t (*f_void)(void);
typedef nvmlReturn_t (*f_uint)(unsigned int *);
typedef nvmlReturn_t (*f_handle)(unsigned int, nvmlDevice_t *);
typedef nvmlReturn_t (*f_lookup)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*f_pci)(nvmlDevice_t, nvmlPciInfo_t *);
typedef nvmlReturn_t (*f_name)(nvmlDevice_t, char *, unsigned int);
typedef const char *(*f_err)(nvmlReturn_t);

static const char *err(nvmlReturn_t r)
{
	return FN(f_err, nvmlErrorString)(r);
}

static int init(void)
{
	nvmlReturn_t r = FN(f_void, nvmlInit_v2)();

	if (r != NVML_SUCCESS)
		printf("init: %s\n", err(r));
	return r != NVML_SUCCESS;
}

/* nvmlInit, then the GPU at bus id bus; says what failed. */
static int init_and_find(const char *bus, nvmlDevice_t *d)
{
	nvmlReturn_t r;

	if (init())
		return 1;
	r = FN(f_lookup, nvmlDeviceGetHandleByPciBusId_v2)(bus, d);
	if (r != NVML_SUCCESS)
		printf("handle: %s\n", err(r));
	return r != NVML_SUCCESS;
}

static int events(unsigned ms, unsigned n)
{
	static nvmlDevice_t handles_[64];
	static char bus_[64][32];
	nvmlEventSet_t set;
	unsigned count = 0;

	if (init())
		return 1;
	FN(f_uint, nvmlDeviceGetCount_v2)(&count);
	if (((nvmlReturn_t(*)(nvmlEventSet_t *))sym("nvmlEventSetCreate"))(&set) != NVML_SUCCESS)
		return printf("create: failed\n"), 1;
	/* Each GPU's bus id now: a GPU that falls off the bus answers no
	 * more questions, its events name it by its handle. */
	for (unsigned i = 0; i < count && i < 64; i++) {
		nvmlPciInfo_t pci;

		if (FN(f_handle, nvmlDeviceGetHandleByIndex_v2)(i, &handles_[i]) != NVML_SUCCESS)
			continue;
		FN(f_pci, nvmlDeviceGetPciInfo_v3)(handles_[i], &pci);
		snprintf(bus_[i], sizeof(bus_[i]), "%s", pci.busId);
		((nvmlReturn_t(*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t))sym(
			"nvmlDeviceRegisterEvents"))(handles_[i], nvmlEventTypeXidCriticalError, set);
	}
	printf("ready\n");
	fflush(stdout);
	for (unsigned k = 0; k < n; k++) {
		nvmlEventData_t e;
		nvmlReturn_t r = ((nvmlReturn_t(*)(nvmlEventSet_t, nvmlEventData_t *, unsigned))sym(
			"nvmlEventSetWait_v2"))(set, &e, ms);

		if (r == NVML_ERROR_TIMEOUT) {
			printf("timeout\n");
			break;
		}
		if (r != NVML_SUCCESS)
			return printf("wait: %s\n", err(r)), 1;
		const char *bus = "(unknown handle)";

		for (unsigned i = 0; i < count && i < 64; i++)
			if (handles_[i] == e.device)
				bus = bus_[i];
		printf("xid %s %llu type %llu\n", bus, e.eventData, e.eventType);
		fflush(stdout);
	}
	((nvmlReturn_t(*)(nvmlEventSet_t))sym("nvmlEventSetFree"))(set);
	return 0;
}

static int ecc(const char *bus)
{
	unsigned long long vol = 99, agg = 99, corr = 99;
	unsigned c = 9, u = 9, p = 9, f = 9;
	nvmlEnableState_t pend = 9, cur = 9, pen = 9;
	nvmlDevice_t d;

	if (init_and_find(bus, &d))
		return 1;
	typedef nvmlReturn_t (*f_total)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
					 unsigned long long *);
	FN(f_total, nvmlDeviceGetTotalEccErrors)(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &vol);
	FN(f_total, nvmlDeviceGetTotalEccErrors)(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &agg);
	FN(f_total, nvmlDeviceGetTotalEccErrors)(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &corr);
	((nvmlReturn_t(*)(nvmlDevice_t, unsigned *, unsigned *, unsigned *, unsigned *))sym(
		"nvmlDeviceGetRemappedRows"))(d, &c, &u, &p, &f);
	/* NOT_SUPPORTED on a GPU that remaps rows instead (its profile has
	 * no retired_pages): printed as 9. */
	((nvmlReturn_t(*)(nvmlDevice_t, nvmlEnableState_t *))sym(
		"nvmlDeviceGetRetiredPagesPendingStatus"))(d, &pend);
	((nvmlReturn_t(*)(nvmlDevice_t, nvmlEnableState_t *, nvmlEnableState_t *))sym(
		"nvmlDeviceGetEccMode"))(d, &cur, &pen);
	printf("ecc_mode=%d volatile=%llu aggregate=%llu corrected=%llu remapped_corr=%u "
	       "remapped_unc=%u remap_pending=%u remap_failed=%u retired_pending=%d\n",
	       cur, vol, agg, corr, c, u, p, f, pend);
	return 0;
}

static int handles(void)
{
	unsigned count = 0;

	if (init())
		return 1;
	FN(f_uint, nvmlDeviceGetCount_v2)(&count);
	printf("count=%u\n", count);
	for (unsigned i = 0; i < count; i++) {
		nvmlPciInfo_t pci;
		nvmlDevice_t d;
		nvmlReturn_t r = FN(f_handle, nvmlDeviceGetHandleByIndex_v2)(i, &d);

		if (r == NVML_SUCCESS)
			r = FN(f_pci, nvmlDeviceGetPciInfo_v3)(d, &pci);
		printf("%u: %s\n", i, r == NVML_SUCCESS ? pci.busId : err(r));
	}
	return 0;
}

static int hold(const char *bus, const char *file)
{
	char name[96];
	nvmlDevice_t d;
	nvmlReturn_t r;

	if (init_and_find(bus, &d))
		return 1;
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < 3000 && access(file, F_OK); i++)
		usleep(10000);
	r = FN(f_name, nvmlDeviceGetName)(d, name, sizeof(name));
	printf("name: %s\n", r == NVML_SUCCESS ? name : err(r));
	return 0;
}

static long slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len, f);
	fclose(f);
	return (long)n;
}

/* Reads until both versions were seen N times each, not a fixed number of
 * times: how many reads fit between two changes depends on the machine,
 * and a fixed count could fall wholly inside one version. The cap ends
 * it when the changes stop (then one count stays below N). */
#define READS_MAX 2000000u

static int reads(const char *path, unsigned n, const char *a, const char *b)
{
	static char want_a[8192], want_b[8192], got[8192];
	long la = slurp(a, want_a, sizeof(want_a)), lb = slurp(b, want_b, sizeof(want_b));
	unsigned na = 0, nb = 0, other = 0;

	if (la < 0 || lb < 0)
		return printf("cannot read %s or %s\n", a, b), 1;
	for (unsigned i = 0; i < READS_MAX && (na < n || nb < n); i++) {
		long l = slurp(path, got, sizeof(got));

		if (l == la && !memcmp(got, want_a, (size_t)l))
			na++;
		else if (l == lb && !memcmp(got, want_b, (size_t)l))
			nb++;
		else
			other++;
	}
	printf("a=%u b=%u other=%u\n", na, nb, other);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && !strcmp(argv[2], "reads"))
		return reads(argv[3], (unsigned)atoi(argv[4]), argv[5], argv[6]);
	if (argc < 3)
		return fprintf(stderr, "usage: see the comment at the top\n"), 2;
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib)
		return printf("dlopen: %s\n", dlerror()), 1;
	if (!strcmp(argv[2], "events") && argc == 5)
		return events((unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (!strcmp(argv[2], "ecc") && argc == 4)
		return ecc(argv[3]);
	if (!strcmp(argv[2], "handles"))
		return handles();
	if (!strcmp(argv[2], "hold") && argc == 5)
		return hold(argv[3], argv[4]);
	return fprintf(stderr, "usage: see the comment at the top\n"), 2;
}
