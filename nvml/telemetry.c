/* A GPU's telemetry: the profile's clocks, power, thermal, utilization
 * and so on, as the agent renders them in
 * sys/module/nvidia/nvmirage/<bdf>.telemetry, and the values that move
 * computed from the boot-time clock.
 *
 * Why a function of time and nothing else: two processes asking at the
 * same second get the same answer (nvidia-smi and an exporter agree), no
 * state is kept anywhere, and energy is the closed-form integral of the
 * power curve, so it only grows. Each moving value follows a raised
 * cosine between its bounds over its period; the GPUs are phase-shifted
 * so that they do not move in step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static double boot_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (double)ts.tv_sec; /* whole seconds: one sample per second */
}

static void parse_dyn(const char *v, struct nvm_dyn *out)
{
	double lo, hi, period;
	int n = sscanf(v, "%lf %lf %lf", &lo, &hi, &period);

	if (n == 1)
		*out = (struct nvm_dyn){ .set = true, .lo = lo, .hi = lo, .period = 1 };
	else if (n == 3 && period > 0 && hi >= lo)
		*out = (struct nvm_dyn){ .set = true, .lo = lo, .hi = hi, .period = period };
}

static unsigned parse_list(const char *v, unsigned *out, unsigned max)
{
	unsigned n = 0;
	char *end;

	while (n < max) {
		unsigned long x = strtoul(v, &end, 10);

		if (end == v)
			break;
		out[n++] = (unsigned)x;
		v = end;
	}
	return n;
}

static void parse_line(struct nvm_telemetry *t, const char *key, const char *v)
{
	static const char *const clk_names[NVM_CLOCK_TYPES] = { "clock_graphics", "clock_sm",
								  "clock_memory", "clock_video" };
	const struct { const char *name; struct nvm_dyn *dyn; } dyns[] = {
		{ "power", &t->power },          { "temp_gpu", &t->temp_gpu },
		{ "temp_memory", &t->temp_mem }, { "fan", &t->fan },
		{ "util_gpu", &t->util_gpu },    { "util_memory", &t->util_mem },
		{ "util_encoder", &t->util_enc }, { "util_decoder", &t->util_dec },
		{ "pcie_tx", &t->pcie_tx },      { "pcie_rx", &t->pcie_rx },
	};
	unsigned four[4] = { 0 };

	if (nvml_health_line(&t->health, key, v))
		return;
	for (unsigned i = 0; i < NVM_CLOCK_TYPES; i++)
		if (!strcmp(key, clk_names[i]))
			return parse_dyn(v, &t->clk[i]);
	for (size_t i = 0; i < sizeof(dyns) / sizeof(dyns[0]); i++)
		if (!strcmp(key, dyns[i].name))
			return parse_dyn(v, dyns[i].dyn);
	if (!strcmp(key, "born"))
		t->born = strtod(v, NULL);
	else if (!strcmp(key, "phase"))
		t->phase = (unsigned)strtoul(v, NULL, 10);
	else if (!strcmp(key, "clock_max"))
		parse_list(v, t->clk_max, NVM_CLOCK_TYPES);
	else if (!strcmp(key, "clock_app"))
		parse_list(v, t->clk_app, NVM_CLOCK_TYPES);
	else if (!strcmp(key, "clock_default_app"))
		parse_list(v, t->clk_default_app, NVM_CLOCK_TYPES);
	else if (!strcmp(key, "clock_boost"))
		parse_list(v, t->clk_boost, NVM_CLOCK_TYPES);
	else if (!strcmp(key, "clocks_memory_supported"))
		t->nmem_clocks = parse_list(v, t->mem_clocks, 16);
	else if (!strcmp(key, "clocks_graphics_supported"))
		t->ngfx_clocks = parse_list(v, t->gfx_clocks, NVM_MAX_CLOCKS);
	else if (!strcmp(key, "power_limits") && parse_list(v, four, 4) == 4)
		t->power_limit = four[0], t->power_default = four[1], t->power_min = four[2],
		t->power_max = four[3];
	else if (!strcmp(key, "temp_thresholds") && parse_list(v, four, 4) == 4)
		t->temp_shutdown = four[0], t->temp_slowdown = four[1], t->temp_gpu_max = four[2],
		t->temp_mem_max = four[3];
	else if (!strcmp(key, "pcie_link") && parse_list(v, four, 4) == 4)
		t->pcie_gen = four[0], t->pcie_gen_max = four[1], t->pcie_width = four[2],
		t->pcie_width_max = four[3];
	else if (!strcmp(key, "fans"))
		t->fans = (unsigned)strtoul(v, NULL, 10);
	else if (!strcmp(key, "pstate"))
		t->pstate = (unsigned)strtoul(v, NULL, 10);
	else if (!strcmp(key, "compute_mode"))
		t->compute_mode = (unsigned)strtoul(v, NULL, 10);
	else if (!strcmp(key, "display_active"))
		t->display_active = atoi(v) != 0;
	else if (!strcmp(key, "accounting"))
		t->accounting = atoi(v) != 0;
	else if (!strcmp(key, "reasons"))
		t->reasons = strtoull(v, NULL, 0);
	else if (!strcmp(key, "energy_base"))
		t->energy_base = strtoull(v, NULL, 10);
	else if (!strcmp(key, "reasons_supported"))
		t->reasons_supported = strtoull(v, NULL, 0);
	else if (!strcmp(key, "memory_used"))
		t->mem_used = strtoull(v, NULL, 10);
}

void nvml_load_telemetry(struct nvmlDevice_st *d)
{
	char path[256], text[16384], *save = NULL;
	size_t np = 0;

	memset(&d->tel, 0, sizeof(d->tel));
	d->procs_text[0] = '\0';
	snprintf(path, sizeof(path), "/sys/module/nvidia/nvmirage/%s.telemetry", d->bus_id);
	if (nvml_read_text(path, text, sizeof(text)))
		return;
	d->tel.present = true;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');

		if (!eq)
			continue;
		*eq = '\0';
		if (!strcmp(line, "process")) {
			int w = snprintf(d->procs_text + np, sizeof(d->procs_text) - np,
					 "process=%s\n", eq + 1);

			if (w > 0 && (size_t)w < sizeof(d->procs_text) - np)
				np += (size_t)w;
			continue;
		}
		parse_line(&d->tel, line, eq + 1);
	}
}

/* The curve's fraction of the way from lo to hi at time t. */
static double curve(const struct nvmlDevice_st *d, const struct nvm_dyn *v, double t)
{
	double x = t / v->period + d->tel.phase * 0.618034;

	return (1 - cos(2 * M_PI * x)) / 2;
}

double nvml_dyn_now(const struct nvmlDevice_st *d, const struct nvm_dyn *v)
{
	if (!v->set)
		return 0;
	return v->lo + (v->hi - v->lo) * curve(d, v, boot_seconds());
}

unsigned long long nvml_energy_mj(const struct nvmlDevice_st *d)
{
	const struct nvm_dyn *p = &d->tel.power;
	double t = boot_seconds(), t0 = d->tel.born, w, a, mid, amp;

	if (!p->set || t <= t0)
		return d->tel.energy_base;
	/* P(t) = mid - amp cos(w t + a), in mW: its integral in mW s = mJ. */
	w = 2 * M_PI / p->period;
	a = 2 * M_PI * d->tel.phase * 0.618034;
	mid = (p->lo + p->hi) / 2;
	amp = (p->hi - p->lo) / 2;
	return d->tel.energy_base +
	       (unsigned long long)(mid * (t - t0) - amp / w * (sin(w * t + a) - sin(w * t0 + a)));
}
