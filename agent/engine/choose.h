/* The strategy and the entry points nvmirage uses on this kernel: one
 * decision, from what the probes found, for `probe` (which prints it) and
 * `run` (which does it), so what probe says is what run does. */
#ifndef NVM_CHOOSE_H
#define NVM_CHOOSE_H

#include <stdbool.h>

#include "engine/probe.h"

struct engine_choice {
	bool in_kernel;          /* the in-kernel rewrite, else the assisted one */
	bool fentry;             /* fentry/fexit entry points, else tp_btf */
	const char *strategy;    /* "in-kernel" or "assisted" */
	const char *entry;       /* "fentry" or "tp_btf" */
	char strategy_why[320];  /* how it was decided, and what it does */
	char entry_why[320];
};

/* Decides for strategy ("auto", "in-kernel" or "assisted") and entry
 * ("auto", "fentry" or "tp_btf") from probe result p (see
 * probe_for_choice). Returns 0, or -1 when what was asked for is not
 * available here, with the reason in err. */
int engine_choose(const struct probe_result *p, const char *strategy, const char *entry,
		  struct engine_choice *c, char *err, unsigned errlen);

/* Fills p with what engine_choose needs: lockdown, and the probes of
 * bpf_probe_write_user (unless the assisted strategy is asked for) and of
 * fentry (unless tp_btf is asked for); tp_btf is taken as available, as
 * loading the engine checks it anyway. */
void probe_for_choice(struct probe_result *p, const char *strategy, const char *entry);

#endif
