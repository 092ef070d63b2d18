#include "unit.h"

#include "lib/log.h"
#include "profile/profile.h"
#include "render/rules.h"

static struct nvm_model model;

static int load_gb300(void **state)
{
	char path[4096];

	(void)state;
	snprintf(path, sizeof(path), "%s/profiles/gb300.yaml", srcdir());
	return profile_load(path, 0, &model);
}

static void every_alias_fits_its_path(void **state)
{
	struct nvm_rules rs;

	(void)state;
	assert_int_equal(rules_build(&model, "/run/nvm", true, false, &rs), 0);
	/* dirs, roots, GPU nodes, ctl and modeset, uvm and caps; pci_bus; the
	 * HCAs' classes, driver and modules, and /dev/infiniband */
	assert_int_equal(rs.n, 4 + 4 + 4 + 2 + 3 + 1 + 9 + 1);
	for (unsigned i = 0; i < rs.n; i++) {
		size_t extra = rs.r[i].kind == NVM_RULE_DIR;

		assert_true(strlen(rs.r[i].alias) + extra <= strlen(rs.r[i].from));
	}
	assert_string_equal(rs.r[0].from, "/proc/driver/nvidia");
	assert_string_equal(rs.r[0].alias, "/run/nvm/p");
}

/* The driver's user space: file rules for NVML where the dynamic linker
 * looks and for /usr/bin/nvidia-smi, the only one an exec may follow; each
 * fits the kernel side's rule keys; the root's limit stays the same. */
static void driver_userspace_rules(void **state)
{
	struct nvm_rules rs;
	unsigned files = 0, exec = 0, lib1 = 0;
	unsigned span;
	bool exact;
	int i;

	(void)state;
	assert_int_equal(rules_build(&model, "/run/nvm", true, true, &rs), 0);
	for (unsigned k = 0; k < rs.n; k++) {
		const struct nvm_rule *r = &rs.r[k];

		assert_true(strlen(r->from) < NVM_RULE_FROM_MAX);
		if (r->kind != NVM_RULE_FILE)
			continue;
		files++;
		exec += r->exec;
		lib1 += strstr(r->from, "/libnvidia-ml.so.1") != NULL;
		assert_string_equal(r->alias, r->exec ? "/run/nvm/x" : "/run/nvm/l");
	}
	assert_int_equal(exec, 1);
	assert_int_equal(files, 2 * lib1 + 1); /* .so.1 and .so in each directory */
#if defined(__x86_64__)
	/* /lib and /usr/lib's multiarch directories, /lib64, /usr/lib64, /lib,
	 * /usr/lib, and the hwcaps levels under all but
	 * /usr/lib/x86_64-linux-gnu (too long) */
	assert_int_equal(lib1, 6 + 5 * 3);
	i = rules_match(&rs, "/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libnvidia-ml.so.1", &span, &exact);
	assert_true(i >= 0 && rs.r[i].kind == NVM_RULE_FILE && exact);
#endif
	i = rules_match(&rs, "/usr/bin/nvidia-smi", &span, &exact);
	assert_true(i >= 0 && rs.r[i].exec && exact && span == 19);
	assert_int_equal(rules_match(&rs, "/usr/bin/nvidia-smi-x", &span, &exact), -1);
	assert_int_equal(rules_match(&rs, "/usr/bin/bash", &span, &exact), -1);
	assert_int_equal(rules_max_root_len(&model, true, true), 10);
	assert_int_equal(rules_max_root_len(&model, false, true), 15);
}

static void too_long_a_root_is_refused_with_lengths(void **state)
{
	struct nvm_rules rs;
	const char *err;

	(void)state;
	assert_int_equal(rules_max_root_len(&model, true, false), 10);
	assert_int_equal(rules_max_root_len(&model, false, false), 15);
	capture_begin();
	assert_int_equal(rules_build(&model, "/var/run/nvmx", true, false, &rs), -1);
	err = capture_end();
	assert_non_null(strstr(err, "/dev/nvidia0 -> /var/run/nvmx/0 does not fit"));
	assert_non_null(strstr(err, "needs 15 bytes"));
	assert_non_null(strstr(err, "path has 12"));
	assert_non_null(strstr(err, "at most 10"));
	/* Without device nodes the same root fits. */
	assert_int_equal(rules_build(&model, "/var/run/nvmx", false, false, &rs), 0);
}

static void a_root_overlapping_a_redirected_path_is_refused(void **state)
{
	static const char *const bad[] = { "/sys/module", "/sys/module/nvidia", "/proc/driver/nvidia/x" };
	struct nvm_rules rs;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		capture_begin();
		assert_int_equal(rules_build(&model, bad[i], false, false, &rs), -1);
		assert_non_null(strstr(capture_end(), "overlaps the redirected path"));
	}
	/* A shared beginning is not an overlap. */
	assert_int_equal(rules_build(&model, "/sys/mod", false, false, &rs), 0);
}

static void matches_at_component_boundaries(void **state)
{
	struct nvm_rules rs;
	unsigned span;
	bool exact;

	(void)state;
	assert_int_equal(rules_build(&model, "/run/nvm", true, false, &rs), 0);
	assert_int_equal(rules_match(&rs, "/proc/driver/nvidia/gpus/", &span, &exact), 0);
	assert_int_equal(span, 19);
	assert_false(exact);
	assert_int_equal(rules_match(&rs, "/proc/driver/nvidia", &span, &exact), 0);
	assert_true(exact);
	assert_int_equal(rules_match(&rs, "/proc/driver/nvidia/", &span, &exact), 0);
	assert_true(exact);
	assert_int_equal(rules_match(&rs, "/proc/driver/nvidia-caps/mig", &span, &exact), -1);
	assert_int_equal(rules_match(&rs, "/proc/driver/nvidiax", &span, &exact), -1);
	assert_int_equal(rules_match(&rs, "proc/driver/nvidia", &span, &exact), -1);
	assert_int_equal(rules_match(&rs, "/dev/nvidia1", &span, &exact), 8 + 1);
	assert_int_equal(rules_match(&rs, "/dev/nvidia10", &span, &exact), -1);
	/* Repeated slashes fold as the kernel folds them. */
	assert_int_equal(rules_match(&rs, "//proc//driver/nvidia/version", &span, &exact), 0);
	assert_int_equal(span, 21);
}

static void replacement_pads_in_front(void **state)
{
	struct nvm_rules rs;
	char out[72];

	(void)state;
	assert_int_equal(rules_build(&model, "/run/nvm", true, false, &rs), 0);
	assert_int_equal(rules_replacement(&rs.r[0], 19, false, out), 0);
	assert_memory_equal(out, "/////////" "/run/nvm/p", 19);
	assert_int_equal(rules_replacement(&rs.r[0], 19, true, out), 0);
	assert_memory_equal(out, "////////" "/run/nvm/p/", 19);
	/* A device node gets no trailing slash: it is not a directory. */
	assert_int_equal(rules_replacement(&rs.r[8], 12, true, out), 0);
	assert_memory_equal(out, "///run/nvm/0", 12);
	assert_int_equal(rules_replacement(&rs.r[0], 5, false, out), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_alias_fits_its_path),
		cmocka_unit_test(driver_userspace_rules),
		cmocka_unit_test(too_long_a_root_is_refused_with_lengths),
		cmocka_unit_test(a_root_overlapping_a_redirected_path_is_refused),
		cmocka_unit_test(matches_at_component_boundaries),
		cmocka_unit_test(replacement_pads_in_front),
	};

	return cmocka_run_group_tests_name("rules", tests, load_gb300, NULL);
}
