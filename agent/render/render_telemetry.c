/* A GPU's telemetry for nvmirage's NVML: sys/module/nvidia/nvmirage/
 * <bdf>.telemetry, key=value lines read by nvml/telemetry.c. A moving
 * value is "lo hi period" (nvml/telemetry.c moves it); the time it moves
 * from is the boot-time clock at render ("born"), which every process on
 * the node shares, so that energy starts here and only grows. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "render/render.h"

struct buf {
	char *p;
	size_t len, used;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->used >= b->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->used, b->len - b->used, fmt, ap);
	va_end(ap);
	b->used += n > 0 ? (size_t)n : 0;
}

static void put_range(struct buf *b, const char *key, const struct nvm_range *r)
{
	if (r->set)
		put(b, "%s=%.1f %.1f %.0f\n", key, r->lo, r->hi, r->period);
}

static void put_four(struct buf *b, const char *key, const unsigned v[4])
{
	put(b, "%s=%u %u %u %u\n", key, v[0], v[1], v[2], v[3]);
}

/* InfoROM and memory health (nvml/health.c): only what the profile has. */
static void put_health(struct buf *b, const struct nvm_telemetry *t)
{
	if (t->inforom_image[0])
		put(b, "inforom_image=%s\n", t->inforom_image);
	for (unsigned k = 0; k < 3; k++)
		if (t->inforom_object[k][0])
			put(b, "inforom_object=%u %s\n", k, t->inforom_object[k]);
	if (t->retired) {
		put(b, "retired=%d\n", t->retired_pending);
		for (unsigned c = 0; c < 2; c++) {
			put(b, "retired_pages=%u", c);
			for (unsigned k = 0; k < t->nretired[c]; k++)
				put(b, " 0x%llx", (unsigned long long)t->retired_addr[c][k]);
			put(b, "\n");
		}
	}
	if (t->remapped)
		put(b, "remapped=%u %u %d %d\n", t->remap_corr, t->remap_unc, t->remap_pending,
		    t->remap_failed);
	if (t->histogram)
		put(b, "remap_banks=%u %u %u %u %u\n", t->remap_banks[0], t->remap_banks[1],
		    t->remap_banks[2], t->remap_banks[3], t->remap_banks[4]);
	if (t->opmode_current >= 0)
		put(b, "opmode=%d %d\n", t->opmode_current,
		    t->opmode_pending >= 0 ? t->opmode_pending : t->opmode_current);
}

size_t render_telemetry_text(const struct nvm_gpu *g, char *out, size_t len)
{
	static const char *const clk_names[4] = { "clock_graphics", "clock_sm", "clock_memory",
						  "clock_video" };
	const struct nvm_telemetry *t = &g->tel;
	struct buf b = { .p = out, .len = len, .used = 0 };
	unsigned app[4] = { t->clk_app[0], t->clk_app[0], t->clk_app[2], 0 };
	unsigned dflt[4] = { t->clk_default_app[0], t->clk_default_app[0], t->clk_default_app[2], 0 };
	unsigned boost[4] = { t->clk_max[0], t->clk_max[1], 0, 0 };
	struct timespec ts;

	out[0] = '\0';
	clock_gettime(CLOCK_BOOTTIME, &ts);
	put(&b, "born=%lld\nphase=%u\n", (long long)ts.tv_sec, g->index);
	for (unsigned k = 0; k < 4; k++)
		if (t->clk_cur[k])
			put(&b, "%s=%u\n", clk_names[k], t->clk_cur[k]);
	put_four(&b, "clock_max", t->clk_max);
	put_four(&b, "clock_app", app);
	put_four(&b, "clock_default_app", dflt);
	put_four(&b, "clock_boost", boost);
	put(&b, "clocks_memory_supported=");
	for (unsigned k = 0; k < t->nmem_clocks; k++)
		put(&b, "%s%u", k ? " " : "", t->mem_clocks[k]);
	put(&b, "\nclocks_graphics_supported=");
	for (unsigned k = 0; k < t->ngfx_clocks; k++)
		put(&b, "%s%u", k ? " " : "", t->gfx_clocks[k]);
	put(&b, "\nreasons=0x%llx\nreasons_supported=0x1ff\n", (unsigned long long)t->reasons);
	put(&b, "power_limits=%u %u %u %u\n", t->power_limit, t->power_default, t->power_min,
	    t->power_max);
	put_range(&b, "power", &t->power);
	put(&b, "energy_base=%llu\n", (unsigned long long)t->energy_base_mj);
	put(&b, "temp_thresholds=%u %u %u %u\n", t->temp_shutdown, t->temp_slowdown, t->temp_gpu_max,
	    t->temp_mem_max);
	put_range(&b, "temp_gpu", &t->temp_gpu);
	put_range(&b, "temp_memory", &t->temp_mem);
	put(&b, "fans=%u\n", t->fans);
	put_range(&b, "fan", &t->fan);
	put(&b, "pstate=%u\n", t->pstate);
	put_range(&b, "util_gpu", &t->util_gpu);
	put_range(&b, "util_memory", &t->util_mem);
	put_range(&b, "util_encoder", &t->util_enc);
	put_range(&b, "util_decoder", &t->util_dec);
	put(&b, "pcie_tx=%u\npcie_rx=%u\n", t->pcie_tx_kbs, t->pcie_rx_kbs);
	put(&b, "pcie_link=%u %u %u %u\n", t->pcie_gen, t->pcie_gen_max, t->pcie_width,
	    t->pcie_width_max);
	put(&b, "compute_mode=%u\ndisplay_active=%d\naccounting=%d\nmemory_used=%llu\n",
	    t->compute_mode, t->display_active, t->accounting, (unsigned long long)t->memory_used);
	for (unsigned k = 0; k < t->nprocs; k++)
		put(&b, "process=%u %llu %c %s\n", t->procs[k].pid,
		    (unsigned long long)t->procs[k].used_bytes, t->procs[k].type, t->procs[k].name);
	put_health(&b, t);
	return b.used < len ? b.used : len - 1;
}
