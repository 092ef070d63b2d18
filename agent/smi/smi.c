/* nvmirage smi: a small nvidia-smi look-alike on nvmirage's NVML, with the
 * real tool's output for -L and --query-gpu=...--format=csv. Any other form
 * is refused as not supported, never answered wrongly. */
#include <dlfcn.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "smi/smi.h"
#include "lib/exit_status.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "nvml.h"

static const char *me = "nvmirage smi";

struct nvml {
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*driver)(char *, unsigned int);
};

static void usage(FILE *f)
{
	fprintf(f, "usage: %s -L\n"
		   "       %s --query-gpu=FIELD[,FIELD...] --format=csv[,noheader]\n\n"
		   "Lists the GPUs NVML reports to this process, as nvidia-smi does, through\n"
		   "nvmirage's libnvidia-ml.so.1 (next to the binary, or installed in\n"
		   "../lib/nvmirage from it; else the system's).\n"
		   "Fields: index, name, uuid, pci.bus_id, memory.total, driver_version.\n", me, me);
}

/* What this look-alike does not answer: said so, status 2. */
static int not_supported(const char *what)
{
	fprintf(stderr, "%s: %s is not supported by nvmirage (it answers -L and "
			"--query-gpu=FIELDS --format=csv); see --help\n", me, what);
	return NVM_EXIT_USAGE;
}

/* The library next to this binary (or installed beside it), so the
 * look-alike uses nvmirage's NVML; else the one the dynamic linker finds
 * (in a target, the tree's). */
static void *open_nvml(void)
{
	char path[PATH_MAX];
	void *h = fs_find_beside("libnvidia-ml.so.1", path, sizeof(path)) ? NULL
									 : dlopen(path, RTLD_NOW);

	return h ? h : dlopen("libnvidia-ml.so.1", RTLD_NOW);
}

static int bind(void *h, struct nvml *n)
{
	*(void **)&n->init = dlsym(h, "nvmlInit_v2");
	*(void **)&n->shutdown = dlsym(h, "nvmlShutdown");
	*(void **)&n->count = dlsym(h, "nvmlDeviceGetCount_v2");
	*(void **)&n->handle = dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&n->name = dlsym(h, "nvmlDeviceGetName");
	*(void **)&n->uuid = dlsym(h, "nvmlDeviceGetUUID");
	*(void **)&n->pci = dlsym(h, "nvmlDeviceGetPciInfo_v3");
	*(void **)&n->memory = dlsym(h, "nvmlDeviceGetMemoryInfo");
	*(void **)&n->driver = dlsym(h, "nvmlSystemGetDriverVersion");
	return n->init && n->shutdown && n->count && n->handle && n->name && n->uuid &&
	       n->pci && n->memory && n->driver ? 0 : -1;
}

static const char *const fields[] = { "index", "name", "uuid", "pci.bus_id", "memory.total",
				      "driver_version" };
static const char *const headers[] = { "index", "name", "uuid", "pci.bus_id",
				       "memory.total [MiB]", "driver_version" };
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static void print_field(struct nvml *n, nvmlDevice_t d, unsigned i, int f, const char *driver)
{
	char buf[128] = "[N/A]";
	nvmlPciInfo_t pci;
	nvmlMemory_t mem;

	switch (f) {
	case 0: printf("%u", i); return;
	case 1: n->name(d, buf, sizeof(buf)); break;
	case 2: n->uuid(d, buf, sizeof(buf)); break;
	case 3:
		if (n->pci(d, &pci) == NVML_SUCCESS)
			snprintf(buf, sizeof(buf), "%s", pci.busId);
		break;
	case 4:
		if (n->memory(d, &mem) == NVML_SUCCESS)
			snprintf(buf, sizeof(buf), "%llu MiB", mem.total >> 20);
		break;
	default: snprintf(buf, sizeof(buf), "%s", driver);
	}
	fputs(buf, stdout);
}

int smi_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list-gpus", no_argument, 0, 'L' },
		{ "query-gpu", required_argument, 0, 'Q' },
		{ "format", required_argument, 0, 'F' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	int want[NFIELDS], nwant = 0, c;
	bool list = false, header = true, csv = false;
	char query[256] = "", driver[80] = "";
	struct nvml n;
	unsigned count;
	int status = 0;
	void *h;

	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	if (!strcmp(base, "nvidia-smi"))
		me = "nvidia-smi";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "Lh", opts, NULL)) != -1) {
		switch (c) {
		case 'L': list = true; break;
		case 'Q': snprintf(query, sizeof(query), "%s", optarg); break;
		case 'F':
			csv = !strcmp(optarg, "csv") || !strcmp(optarg, "csv,noheader");
			header = !strstr(optarg, "noheader");
			if (!csv)
				return not_supported("--format other than csv and csv,noheader");
			break;
		case 'h': usage(stdout); return 0;
		default: return not_supported(argv[optind - 1]);
		}
	}
	if (optind < argc)
		return not_supported(argv[optind]);
	for (char *tok = strtok(query, ","); tok; tok = strtok(NULL, ",")) {
		unsigned f = 0;

		while (f < NFIELDS && strcmp(tok, fields[f]))
			f++;
		if (f == NFIELDS || nwant == (int)NFIELDS) {
			fprintf(stderr, "%s: --query-gpu field \"%s\" is not supported by nvmirage "
					"(it has index, name, uuid, pci.bus_id, memory.total, "
					"driver_version)\n", me, tok);
			return NVM_EXIT_USAGE;
		}
		want[nwant++] = (int)f;
	}
	if (!list && !nwant)
		return not_supported("the table (no option)");
	if (list && nwant) {
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	if (nwant && !csv)
		return not_supported("--query-gpu without --format=csv");
	h = open_nvml();
	if (!h || bind(h, &n)) {
		fprintf(stderr, "%s: cannot load libnvidia-ml.so.1: %s\n", me, dlerror());
		return NVM_EXIT_FAIL;
	}
	/* nvidia-smi's own words and exit statuses, as measured on a real
	 * node: without a driver; with nvidiactl denied by the device cgroup;
	 * with every GPU denied. */
	switch (n.init()) {
	case NVML_SUCCESS:
		break;
	case NVML_ERROR_DRIVER_NOT_LOADED:
		printf("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
		       "driver. Make sure that the latest NVIDIA driver is installed and running.\n\n");
		return 9;
	default:
		printf("Failed to initialize NVML: Unknown Error\n");
		return 255;
	}
	n.count(&count);
	if (!count) {
		n.shutdown();
		printf(list ? "No devices found.\n" : "No devices were found\n");
		return list ? 0 : 6;
	}
	n.driver(driver, sizeof(driver));
	if (nwant && header)
		for (int f = 0; f < nwant; f++)
			printf("%s%s", headers[want[f]], f + 1 < nwant ? ", " : "\n");
	for (unsigned i = 0; i < count; i++) {
		nvmlDevice_t d;
		char name[96] = "", uuid[96] = "";
		nvmlReturn_t r = n.handle(i, &d);

		/* nvidia-smi names the GPU by its bus id here, which a lost
		 * GPU's handle no longer gives; nvmirage names it by index. */
		if (r == NVML_ERROR_GPU_IS_LOST) {
			printf("Unable to determine the device handle for GPU %u: GPU is lost.  "
			       "Reboot the system to recover this GPU\n", i);
			status = 15; /* nvidia-smi's: the GPU has fallen off the bus */
			continue;
		}
		if (r != NVML_SUCCESS)
			continue;
		if (list) {
			n.name(d, name, sizeof(name));
			n.uuid(d, uuid, sizeof(uuid));
			printf("GPU %u: %s (UUID: %s)\n", i, name, uuid);
			continue;
		}
		for (int f = 0; f < nwant; f++) {
			print_field(&n, d, i, want[f], driver);
			fputs(f + 1 < nwant ? ", " : "\n", stdout);
		}
	}
	n.shutdown();
	return status;
}
