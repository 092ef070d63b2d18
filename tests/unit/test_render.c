#include "unit.h"

#include <dirent.h>
#include <ftw.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "profile/fault.h"
#include "profile/profile.h"
#include "render/render.h"

static char host[64], roots[64]; /* roots: a prefix, not a directory */

/* A fake host: two CPUs online, one real PCI device, and a root complex the
 * h100 profile shares with it. */
static int make_host(void **state)
{
	char p[256];

	(void)state;
	snprintf(host, sizeof(host), "/tmp/nvm-host.XXXXXX");
	/* Tree roots must be short (the aliases fit in the real paths):
	 * /tmp/nuXXXX<suffix>. */
	snprintf(roots, sizeof(roots), "/tmp/nu%04x", (unsigned)getpid() & 0xffff);
	if (!mkdtemp(host))
		return -1;
	snprintf(p, sizeof(p), "%s/sys/devices/system/cpu", host);
	fs_mkdirs(p);
	fs_printf(p, "online", "0-1\n");
	fs_printf(p, "possible", "0-1\n");
	snprintf(p, sizeof(p), "%s/sys/devices/pci0000:00/0000:00:01.0", host);
	fs_mkdirs(p);
	fs_printf(p, "vendor", "0x1af4\n");
	snprintf(p, sizeof(p), "%s/sys/devices/pci0000:00", host);
	fs_printf(p, "uevent", "\n");
	snprintf(p, sizeof(p), "%s/sys/bus/pci/devices", host);
	fs_mkdirs(p);
	fs_symlink("../../../devices/pci0000:00/0000:00:01.0", p, "0000:00:01.0");
	return 0;
}

static int drop_host(void **state)
{
	(void)state;
	static const char *const names[] = { "g", "h", "k", "a", "o", "f", "x", "e" };
	char root[128];

	fs_remove_tree(host);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(root, sizeof(root), "%s%s", roots, names[i]);
		fs_remove_tree(root);
	}
	return 0;
}

static void load(const char *name, struct nvm_model *m)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/profiles/%s.yaml", srcdir(), name);
	assert_int_equal(profile_load(path, 0, m), 0);
	/* Golden files must not depend on where the checkout is. */
	snprintf(m->profile_path, sizeof(m->profile_path), "profiles/%s.yaml", name);
}

static void append_file(FILE *f, const char *root, const char *rel, bool binary)
{
	char path[4096];
	size_t n;
	char *data;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	data = slurp(path, &n);
	fprintf(f, "== %s\n", rel);
	if (!data) {
		fprintf(f, "(missing)\n");
	} else if (binary) {
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%02x%s", (unsigned char)data[i], i % 16 == 15 ? "\n" : " ");
	} else {
		fwrite(data, 1, n, f);
	}
	free(data);
}

static void append_link(FILE *f, const char *root, const char *rel)
{
	char path[4096], target[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	n = readlink(path, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	fprintf(f, "== %s -> %s\n", rel, n > 0 ? target : "(not a link)");
}

/* The files whose exact bytes matter, in a fixed order. */
static char *dump_tree(const struct nvm_model *m, const char *root)
{
	static const char *const attrs[] = {
		"vendor", "device", "subsystem_vendor", "subsystem_device", "class", "revision",
		"numa_node", "local_cpulist", "local_cpus", "irq", "modalias", "enable",
		"current_link_speed", "current_link_width", "uevent",
	};
	char *out = NULL, rel[512];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	append_file(f, root, "proc/driver/nvidia/version", false);
	append_file(f, root, "proc/driver/nvidia/params", false);
	append_file(f, root, "proc/driver/nvidia/registry", false);
	append_file(f, root, "sys/module/nvidia/version", false);
	for (unsigned i = 0; i < m->ngpus; i++) {
		const struct nvm_gpu *g = &m->gpus[i];
		const char *rc = m->roots[g->root].id;

		snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/%s/information", g->bus_id);
		append_file(f, root, rel, false);
		snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/%s/power", g->bus_id);
		append_file(f, root, rel, false);
		for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
			snprintf(rel, sizeof(rel), "sys/devices/%s/%s/%s", rc, g->bus_id, attrs[a]);
			append_file(f, root, rel, false);
		}
		snprintf(rel, sizeof(rel), "sys/devices/%s/%s/config", rc, g->bus_id);
		append_file(f, root, rel, true);
		snprintf(rel, sizeof(rel), "sys/devices/%s/%s/driver", rc, g->bus_id);
		append_link(f, root, rel);
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", g->bus_id);
		append_link(f, root, rel);
		snprintf(rel, sizeof(rel), "sys/bus/pci/drivers/nvidia/%s", g->bus_id);
		append_link(f, root, rel);
	}
	fclose(f);
	return out;
}

static void check_golden(const char *name, const char *text)
{
	char path[4096];
	char *want;

	snprintf(path, sizeof(path), "%s/tests/unit/golden/%s.txt", srcdir(), name);
	if (getenv("NVM_UPDATE_GOLDEN")) {
		spit(path, text);
		return;
	}
	want = slurp(path, NULL);
	assert_non_null(want);
	if (strcmp(want, text)) {
		spit("/tmp/nvm-golden-got.txt", text);
		fail_msg("%s differs from %s (got: /tmp/nvm-golden-got.txt)", name, path);
	}
	free(want);
}

static void render_at(const struct nvm_model *m, const char *root, int want)
{
	struct render_opts o = { .root = root, .clip_cpus = true, .host = host };
	static struct nvm_rules rs;

	assert_int_equal(render_tree(m, &o, &rs), want);
}

static void golden(const char *name)
{
	static struct nvm_model m;
	char root[128];
	char *text;

	load(name, &m);
	snprintf(root, sizeof(root), "%s%c", roots, name[0]);
	render_at(&m, root, 0);
	text = dump_tree(&m, root);
	check_golden(name, text);
	free(text);
}

static void gb300_matches_golden(void **state) { (void)state; golden("gb300"); }
static void h100_matches_golden(void **state) { (void)state; golden("h100"); }

static void host_entries_are_kept(void **state)
{
	static struct nvm_model m;
	char root[128], path[256], target[256];
	ssize_t n;

	(void)state;
	load("h100", &m);
	snprintf(root, sizeof(root), "%sk", roots);
	render_at(&m, root, 0);
	/* The host's device stays listed, pointing at its real place. */
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0000:00:01.0", root);
	n = readlink(path, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	snprintf(path, sizeof(path), "%s/sys/devices/pci0000:00/0000:00:01.0", host);
	assert_string_equal(target, path);
	/* And the shared root complex keeps the host's entries too. */
	snprintf(path, sizeof(path), "%s/sys/devices/pci0000:00/uevent", root);
	n = readlink(path, target, sizeof(target) - 1);
	assert_true(n > 0);
	snprintf(path, sizeof(path), "%s/sys/devices/pci0000:00/0000:18:00.0/vendor", root);
	assert_true(access(path, R_OK) == 0);
}

static int count_entries(const char *dir, const char *prefix)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

static void rerender_is_identical_and_atomic(void **state)
{
	static struct nvm_model m;
	char root[128];
	char *a, *b;

	(void)state;
	load("gb300", &m);
	snprintf(root, sizeof(root), "%sa", roots);
	render_at(&m, root, 0);
	a = dump_tree(&m, root);
	render_at(&m, root, 0);
	b = dump_tree(&m, root);
	assert_string_equal(a, b);
	/* The old tree went away with its temporary name. */
	assert_int_equal(count_entries("/tmp", strrchr(root, '/') + 1) - 1, 0);
	free(a);
	free(b);
}

static void failed_render_keeps_the_old_tree(void **state)
{
	static struct nvm_model m;
	char root[128], possible[256], info[256];
	char *before, *after, *text;

	(void)state;
	load("gb300", &m);
	snprintf(root, sizeof(root), "%so", roots);
	render_at(&m, root, 0);
	before = dump_tree(&m, root);
	/* Take away what the renderer needs from the host: it fails half way. */
	snprintf(possible, sizeof(possible), "%s/sys/devices/system/cpu/possible", host);
	unlink(possible);
	strcpy(m.gpus[0].name, "CHANGED");
	capture_begin();
	render_at(&m, root, -1);
	assert_non_null(strstr(capture_end(), "cannot read the host's CPUs"));
	after = dump_tree(&m, root);
	assert_string_equal(before, after);
	snprintf(info, sizeof(info), "%s/proc/driver/nvidia/gpus/0008:06:00.0/information", root);
	text = slurp(info, NULL);
	assert_non_null(text);
	assert_null(strstr(text, "CHANGED"));
	free(text);
	assert_int_equal(count_entries("/tmp", strrchr(root, '/') + 1) - 1, 0);
	fs_printf(host, "sys/devices/system/cpu/possible", "0-1\n");
	free(before);
	free(after);
}

static void refuses_to_replace_a_foreign_directory(void **state)
{
	static struct nvm_model m;
	char root[128];

	(void)state;
	load("t4", &m);
	snprintf(root, sizeof(root), "%sf", roots);
	fs_mkdirs(root);
	fs_printf(root, "precious", "data\n");
	capture_begin();
	render_at(&m, root, -1);
	assert_non_null(strstr(capture_end(), "is not a tree nvmirage rendered"));
	assert_int_equal(count_entries(root, "precious"), 1);
}

/* What a fault changes of the tree, and that clear gives it back whole. */
static void a_fault_and_its_clear(void **state)
{
	static struct nvm_model m;
	char root[128], path[256], *before, *state_before, *text;
	const char *why;
	size_t len;
	unsigned char *cfg;

	(void)state;
	load("gb300", &m);
	snprintf(root, sizeof(root), "%sx", roots);
	render_at(&m, root, 0);
	before = dump_tree(&m, root);
	snprintf(path, sizeof(path), "%s/sys/module/nvidia/nvmirage/0018:06:00.0.state", root);
	state_before = slurp(path, NULL);
	assert_string_equal(state_before, "mode=none\necc_errors=0\necc_pending=0\nxids=\n");

	assert_int_equal(fault_apply(&m, 2, "fallen-off-bus", 0, &why), 0);
	assert_int_equal(fault_apply(&m, 3, "excluded", 0, &why), 0);
	assert_int_equal(fault_apply(&m, 2, "ecc", 0, &why), 0);
	assert_int_equal(render_gpu_refresh(&m, 2, root), 0);
	assert_int_equal(render_gpu_refresh(&m, 3, root), 0);
	text = slurp(path, NULL);
	assert_string_equal(text, "mode=fallen-off-bus\necc_errors=1\necc_pending=1\nxids=1:79 2:48\n");
	free(text);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0018:06:00.0/config", root);
	cfg = (unsigned char *)slurp(path, &len);
	assert_int_equal(len, 256);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(cfg[i], 0xff);
	free(cfg);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/0018:06:00.0/revision", root);
	text = slurp(path, NULL);
	assert_string_equal(text, "0xff\n");
	free(text);
	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/0019:06:00.0/information", root);
	text = slurp(path, NULL);
	assert_non_null(strstr(text, "GPU Excluded:\t Yes\n"));
	free(text);
	/* Nothing left beside the files. */
	assert_int_equal(count_entries(root, ".replacing"), 0);

	assert_int_equal(fault_apply(&m, 2, "clear", 0, &why), 0);
	assert_int_equal(fault_apply(&m, 3, "clear", 0, &why), 0);
	assert_int_equal(render_gpu_refresh(&m, 2, root), 0);
	assert_int_equal(render_gpu_refresh(&m, 3, root), 0);
	text = dump_tree(&m, root);
	assert_string_equal(text, before);
	free(text);
	snprintf(path, sizeof(path), "%s/sys/module/nvidia/nvmirage/0018:06:00.0.state", root);
	text = slurp(path, NULL);
	assert_string_equal(text, state_before);
	free(text);
	free(before);
	free(state_before);
}

/* GPUs by index, bus id (either form) or UUID; bad modes change nothing;
 * the last 16 Xid events are kept, all of them counted. */
static void faults_on_the_model(void **state)
{
	static struct nvm_model m;
	const char *why = NULL;

	(void)state;
	load("gb300", &m);
	assert_int_equal(fault_find_gpu(&m, "2"), 2);
	assert_int_equal(fault_find_gpu(&m, "0018:06:00.0"), 2);
	assert_int_equal(fault_find_gpu(&m, "00000018:06:00.0"), 2);
	assert_int_equal(fault_find_gpu(&m, "GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f03"), 2);
	assert_int_equal(fault_find_gpu(&m, "gpu-3A7F5C2E-1b4d-4e8a-9c6f-0d2b8e4a1f03"), 2);
	assert_int_equal(fault_find_gpu(&m, "7"), -1);
	assert_int_equal(fault_find_gpu(&m, "0018:07:00.0"), -1);
	assert_int_equal(fault_find_gpu(&m, "nonsense"), -1);
	assert_int_equal(fault_apply(&m, 0, "melt", 0, &why), -1);
	assert_non_null(strstr(why, "unknown mode"));
	assert_int_equal(fault_apply(&m, 0, "xid", 0, &why), -1);
	assert_int_equal(fault_apply(&m, 0, "lost", 31, &why), -1);
	assert_non_null(strstr(why, "--xid goes with the xid mode only"));
	assert_int_equal(m.gpus[0].fault.mode, NVM_FAULT_NONE);
	for (unsigned k = 1; k <= 20; k++)
		assert_int_equal(fault_apply(&m, 0, "xid", k, &why), 0);
	assert_int_equal(m.gpus[0].fault.xid_total, 20);
	assert_int_equal(m.gpus[0].fault.nxids, NVM_MAX_XIDS);
	assert_int_equal(m.gpus[0].fault.xids[0].code, 5);
	assert_int_equal(m.gpus[0].fault.xids[NVM_MAX_XIDS - 1].code, 20);
	assert_int_equal(m.gpus[0].fault.xids[NVM_MAX_XIDS - 1].seq, 20);
	assert_int_equal(fault_apply(&m, 1, "xid", 9, &why), 0);
	assert_int_equal(m.gpus[1].fault.xids[0].seq, 21); /* node-wide */
	assert_int_equal(fault_apply(&m, 0, "clear", 0, &why), 0);
	assert_int_equal(m.gpus[0].fault.xid_total, 0);
}

/* An empty directory where the tree goes is no obstacle (a tree whose
 * directory could not be removed leaves one). */
static void an_empty_directory_is_taken(void **state)
{
	static struct nvm_model m;
	char root[128];

	(void)state;
	load("t4", &m);
	snprintf(root, sizeof(root), "%se", roots);
	fs_mkdirs(root);
	render_at(&m, root, 0);
	assert_int_equal(count_entries(root, NVM_TREE_MARK), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gb300_matches_golden),
		cmocka_unit_test(h100_matches_golden),
		cmocka_unit_test(host_entries_are_kept),
		cmocka_unit_test(rerender_is_identical_and_atomic),
		cmocka_unit_test(failed_render_keeps_the_old_tree),
		cmocka_unit_test(refuses_to_replace_a_foreign_directory),
		cmocka_unit_test(a_fault_and_its_clear),
		cmocka_unit_test(faults_on_the_model),
		cmocka_unit_test(an_empty_directory_is_taken),
	};

	return cmocka_run_group_tests_name("render", tests, make_host, drop_host);
}
