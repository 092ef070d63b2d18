/* A GPU's run-time sections, in Mokka's schema: what nvmirage's NVML says
 * about clocks, power, temperatures, fans, utilization, PCIe, modes and
 * processes. Each section comes whole from the device's entry when it has
 * it, else from device_defaults (Mokka replaces the blocks it overrides
 * wholesale). Every key is checked: an unknown one, or a value out of
 * range, is refused with its file, line and key.
 *
 * Mokka's dynamic_metrics draw random values; nvmirage's move along a
 * curve within the same bounds, as a function of time only (see
 * nvml/telemetry.c), so every process sees the same value at the same
 * second: temperature from base - variance to base + ramp + variance over
 * ramp_period_sec, power base +- variance, utilization within the
 * pattern's band. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "profile/profile_int.h"

#define MIB (1024ULL * 1024)
#define DEFAULT_PERIOD 60.0

yaml_node_t *tel_section(struct tctx *c, const char *name, char *path, size_t len)
{
	yaml_node_t *n = ydoc_get(c->y, c->dev, name);

	if (n) {
		snprintf(path, len, "devices[%u].%s", c->i, name);
		return n;
	}
	snprintf(path, len, "device_defaults.%s", name);
	return ydoc_get(c->y, c->defaults, name);
}

int tel_uint(struct tctx *c, yaml_node_t *map, const char *path, const char *key, uint64_t max,
	     unsigned *out)
{
	yaml_node_t *n = ydoc_get(c->y, map, key);
	char kp[192];
	uint64_t v;

	if (!n)
		return 0;
	snprintf(kp, sizeof(kp), "%s.%s", path, key);
	if (ydoc_uint(c->y, n, kp, max, &v))
		return -1;
	*out = (unsigned)v;
	return 0;
}

int tel_u64(struct tctx *c, yaml_node_t *map, const char *path, const char *key, uint64_t *out)
{
	yaml_node_t *n = ydoc_get(c->y, map, key);
	char kp[192];

	if (!n)
		return 0;
	snprintf(kp, sizeof(kp), "%s.%s", path, key);
	return ydoc_uint(c->y, n, kp, UINT64_MAX, out);
}

int tel_bool(struct tctx *c, yaml_node_t *map, const char *path, const char *key, bool *out)
{
	yaml_node_t *n = ydoc_get(c->y, map, key);
	char kp[192];

	if (!n)
		return 0;
	snprintf(kp, sizeof(kp), "%s.%s", path, key);
	return ydoc_bool(c->y, n, kp, out);
}

/* One of words (case-insensitive) into its position. */
int tel_word(struct tctx *c, yaml_node_t *n, const char *path, const char *const *words,
	     unsigned *out)
{
	char buf[32], list[160] = "";

	if (ydoc_str(c->y, n, path, buf, sizeof(buf)))
		return -1;
	for (unsigned k = 0; words[k]; k++) {
		if (!strcasecmp(buf, words[k])) {
			*out = k;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
			 words[k]);
	}
	return ydoc_fail(c->y, n, path, "\"%s\": expected %s", buf, list);
}

static const char *const on_off[] = { "disabled", "enabled", NULL };

/* "P0".."P15" */
static int get_pstate(struct tctx *c, yaml_node_t *n, const char *path, unsigned *out)
{
	char buf[8], tail;

	if (ydoc_str(c->y, n, path, buf, sizeof(buf)))
		return -1;
	if ((buf[0] != 'P' && buf[0] != 'p') || sscanf(buf + 1, "%u%c", out, &tail) != 1 || *out > 15)
		return ydoc_fail(c->y, n, path, "\"%s\": expected P0 to P15", buf);
	return 0;
}

static void fixed(struct nvm_range *r, double v)
{
	*r = (struct nvm_range){ .set = true, .lo = v, .hi = v, .period = DEFAULT_PERIOD };
}

static int parse_clocks(struct tctx *c)
{
	static const char *const keys[] = {
		"graphics_current", "graphics_max", "graphics_app", "graphics_app_default",
		"sm_current", "sm_max", "memory_current", "memory_max", "memory_app",
		"memory_app_default", "video_current", "video_max", NULL
	};
	struct nvm_telemetry *t = c->t;
	char path[64];
	yaml_node_t *s = tel_section(c, "clocks", path, sizeof(path));

	if (!s)
		return 0;
	t->present = true;
	return ydoc_only_keys(c->y, s, path, keys) ||
	       tel_uint(c, s, path, "graphics_current", 100000, &t->clk_cur[0]) ||
	       tel_uint(c, s, path, "graphics_max", 100000, &t->clk_max[0]) ||
	       tel_uint(c, s, path, "graphics_app", 100000, &t->clk_app[0]) ||
	       tel_uint(c, s, path, "graphics_app_default", 100000, &t->clk_default_app[0]) ||
	       tel_uint(c, s, path, "sm_current", 100000, &t->clk_cur[1]) ||
	       tel_uint(c, s, path, "sm_max", 100000, &t->clk_max[1]) ||
	       tel_uint(c, s, path, "memory_current", 100000, &t->clk_cur[2]) ||
	       tel_uint(c, s, path, "memory_max", 100000, &t->clk_max[2]) ||
	       tel_uint(c, s, path, "memory_app", 100000, &t->clk_app[2]) ||
	       tel_uint(c, s, path, "memory_app_default", 100000, &t->clk_default_app[2]) ||
	       tel_uint(c, s, path, "video_current", 100000, &t->clk_cur[3]) ||
	       tel_uint(c, s, path, "video_max", 100000, &t->clk_max[3]);
}

static int parse_supported_clocks(struct tctx *c)
{
	static const char *const keys[] = { "memory_clocks", NULL };
	static const char *const entry_keys[] = { "freq_mhz", "graphics_clocks", NULL };
	struct nvm_telemetry *t = c->t;
	char path[64], ep[128], kp[160];
	yaml_node_t *s = tel_section(c, "supported_clocks", path, sizeof(path)), *list;

	if (!s)
		return 0;
	if (ydoc_only_keys(c->y, s, path, keys))
		return -1;
	list = ydoc_get(c->y, s, "memory_clocks");
	if (!list)
		return 0;
	snprintf(kp, sizeof(kp), "%s.memory_clocks", path);
	if (!ydoc_is_seq(list))
		return ydoc_fail(c->y, list, kp, "expected a list");
	if (ydoc_seq_len(list) > 16)
		return ydoc_fail(c->y, list, kp, "at most 16 memory clocks");
	for (size_t k = 0; k < ydoc_seq_len(list); k++) {
		yaml_node_t *e = ydoc_seq_at(c->y, list, k), *g;

		snprintf(ep, sizeof(ep), "%s.memory_clocks[%zu]", path, k);
		if (ydoc_only_keys(c->y, e, ep, entry_keys) ||
		    tel_uint(c, e, ep, "freq_mhz", 100000, &t->mem_clocks[t->nmem_clocks]))
			return -1;
		t->nmem_clocks++;
		g = ydoc_get(c->y, e, "graphics_clocks");
		if (!g || k > 0)
			continue;
		snprintf(kp, sizeof(kp), "%s.graphics_clocks", ep);
		if (!ydoc_is_seq(g) || ydoc_seq_len(g) > NVM_MAX_GFX_CLOCKS)
			return ydoc_fail(c->y, g, kp, "expected a list of at most %d clocks",
					 NVM_MAX_GFX_CLOCKS);
		for (size_t j = 0; j < ydoc_seq_len(g); j++) {
			uint64_t v;

			snprintf(kp, sizeof(kp), "%s.graphics_clocks[%zu]", ep, j);
			if (ydoc_uint(c->y, ydoc_seq_at(c->y, g, j), kp, 100000, &v))
				return -1;
			t->gfx_clocks[t->ngfx_clocks++] = (unsigned)v;
		}
	}
	return 0;
}

/* Mokka's reason flags, in NVML's bit order (nvmlClocksEventReason*). */
static int parse_reasons(struct tctx *c)
{
	static const char *const flags[] = {
		"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
		"sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
		"hw_power_brake_slowdown", "display_clocks_setting", NULL
	};
	static const char *const keys[] = {
		"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
		"sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
		"hw_power_brake_slowdown", "display_clocks_setting", "counters", NULL
	};
	char path[64];
	yaml_node_t *s = tel_section(c, "clocks_throttle_reasons", path, sizeof(path));

	if (!s)
		return 0;
	if (ydoc_only_keys(c->y, s, path, keys))
		return -1;
	c->t->present = true;
	for (unsigned k = 0; flags[k]; k++) {
		bool on = false;

		if (tel_bool(c, s, path, flags[k], &on))
			return -1;
		if (on)
			c->t->reasons |= 1ULL << k;
	}
	return 0;
}

static int parse_power(struct tctx *c)
{
	static const char *const keys[] = {
		"management_supported", "management_mode", "default_limit_mw", "enforced_limit_mw",
		"min_limit_mw", "max_limit_mw", "current_draw_mw", "power_state",
		"total_energy_consumption_mj", NULL
	};
	struct nvm_telemetry *t = c->t;
	char path[64], kp[96];
	unsigned draw = 0, mode = 1;
	bool supported = true;
	yaml_node_t *s = tel_section(c, "power", path, sizeof(path)), *n;

	if (!s)
		return 0;
	t->present = true;
	if (ydoc_only_keys(c->y, s, path, keys) ||
	    tel_bool(c, s, path, "management_supported", &supported) ||
	    tel_uint(c, s, path, "default_limit_mw", 10000000, &t->power_default) ||
	    tel_uint(c, s, path, "enforced_limit_mw", 10000000, &t->power_limit) ||
	    tel_uint(c, s, path, "min_limit_mw", 10000000, &t->power_min) ||
	    tel_uint(c, s, path, "max_limit_mw", 10000000, &t->power_max) ||
	    tel_uint(c, s, path, "current_draw_mw", 10000000, &draw) ||
	    tel_u64(c, s, path, "total_energy_consumption_mj", &t->energy_base_mj))
		return -1;
	if ((n = ydoc_get(c->y, s, "management_mode"))) {
		snprintf(kp, sizeof(kp), "%s.management_mode", path);
		if (tel_word(c, n, kp, on_off, &mode))
			return -1;
	}
	if ((n = ydoc_get(c->y, s, "power_state"))) {
		snprintf(kp, sizeof(kp), "%s.power_state", path);
		if (get_pstate(c, n, kp, &t->pstate))
			return -1;
	}
	if (!t->power_limit)
		t->power_limit = t->power_default;
	if (t->power_min > t->power_max && t->power_max)
		return ydoc_fail(c->y, s, path, "min_limit_mw %u is above max_limit_mw %u",
				 t->power_min, t->power_max);
	if (!supported || !mode)
		t->power_limit = t->power_default = t->power_min = t->power_max = 0;
	if (ydoc_get(c->y, s, "current_draw_mw"))
		fixed(&t->power, draw);
	return 0;
}

static int parse_thermal(struct tctx *c)
{
	static const char *const keys[] = {
		"temperature_gpu_c", "temperature_memory_c", "shutdown_threshold_c",
		"slowdown_threshold_c", "max_operating_c", "target_temperature_c",
		"memory_max_operating_c", NULL
	};
	struct nvm_telemetry *t = c->t;
	unsigned gpu = 0, mem = 0, target = 0;
	char path[64];
	yaml_node_t *s = tel_section(c, "thermal", path, sizeof(path));

	if (!s)
		return 0;
	t->present = true;
	if (ydoc_only_keys(c->y, s, path, keys) ||
	    tel_uint(c, s, path, "temperature_gpu_c", 200, &gpu) ||
	    tel_uint(c, s, path, "temperature_memory_c", 200, &mem) ||
	    tel_uint(c, s, path, "shutdown_threshold_c", 200, &t->temp_shutdown) ||
	    tel_uint(c, s, path, "slowdown_threshold_c", 200, &t->temp_slowdown) ||
	    tel_uint(c, s, path, "max_operating_c", 200, &t->temp_gpu_max) ||
	    tel_uint(c, s, path, "target_temperature_c", 200, &target) ||
	    tel_uint(c, s, path, "memory_max_operating_c", 200, &t->temp_mem_max))
		return -1;
	if (ydoc_get(c->y, s, "temperature_gpu_c"))
		fixed(&t->temp_gpu, gpu);
	if (ydoc_get(c->y, s, "temperature_memory_c"))
		fixed(&t->temp_mem, mem);
	return 0;
}

/* count, and speed_percent (a number, or "N/A" without fans). */
static int parse_fan(struct tctx *c)
{
	static const char *const keys[] = { "count", "speed_percent", "target_speed_percent", NULL };
	struct nvm_telemetry *t = c->t;
	char path[64], kp[96], buf[16];
	yaml_node_t *s = tel_section(c, "fan", path, sizeof(path)), *n;
	uint64_t v;

	if (!s)
		return 0;
	t->present = true;
	if (ydoc_only_keys(c->y, s, path, keys) || tel_uint(c, s, path, "count", 8, &t->fans))
		return -1;
	if (!(n = ydoc_get(c->y, s, "speed_percent")))
		return 0;
	snprintf(kp, sizeof(kp), "%s.speed_percent", path);
	if (ydoc_str(c->y, n, kp, buf, sizeof(buf)))
		return -1;
	if (!strcasecmp(buf, "N/A"))
		return 0;
	if (ydoc_uint(c->y, n, kp, 100, &v))
		return -1;
	fixed(&t->fan, (double)v);
	return 0;
}

static int parse_utilization(struct tctx *c)
{
	static const char *const keys[] = { "gpu", "memory", "encoder", "decoder", "jpeg", "ofa", NULL };
	struct nvm_telemetry *t = c->t;
	unsigned v[4] = { 0 };
	char path[64];
	yaml_node_t *s = tel_section(c, "utilization", path, sizeof(path));

	if (!s)
		return 0;
	t->present = true;
	if (ydoc_only_keys(c->y, s, path, keys) || tel_uint(c, s, path, "gpu", 100, &v[0]) ||
	    tel_uint(c, s, path, "memory", 100, &v[1]) || tel_uint(c, s, path, "encoder", 100, &v[2]) ||
	    tel_uint(c, s, path, "decoder", 100, &v[3]))
		return -1;
	fixed(&t->util_gpu, v[0]);
	fixed(&t->util_mem, v[1]);
	fixed(&t->util_enc, v[2]);
	fixed(&t->util_dec, v[3]);
	return 0;
}

static int parse_dynamic_temperature(struct tctx *c, yaml_node_t *s, const char *path)
{
	static const char *const keys[] = { "base_c", "variance_c", "ramp_c", "ramp_period_sec", NULL };
	unsigned base = 0, var = 0, ramp = 0, period = 60;
	double hi;

	if (ydoc_only_keys(c->y, s, path, keys) || tel_uint(c, s, path, "base_c", 200, &base) ||
	    tel_uint(c, s, path, "variance_c", 50, &var) || tel_uint(c, s, path, "ramp_c", 100, &ramp) ||
	    tel_uint(c, s, path, "ramp_period_sec", 86400, &period))
		return -1;
	if (!period)
		return ydoc_fail(c->y, s, path, "ramp_period_sec must be above 0");
	hi = base + ramp + var;
	if (c->t->temp_shutdown && hi > c->t->temp_shutdown)
		hi = c->t->temp_shutdown;
	c->t->temp_gpu = (struct nvm_range){ .set = true, .lo = base > var ? base - var : 0, .hi = hi,
					     .period = period };
	return 0;
}

static int parse_dynamic_power(struct tctx *c, yaml_node_t *s, const char *path)
{
	static const char *const keys[] = { "base_mw", "variance_mw", NULL };
	struct nvm_telemetry *t = c->t;
	unsigned base = 0, var = 0;
	double lo, hi;

	if (ydoc_only_keys(c->y, s, path, keys) || tel_uint(c, s, path, "base_mw", 10000000, &base) ||
	    tel_uint(c, s, path, "variance_mw", 10000000, &var))
		return -1;
	/* Not clamped to min_limit_mw: that is the lowest cap one may set,
	 * and an idle GPU draws well below it (a real H200: 80 W, 200 W). */
	lo = base > var ? base - var : 0;
	hi = (double)base + var;
	if (t->power_max && hi > t->power_max)
		hi = t->power_max;
	if (lo > hi)
		lo = hi;
	t->power = (struct nvm_range){ .set = true, .lo = lo, .hi = hi, .period = DEFAULT_PERIOD };
	return 0;
}

/* Mokka's bands: steady [min, max], idle its lowest quarter, busy its
 * highest, burst both in turn (here: the whole band over two bursts). */
static int parse_dynamic_utilization(struct tctx *c, yaml_node_t *s, const char *path)
{
	static const char *const keys[] = { "pattern", "gpu_min", "gpu_max", "memory_min", "memory_max",
					    "burst_period_sec", NULL };
	static const char *const patterns[] = { "steady", "idle", "busy", "burst", NULL };
	unsigned pattern = 0, v[4] = { 0, 0, 0, 0 }, burst = 30;
	char kp[128];
	yaml_node_t *n;

	if (ydoc_only_keys(c->y, s, path, keys) || tel_uint(c, s, path, "gpu_min", 100, &v[0]) ||
	    tel_uint(c, s, path, "gpu_max", 100, &v[1]) || tel_uint(c, s, path, "memory_min", 100, &v[2]) ||
	    tel_uint(c, s, path, "memory_max", 100, &v[3]) ||
	    tel_uint(c, s, path, "burst_period_sec", 86400, &burst))
		return -1;
	if ((n = ydoc_get(c->y, s, "pattern"))) {
		snprintf(kp, sizeof(kp), "%s.pattern", path);
		if (tel_word(c, n, kp, patterns, &pattern))
			return -1;
	}
	for (int k = 0; k < 4; k += 2) {
		struct nvm_range *r = k ? &c->t->util_mem : &c->t->util_gpu;
		double lo = v[k], hi = v[k + 1];

		if (!lo && !hi)
			hi = 100;
		if (lo > hi)
			return ydoc_fail(c->y, s, path, "%s_min %u is above %s_max %u",
					 k ? "memory" : "gpu", v[k], k ? "memory" : "gpu", v[k + 1]);
		if (pattern == 1)
			hi = lo + (hi - lo) / 4;
		else if (pattern == 2)
			lo = hi - (hi - lo) / 4;
		*r = (struct nvm_range){ .set = true, .lo = lo, .hi = hi,
					 .period = pattern == 3 ? 2.0 * (burst ? burst : 30) : DEFAULT_PERIOD };
	}
	return 0;
}

static int parse_dynamic(struct tctx *c)
{
	static const char *const keys[] = { "seed", "temperature", "power", "utilization", NULL };
	char path[64], sp[96];
	yaml_node_t *s = tel_section(c, "dynamic_metrics", path, sizeof(path)), *n;

	if (!s)
		return 0;
	c->t->present = true;
	if (ydoc_only_keys(c->y, s, path, keys))
		return -1;
	if ((n = ydoc_get(c->y, s, "temperature"))) {
		snprintf(sp, sizeof(sp), "%s.temperature", path);
		if (parse_dynamic_temperature(c, n, sp))
			return -1;
	}
	if ((n = ydoc_get(c->y, s, "power"))) {
		snprintf(sp, sizeof(sp), "%s.power", path);
		if (parse_dynamic_power(c, n, sp))
			return -1;
	}
	if ((n = ydoc_get(c->y, s, "utilization"))) {
		snprintf(sp, sizeof(sp), "%s.utilization", path);
		if (parse_dynamic_utilization(c, n, sp))
			return -1;
	}
	return 0;
}

static int parse_pcie(struct tctx *c)
{
	static const char *const keys[] = { "max_link_gen", "current_link_gen", "max_link_width",
					    "current_link_width", "replay_counter", "tx_throughput_kbps",
					    "rx_throughput_kbps", NULL };
	struct nvm_telemetry *t = c->t;
	unsigned replays = 0;
	char path[64];
	yaml_node_t *s = tel_section(c, "pcie", path, sizeof(path));

	if (!s)
		return 0;
	t->present = true;
	return ydoc_only_keys(c->y, s, path, keys) ||
	       tel_uint(c, s, path, "max_link_gen", 7, &t->pcie_gen_max) ||
	       tel_uint(c, s, path, "current_link_gen", 7, &t->pcie_gen) ||
	       tel_uint(c, s, path, "max_link_width", 32, &t->pcie_width_max) ||
	       tel_uint(c, s, path, "current_link_width", 32, &t->pcie_width) ||
	       tel_uint(c, s, path, "replay_counter", UINT32_MAX, &replays) ||
	       tel_uint(c, s, path, "tx_throughput_kbps", UINT32_MAX, &t->pcie_tx_kbs) ||
	       tel_uint(c, s, path, "rx_throughput_kbps", UINT32_MAX, &t->pcie_rx_kbs);
}

/* performance_state, compute_mode, display, accounting. */
static int parse_modes(struct tctx *c)
{
	static const char *const modes[] = { "default", "exclusive_thread", "prohibited",
					     "exclusive_process", NULL };
	static const char *const display_keys[] = { "mode", "active", NULL };
	static const char *const accounting_keys[] = { "mode", "buffer_size", NULL };
	struct nvm_telemetry *t = c->t;
	char path[64], kp[96];
	unsigned on;
	yaml_node_t *s;

	if ((s = tel_section(c, "performance_state", path, sizeof(path)))) {
		t->present = true;
		if (get_pstate(c, s, path, &t->pstate))
			return -1;
	}
	if ((s = tel_section(c, "compute_mode", path, sizeof(path))) &&
	    tel_word(c, s, path, modes, &t->compute_mode))
		return -1;
	if ((s = tel_section(c, "display", path, sizeof(path)))) {
		if (ydoc_only_keys(c->y, s, path, display_keys))
			return -1;
		if (ydoc_get(c->y, s, "active")) {
			snprintf(kp, sizeof(kp), "%s.active", path);
			if (tel_word(c, ydoc_get(c->y, s, "active"), kp, on_off, &on))
				return -1;
			t->display_active = on;
		}
	}
	if ((s = tel_section(c, "accounting", path, sizeof(path)))) {
		if (ydoc_only_keys(c->y, s, path, accounting_keys))
			return -1;
		if (ydoc_get(c->y, s, "mode")) {
			snprintf(kp, sizeof(kp), "%s.mode", path);
			if (tel_word(c, ydoc_get(c->y, s, "mode"), kp, on_off, &on))
				return -1;
			t->accounting = on;
		}
	}
	return 0;
}

/* processes: [{pid, type C|G, name, used_memory_mib, ...}] */
static int parse_processes(struct tctx *c)
{
	static const char *const keys[] = { "pid", "type", "name", "used_memory_mib", "sm_util",
					    "mem_util", "enc_util", "dec_util", NULL };
	static const char *const types[] = { "C", "G", NULL };
	struct nvm_telemetry *t = c->t;
	char path[64], ep[96], kp[128];
	yaml_node_t *s = tel_section(c, "processes", path, sizeof(path));
	uint64_t used_mib = 0;

	if (!s)
		return 0;
	if (!ydoc_is_seq(s))
		return ydoc_fail(c->y, s, path, "expected a list");
	if (ydoc_seq_len(s) > NVM_MAX_PROCS)
		return ydoc_fail(c->y, s, path, "at most %d processes", NVM_MAX_PROCS);
	t->present = true;
	for (size_t k = 0; k < ydoc_seq_len(s); k++) {
		yaml_node_t *e = ydoc_seq_at(c->y, s, k), *n;
		unsigned type = 0, pid = 0;

		snprintf(ep, sizeof(ep), "%s[%zu]", path, k);
		used_mib = 0;
		if (ydoc_only_keys(c->y, e, ep, keys) || tel_uint(c, e, ep, "pid", 4194304, &pid) ||
		    tel_u64(c, e, ep, "used_memory_mib", &used_mib))
			return -1;
		if (!pid)
			return ydoc_fail(c->y, e, ep, "pid: missing (required)");
		if ((n = ydoc_get(c->y, e, "type"))) {
			snprintf(kp, sizeof(kp), "%s.type", ep);
			if (tel_word(c, n, kp, types, &type))
				return -1;
		}
		t->procs[t->nprocs].pid = pid;
		t->procs[t->nprocs].type = type ? 'g' : 'c';
		t->procs[t->nprocs].used_bytes = used_mib * MIB;
		snprintf(t->procs[t->nprocs].name, sizeof(t->procs[0].name), "process-%u", pid);
		if ((n = ydoc_get(c->y, e, "name"))) {
			snprintf(kp, sizeof(kp), "%s.name", ep);
			if (ydoc_str(c->y, n, kp, t->procs[t->nprocs].name, sizeof(t->procs[0].name)))
				return -1;
		}
		t->memory_used += t->procs[t->nprocs].used_bytes;
		t->nprocs++;
	}
	return 0;
}

int parse_telemetry(struct ydoc *y, yaml_node_t *dev, yaml_node_t *defaults, struct nvm_model *m,
		    unsigned i)
{
	struct tctx c = { .y = y, .dev = dev, .defaults = defaults, .i = i, .t = &m->gpus[i].tel };
	uint64_t used = 0;
	char path[64];
	yaml_node_t *mem = tel_section(&c, "memory", path, sizeof(path));

	memset(c.t, 0, sizeof(*c.t));
	/* Order matters: dynamic_metrics clamps to the power and thermal limits. */
	if (parse_clocks(&c) || parse_supported_clocks(&c) || parse_reasons(&c) || parse_power(&c) ||
	    parse_thermal(&c) || parse_fan(&c) || parse_utilization(&c) || parse_dynamic(&c) ||
	    parse_pcie(&c) || parse_modes(&c) || parse_processes(&c) || parse_health(&c) ||
	    tel_u64(&c, mem, path, "used_bytes", &used))
		return -1;
	c.t->memory_used += used;
	return 0;
}
