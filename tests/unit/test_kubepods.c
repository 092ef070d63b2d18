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

/* Every layout the kubelet makes (driver, cgroupRoot, QoS class), and
 * where each puts a pod: the walk finds the pod at exactly that path, and
 * nothing else. */
static const char *const layouts[] = {
	/* kubeadm, systemd driver */
	"kubepods.slice/kubepods-pod" UID_ ".slice",
	"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
	"kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice",
	/* Kind: cgroupRoot /kubelet, systemd driver */
	"kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" UID_ ".slice",
	"kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
	"kubelet-kubepods-burstable-pod" UID_ ".slice",
	"kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	"kubelet-kubepods-besteffort-pod" UID_ ".slice",
	/* kubeadm and k3s, cgroupfs driver */
	"kubepods/pod" UID,
	"kubepods/burstable/pod" UID,
	"kubepods/besteffort/pod" UID,
	/* another cgroupRoot (/custom), either driver */
	"custom.slice/custom-kubepods.slice/custom-kubepods-besteffort.slice/"
	"custom-kubepods-besteffort-pod" UID_ ".slice",
	"custom/kubepods/burstable/pod" UID,
};

static void finds_the_pod_cgroup_on_every_layout(void **state)
{
	char want[4096], cmd[128];

	(void)state;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		struct kubepods k = { 0 };
		char ctr[4200];

		assert_int_equal(kubepods_scan(&k, tmp, -1), 0);
		assert_null(kubepods_find(&k, UID));
		mkdir_p(layouts[i]);
		/* A container cgroup inside, and a pod without GPUs beside. */
		snprintf(ctr, sizeof(ctr), "%s/cri-containerd-0123.scope", layouts[i]);
		mkdir_p(ctr);
		mkdir_p("kubepods/besteffort/pod1a2b3c4d-0000-4000-8000-00000000000b");
		assert_int_equal(kubepods_scan(&k, tmp, -1), 0);
		snprintf(want, sizeof(want), "%s/%s", tmp, layouts[i]);
		assert_non_null(kubepods_find(&k, UID));
		assert_string_equal(kubepods_find(&k, UID), want);
		assert_non_null(kubepods_find(&k, "1a2b3c4d-0000-4000-8000-00000000000b"));
		assert_int_equal(k.n, 2);
		kubepods_free(&k);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'/kube* '%s'/custom*", tmp, tmp);
		assert_int_equal(system(cmd), 0);
	}
}

/* Names that look like pods but are not (no UID, a short one, the wrong
 * separator), and pods too deep below unrelated directories. */
static void takes_only_pod_names_with_a_uid(void **state)
{
	char uid[KUBE_UID_LEN + 1];

	(void)state;
	assert_int_equal(kubepods_name_uid("kubepods-pod" UID_ ".slice", uid), 0);
	assert_string_equal(uid, UID);
	assert_int_equal(kubepods_name_uid("pod" UID, uid), 0);
	assert_string_equal(uid, UID);
	assert_int_equal(kubepods_name_uid("kubepods-burstable.slice", uid), -1);
	assert_int_equal(kubepods_name_uid("kubepods-pod" UID ".slice", uid), 0);
	assert_int_equal(kubepods_name_uid("kubepodspod" UID_ ".slice", uid), -1);
	assert_int_equal(kubepods_name_uid("pod" UID_, uid), -1);
	assert_int_equal(kubepods_name_uid("pod1a2b3c4d", uid), -1);
	assert_int_equal(kubepods_name_uid("pod../../etc", uid), -1);
	assert_int_equal(kubepods_name_uid("cri-containerd-" UID ".scope", uid), -1);
}

/* The walk goes down kubepods directories and the two levels above, not
 * the rest of the tree. */
static void walks_only_where_pods_can_be(void **state)
{
	struct kubepods k = { 0 };
	char cmd[128];

	(void)state;
	mkdir_p("system.slice/a.service/deep/pod" UID);
	mkdir_p("x/y/z/kubepods/pod" UID);
	mkdir_p("kubepods.slice/kubepods-besteffort.slice");
	assert_int_equal(kubepods_scan(&k, tmp, -1), 0);
	assert_null(kubepods_find(&k, UID));
	/* root, system.slice, x, kubepods.slice, its QoS directory */
	assert_int_equal(k.dirs, 5);
	kubepods_free(&k);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/system.slice '%s'/x '%s'/kube*", tmp, tmp, tmp);
	assert_int_equal(system(cmd), 0);
}

static void takes_the_uid_from_the_pod_log_directory(void **state)
{
	struct kubepods_logs l = { 0 };
	char logs[128];

	(void)state;
	mkdir_p("logs/slurm_worker-0_" UID);
	mkdir_p("logs/slurm_worker-00_1a2b3c4d-0000-4000-8000-00000000000b");
	mkdir_p("logs/web_worker-0_1a2b3c4d-0000-4000-8000-00000000000c");
	mkdir_p("logs/slurm_worker_1a2b3c4d-0000-4000-8000-00000000000d");
	snprintf(logs, sizeof(logs), "%s/logs", tmp);
	assert_int_equal(kubepods_logs_read(&l, logs), 0);
	assert_string_equal(kubepods_logs_uid(&l, "slurm", "worker-0", 0), UID);
	assert_null(kubepods_logs_uid(&l, "slurm", "worker-0", 1));
	assert_string_equal(kubepods_logs_uid(&l, "slurm", "worker-00", 0),
			    "1a2b3c4d-0000-4000-8000-00000000000b");
	assert_string_equal(kubepods_logs_uid(&l, "slurm", "worker", 0),
			    "1a2b3c4d-0000-4000-8000-00000000000d");
	assert_null(kubepods_logs_uid(&l, "slurm", "worker-1", 0));
	assert_null(kubepods_logs_uid(&l, "other", "worker-0", 0));
	/* Read again: what is gone is gone, what came is there. */
	mkdir_p("logs/slurm_worker-1_1a2b3c4d-0000-4000-8000-00000000000e");
	assert_int_equal(kubepods_logs_read(&l, logs), 0);
	assert_string_equal(kubepods_logs_uid(&l, "slurm", "worker-1", 0),
			    "1a2b3c4d-0000-4000-8000-00000000000e");
	assert_int_equal(l.n, 5);
	kubepods_logs_free(&l);
	assert_int_equal(kubepods_logs_read(&l, "/nonexistent-pod-logs"), -1);
	assert_int_equal(l.n, 0);
	kubepods_logs_free(&l);
}

/* A pod made again under its name: both UIDs, in order, for the caller to
 * take the one with a cgroup. */
static void gives_every_uid_of_a_pod_made_again(void **state)
{
	struct kubepods_logs l = { 0 };
	char logs[128];

	(void)state;
	mkdir_p("logs3/slurm_worker-0_1a2b3c4d-0000-4000-8000-0000000000f1");
	mkdir_p("logs3/slurm_worker-0_1a2b3c4d-0000-4000-8000-0000000000f0");
	snprintf(logs, sizeof(logs), "%s/logs3", tmp);
	assert_int_equal(kubepods_logs_read(&l, logs), 0);
	assert_string_equal(kubepods_logs_uid(&l, "slurm", "worker-0", 0),
			    "1a2b3c4d-0000-4000-8000-0000000000f0");
	assert_string_equal(kubepods_logs_uid(&l, "slurm", "worker-0", 1),
			    "1a2b3c4d-0000-4000-8000-0000000000f1");
	assert_null(kubepods_logs_uid(&l, "slurm", "worker-0", 2));
	kubepods_logs_free(&l);
}

/* A directory whose "uid" is not one (it would become part of a path). */
static void ignores_log_directories_without_a_uid(void **state)
{
	static const char *const bad[] = { "logs2/a_b_..", "logs2/a_b_not-a-uid",
					   "logs2/a_b_1a2b3c4d-0000-4000-8000-00000000000",
					   "logs2/a_b_1a2b3c4d-0000-4000-8000-00000000000aa" };
	struct kubepods_logs l = { 0 };
	char logs[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		mkdir_p(bad[i]);
	snprintf(logs, sizeof(logs), "%s/logs2", tmp);
	assert_int_equal(kubepods_logs_read(&l, logs), 0);
	assert_null(kubepods_logs_uid(&l, "a", "b", 0));
	kubepods_logs_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_the_pod_cgroup_on_every_layout),
		cmocka_unit_test(takes_only_pod_names_with_a_uid),
		cmocka_unit_test(walks_only_where_pods_can_be),
		cmocka_unit_test(takes_the_uid_from_the_pod_log_directory),
		cmocka_unit_test(gives_every_uid_of_a_pod_made_again),
		cmocka_unit_test(ignores_log_directories_without_a_uid),
	};

	return cmocka_run_group_tests_name("kubepods", tests, setup, teardown);
}
