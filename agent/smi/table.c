/* nvidia-smi's default output: the GPU table and the processes box, in
 * driver 580's layout (../reference smi.txt, a real H200): 91 columns, a
 * three-line row per GPU. */
#include <stdio.h>
#include <time.h>

#include "smi/forms.h"

#define RULE "+-----------------------------------------+------------------------+----------------------+\n"
#define WIDE_RULE "+-----------------------------------------------------------------------------------------+\n"

static void banner(const struct smi_api *api)
{
	char driver[80] = "N/A", cuda[16] = "N/A", now[32];
	time_t t = time(NULL);
	int v;

	SMI(api, driver, driver, sizeof(driver));
	if (SMI(api, cuda, &v) == NVML_SUCCESS)
		snprintf(cuda, sizeof(cuda), "%d.%d", v / 1000, v % 1000 / 10);
	strftime(now, sizeof(now), "%a %b %e %H:%M:%S %Y", localtime(&t));
	printf("%s       \n", now);
	fputs(WIDE_RULE, stdout);
	/* The tool's own version is the driver's: one install, as on a node. */
	printf("| NVIDIA-SMI %-22s Driver Version: %-14s CUDA Version: %-9s|\n", driver, driver, cuda);
	fputs(RULE, stdout);
	fputs("| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
	      "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
	      "|                                         |                        |               MIG M. |\n"
	      "|=========================================+========================+======================|\n",
	      stdout);
}

static void gpu_rows(const struct smi_api *api, const struct smi_gpu *g)
{
	char name[96] = "N/A", bus[32] = "N/A", ecc[16] = "N/A", fan[8] = "N/A", temp[8] = "N/A";
	char perf[8] = "N/A", power[24] = "N/A", util[8] = "N/A", mig[16] = "N/A", used[16] = "N/A",
	     total[16] = "N/A";
	nvmlEnableState_t persist = NVML_FEATURE_DISABLED, disp = NVML_FEATURE_DISABLED, cur, pend;
	nvmlComputeMode_t mode = NVML_COMPUTEMODE_COUNT;
	nvmlPstates_t ps;
	nvmlPciInfo_t pci;
	nvmlMemory_v2_t mem = { .version = nvmlMemory_v2 };
	nvmlUtilization_t u;
	unsigned long long errors;
	unsigned x, cap, nfans = 0, m1, m2;
	nvmlDevice_t d = g->dev;

	SMI(api, name, d, name, sizeof(name));
	if (SMI(api, pci, d, &pci) == NVML_SUCCESS)
		snprintf(bus, sizeof(bus), "%s", pci.busId);
	SMI(api, persistence, d, &persist);
	SMI(api, display_active, d, &disp);
	if (SMI(api, ecc_mode, d, &cur, &pend) == NVML_SUCCESS && cur == NVML_FEATURE_ENABLED &&
	    SMI(api, ecc_total, d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &errors) ==
		    NVML_SUCCESS)
		snprintf(ecc, sizeof(ecc), "%llu", errors);
	if (SMI(api, fans, d, &nfans) == NVML_SUCCESS && nfans &&
	    SMI(api, fan, d, &x) == NVML_SUCCESS)
		snprintf(fan, sizeof(fan), "%u%%", x);
	if (SMI(api, temperature, d, NVML_TEMPERATURE_GPU, &x) == NVML_SUCCESS)
		snprintf(temp, sizeof(temp), "%uC", x);
	if (SMI(api, pstate, d, &ps) == NVML_SUCCESS && ps != NVML_PSTATE_UNKNOWN)
		snprintf(perf, sizeof(perf), "P%d", (int)ps);
	if (SMI(api, power, d, &x) == NVML_SUCCESS && SMI(api, power_cap, d, &cap) == NVML_SUCCESS)
		snprintf(power, sizeof(power), "%uW / %4uW", x / 1000, cap / 1000);
	if (SMI(api, memory, d, &mem) == NVML_SUCCESS) {
		snprintf(used, sizeof(used), "%lluMiB", mem.used >> 20);
		snprintf(total, sizeof(total), "%lluMiB", mem.total >> 20);
	}
	if (SMI(api, utilization, d, &u) == NVML_SUCCESS)
		snprintf(util, sizeof(util), "%u%%", u.gpu);
	SMI(api, compute_mode, d, &mode);
	if (SMI(api, mig, d, &m1, &m2) == NVML_SUCCESS)
		snprintf(mig, sizeof(mig), "%s", smi_enabled(m1));

	printf("| %3u  %-29.29s %3s  | %18s %3s | %20s |\n", g->index, name,
	       persist == NVML_FEATURE_ENABLED ? "On" : "Off", bus,
	       disp == NVML_FEATURE_ENABLED ? "On" : "Off", ecc);
	printf("| %3s  %4s %5s %23s | %10s / %9s | %7s %12s |\n", fan, temp, perf, power, used, total,
	       util, smi_compute_mode(mode));
	printf("|                                         |                        | %20s |\n", mig);
	fputs(RULE, stdout);
}

static void processes_box(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n)
{
	unsigned shown = 0;

	fputs("\n" WIDE_RULE
	      "| Processes:                                                                              |\n"
	      "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
	      "|        ID   ID                                                               Usage      |\n"
	      "|=========================================================================================|\n",
	      stdout);
	for (unsigned i = 0; i < n; i++) {
		struct smi_proc procs[64];
		unsigned np = smi_processes(api, gpus[i].dev, procs, 64);

		for (unsigned p = 0; p < np; p++, shown++) {
			char name[256] = "";

			if (SMI(api, process_name, procs[p].pid, name, sizeof(name)) != NVML_SUCCESS)
				snprintf(name, sizeof(name), "N/A");
			printf("| %4u   N/A  N/A %16u      %c   %-35.35s %7lluMiB |\n", gpus[i].index,
			       procs[p].pid, procs[p].type, name, procs[p].used >> 20);
		}
	}
	if (!shown)
		fputs("|  No running processes found                                                             |\n",
		      stdout);
	fputs(WIDE_RULE, stdout);
}

int smi_table(const struct smi_api *api, const struct smi_gpu *gpus, unsigned n)
{
	banner(api);
	for (unsigned i = 0; i < n; i++)
		gpu_rows(api, &gpus[i]);
	processes_box(api, gpus, n);
	return 0;
}
