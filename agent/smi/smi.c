/* nvmirage smi: an nvidia-smi look-alike on nvmirage's NVML. It answers the
 * forms people use (the table, -L, -q, --query-gpu and
 * --query-compute-apps with --format=csv, topo -m, each with -i) in the
 * real tool's words; any other form is refused as not supported, never
 * answered wrongly. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smi/smi.h"
#include "smi/forms.h"
#include "lib/exit_status.h"

static const char *me = "nvmirage smi";

enum form { TABLE, LIST, QUERY, CSV, TOPO };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-i ID[,ID...]] [-L | -q | topo -m]\n"
		"       %s [-i ID[,ID...]] --query-gpu=FIELD[,FIELD...] --format=csv[,noheader]\n"
		"       %s [-i ID[,ID...]] --query-compute-apps=FIELD[,...] --format=csv[,noheader]\n\n"
		"An nvidia-smi look-alike on nvmirage's NVML: what NVML reports to this process,\n"
		"in nvidia-smi's words and exit statuses. With no option, the GPU table and its\n"
		"processes; -L lists the GPUs; -q reports each GPU's identity, PCI, memory,\n"
		"ECC, temperature, power and clocks; topo -m prints the connection matrix.\n"
		"-i picks GPUs by index. NVML is nvmirage's libnvidia-ml.so.1 next to the\n"
		"binary (or installed in ../lib/nvmirage from it), else the system's.\n\n"
		"--query-gpu fields: %s\n\n--query-compute-apps fields: %s\n\n"
		"Any other option or form is refused: \"not supported by nvmirage\", status 2.\n",
		me, me, me, smi_csv_names(false), smi_csv_names(true));
}

/* What this look-alike does not answer: said so, status 2. */
static int not_supported(const char *what)
{
	fprintf(stderr, "%s: %s is not supported by nvmirage (see --help for the forms it "
			"answers)\n", me, what);
	return NVM_EXIT_USAGE;
}

/* -i's list of indices into want[]; -1 on anything else. */
static int parse_ids(const char *list, bool want[64])
{
	char copy[256], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long i = strtoul(tok, &end, 10);

		if (*end || end == tok || i >= 64)
			return -1;
		want[i] = true;
	}
	return 0;
}

/* nvidia-smi's own words and exit statuses, as measured on a real node:
 * without a driver; with nvidiactl denied by the device cgroup. */
static int init_failed(nvmlReturn_t r)
{
	if (r == NVML_ERROR_DRIVER_NOT_LOADED) {
		printf("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
		       "driver. Make sure that the latest NVIDIA driver is installed and running.\n\n");
		return 9;
	}
	printf("Failed to initialize NVML: Unknown Error\n");
	return 255;
}

/* The GPUs NVML gives this process, those -i picked (all without -i).
 * A lost GPU is said as nvidia-smi says it, and sets status 15. */
static unsigned pick_gpus(const struct smi_api *api, unsigned count, const bool *want, bool any,
			  struct smi_gpu *out, int *status)
{
	unsigned n = 0;

	for (unsigned i = 0; i < count && i < 64; i++) {
		nvmlDevice_t d;
		nvmlReturn_t r;

		if (any && !want[i])
			continue;
		r = api->handle(i, &d);
		/* nvidia-smi names the GPU by its bus id here, which a lost
		 * GPU's handle no longer gives; nvmirage names it by index. */
		if (r == NVML_ERROR_GPU_IS_LOST) {
			printf("Unable to determine the device handle for GPU %u: GPU is lost.  "
			       "Reboot the system to recover this GPU\n", i);
			*status = 15; /* nvidia-smi's: the GPU has fallen off the bus */
			continue;
		}
		if (r == NVML_SUCCESS)
			out[n++] = (struct smi_gpu){ .index = i, .dev = d };
	}
	return n;
}

/* A GPU's MIG devices, under it as nvidia-smi -L lists them:
 * "  MIG 3g.20gb     Device  0: (UUID: MIG-...)". */
static void list_mig(const struct smi_api *api, nvmlDevice_t d)
{
	unsigned cur, pending, max = 0;

	if (SMI(api, mig, d, &cur, &pending) != NVML_SUCCESS || cur != NVML_DEVICE_MIG_ENABLE ||
	    SMI(api, mig_max, d, &max) != NVML_SUCCESS)
		return;
	for (unsigned k = 0; k < max; k++) {
		char name[128] = "", uuid[96] = "";
		const char *mig;
		nvmlDevice_t m;

		if (SMI(api, mig_handle, d, k, &m) != NVML_SUCCESS)
			break;
		SMI(api, name, m, name, sizeof(name));
		SMI(api, uuid, m, uuid, sizeof(uuid));
		mig = strstr(name, "MIG ") ? strstr(name, "MIG ") : name;
		printf("  %-16sDevice %2u: (UUID: %s)\n", mig, k, uuid);
	}
}

static int list(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		char name[96] = "", uuid[96] = "";

		SMI(api, name, gpus[i].dev, name, sizeof(name));
		SMI(api, uuid, gpus[i].dev, uuid, sizeof(uuid));
		printf("GPU %u: %s (UUID: %s)\n", gpus[i].index, name, uuid);
		list_mig(api, gpus[i].dev);
	}
	return 0;
}

static int run(enum form form, const struct smi_csv *csv, const bool *want, bool any)
{
	struct smi_api api;
	struct smi_gpu gpus[64];
	char err[256];
	unsigned count = 0, n;
	int status = 0, r;
	nvmlReturn_t init;

	if (smi_api_open(&api, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", me, err);
		return NVM_EXIT_FAIL;
	}
	init = api.init();
	if (init != NVML_SUCCESS)
		return init_failed(init);
	api.count(&count);
	for (unsigned i = 0; any && i < 64; i++)
		if (want[i] && i >= count) {
			api.shutdown();
			printf("No devices were found\n");
			return 6;
		}
	n = pick_gpus(&api, count, want, any, gpus, &status);
	if (!count) {
		api.shutdown();
		printf(form == LIST ? "No devices found.\n" : "No devices were found\n");
		return form == LIST ? 0 : 6;
	}
	switch (form) {
	case LIST: r = list(&api, gpus, n); break;
	case QUERY: r = smi_query(&api, gpus, n); break;
	case CSV: r = smi_csv(&api, csv, gpus, n, count); break;
	case TOPO: r = smi_topo(&api, gpus, n); break;
	default: r = smi_table(&api, gpus, n); break;
	}
	api.shutdown();
	return r ? r : status;
}

int smi_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list-gpus", no_argument, 0, 'L' },
		{ "query", no_argument, 0, 'q' },
		{ "id", required_argument, 0, 'i' },
		{ "query-gpu", required_argument, 0, 'G' },
		{ "query-compute-apps", required_argument, 0, 'A' },
		{ "format", required_argument, 0, 'F' },
		{ "help", no_argument, 0, 'h' },
		{ 0 },
	};
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	struct smi_csv csv = { .header = true };
	const char *fields = NULL, *format = NULL;
	bool want[64] = { false }, any = false;
	enum form form = TABLE;
	int nforms = 0, c;
	char bad[256];

	if (!strcmp(base, "nvidia-smi"))
		me = "nvidia-smi";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+Lqi:h", opts, NULL)) != -1) {
		switch (c) {
		case 'L': form = LIST; nforms++; break;
		case 'q': form = QUERY; nforms++; break;
		case 'G':
		case 'A':
			form = CSV;
			nforms++;
			csv.apps = c == 'A';
			fields = optarg;
			break;
		case 'F': format = optarg; break;
		case 'i':
			if (parse_ids(optarg, want))
				return not_supported("-i other than GPU indices");
			any = true;
			break;
		case 'h': usage(stdout); return 0;
		default: return not_supported(argv[optind - 1]);
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind], "topo") || optind + 2 != argc || strcmp(argv[optind + 1], "-m"))
			return not_supported(strcmp(argv[optind], "topo") ? argv[optind]
									   : "topo other than topo -m");
		form = TOPO;
		nforms++;
	}
	if (nforms > 1) {
		usage(stderr);
		return NVM_EXIT_USAGE;
	}
	if (form == CSV) {
		if (!format || (strcmp(format, "csv") && strcmp(format, "csv,noheader")))
			return not_supported("--query-gpu or --query-compute-apps without "
					     "--format=csv or csv,noheader");
		csv.header = !strstr(format, "noheader");
		if (smi_csv_parse(&csv, fields, bad, sizeof(bad))) {
			fprintf(stderr, "%s: field \"%s\" is not supported by nvmirage (it has %s)\n",
				me, bad, smi_csv_names(csv.apps));
			return NVM_EXIT_USAGE;
		}
	} else if (format) {
		return not_supported("--format without --query-gpu or --query-compute-apps");
	}
	return run(form, &csv, want, any);
}
