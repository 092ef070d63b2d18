#include "unit.h"

#include "kube/kubepods.h"

#define UID "1a2b3c4d-0000-4000-8000-00000000000a"
#define UID_ "1a2b3c4d_0000_4000_8000_00000000000a"

static char tmp[64];

static void mkdir_p(const char *rel)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", tmp, rel);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/nvm-unit-kube.XXXXXX");
	return mkdtemp(tmp) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd);
}

/* The pod's cgroup, for each driver and QoS class, found where the kubelet
 * puts it and nowhere else. */
static void finds_the_pod_cgroup_for_both_drivers_and_every_qos(void **state)
{
	static const char *const layouts[] = {
		"kubepods.slice/kubepods-pod" UID_ ".slice",
		"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
		"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice",
		"kubepods/pod" UID,
		"kubepods/burstable/pod" UID,
		"kubepods/besteffort/pod" UID,
	};
	char path[4096], want[4096], cmd[128];

	(void)state;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		assert_int_equal(kubepods_cgroup(tmp, UID, path, sizeof(path)), -1);
		mkdir_p(layouts[i]);
		assert_int_equal(kubepods_cgroup(tmp, UID, path, sizeof(path)), 0);
		snprintf(want, sizeof(want), "%s/%s", tmp, layouts[i]);
		assert_string_equal(path, want);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'/kubepods*", tmp);
		assert_int_equal(system(cmd), 0);
	}
}

static void takes_the_uid_from_the_pod_log_directory(void **state)
{
	char uid[KUBE_UID_LEN + 1];

	(void)state;
	mkdir_p("logs/slurm_worker-0_" UID);
	mkdir_p("logs/slurm_worker-00_1a2b3c4d-0000-4000-8000-00000000000b");
	mkdir_p("logs/web_worker-0_1a2b3c4d-0000-4000-8000-00000000000c");
	snprintf(uid, sizeof(uid), "unset");
	{
		char logs[128];

		snprintf(logs, sizeof(logs), "%s/logs", tmp);
		assert_int_equal(kubepods_uid(logs, "slurm", "worker-0", uid), 0);
		assert_string_equal(uid, UID);
		assert_int_equal(kubepods_uid(logs, "slurm", "worker-1", uid), -1);
		assert_int_equal(kubepods_uid(logs, "other", "worker-0", uid), -1);
	}
}

/* A directory whose "uid" is not one (it would become part of a path). */
static void ignores_log_directories_without_a_uid(void **state)
{
	static const char *const bad[] = { "logs2/a_b_..", "logs2/a_b_not-a-uid",
					   "logs2/a_b_1a2b3c4d-0000-4000-8000-00000000000",
					   "logs2/a_b_1a2b3c4d-0000-4000-8000-00000000000aa" };
	char uid[KUBE_UID_LEN + 1], logs[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		mkdir_p(bad[i]);
	snprintf(logs, sizeof(logs), "%s/logs2", tmp);
	assert_int_equal(kubepods_uid(logs, "a", "b", uid), -1);
}

static void lists_the_directories_new_pods_appear_in(void **state)
{
	char dirs[8][4096];

	(void)state;
	assert_int_equal(kubepods_parents(tmp, dirs, 8), 0);
	mkdir_p("kubepods.slice/kubepods-burstable.slice");
	mkdir_p("kubepods/besteffort");
	assert_int_equal(kubepods_parents(tmp, dirs, 8), 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_the_pod_cgroup_for_both_drivers_and_every_qos),
		cmocka_unit_test(takes_the_uid_from_the_pod_log_directory),
		cmocka_unit_test(ignores_log_directories_without_a_uid),
		cmocka_unit_test(lists_the_directories_new_pods_appear_in),
	};

	return cmocka_run_group_tests_name("kubepods", tests, setup, teardown);
}
