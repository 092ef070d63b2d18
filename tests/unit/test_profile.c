#include "unit.h"

#include "lib/log.h"
#include "profile/mig.h"
#include "profile/profile.h"

static const char *const shipped[] = { "gb300", "gb200", "b200", "h100", "a100", "l40s", "t4" };
static const unsigned shipped_gpus[] = { 4, 4, 8, 8, 8, 4, 1 };

static void every_shipped_profile_loads(void **state)
{
	static struct nvm_model m;
	char path[4096];

	(void)state;
	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		snprintf(path, sizeof(path), "%s/profiles/%s.yaml", srcdir(), shipped[i]);
		assert_int_equal(profile_load(path, 0, &m), 0);
		assert_int_equal(m.ngpus, shipped_gpus[i]);
		for (unsigned g = 0; g < m.ngpus; g++) {
			assert_int_equal(m.gpus[g].vendor_id, 0x10de);
			assert_true(m.gpus[g].root >= 0 && (unsigned)m.gpus[g].root < m.nroots);
		}
	}
}

static void gb300_has_the_values_slurm_needs(void **state)
{
	static struct nvm_model m;
	char path[4096], list[64];

	(void)state;
	snprintf(path, sizeof(path), "%s/profiles/gb300.yaml", srcdir());
	assert_int_equal(profile_load(path, 0, &m), 0);
	assert_string_equal(m.driver_version, "570.124.06");
	assert_string_equal(m.cuda_version, "12.8");
	assert_string_equal(m.gpus[0].name, "NVIDIA GB300 NVL");
	assert_string_equal(m.gpus[2].bus_id, "0018:06:00.0");
	assert_int_equal(m.gpus[3].minor, 3);
	assert_int_equal(m.gpus[0].device_id, 0x31c2);
	assert_int_equal(m.gpus[0].subsystem_device, 0x21f1);
	assert_int_equal(m.roots[m.gpus[2].root].numa_node, 1);
	cpuset_format_list(&m.roots[m.gpus[2].root].cpus, list, sizeof(list));
	assert_string_equal(list, "72-143");
	assert_string_equal(m.gpus[1].gsp_firmware, "570.124.06");
}

/* A Mokka-style profile: extra keys everywhere, per-device overrides, hex and
 * quoted integers, anchors, comments, no pcie_topology. */
static const char mokka_like[] =
	"version: \"1.0\"\n"
	"system:\n"
	"  driver_version: 550.163.01   # unquoted\n"
	"  cuda_version_major: 12\n"
	"  cuda_version_minor: \"4\"\n"
	"  fabric: {mode: off}\n"
	"device_defaults: &defaults\n"
	"  name: NVIDIA H100 80GB HBM3\n"
	"  pci: {device_id: 0x233010DE, subsystem_id: \"0x165810DE\"}\n"
	"  memory: {total_bytes: 85899345920, bar1: {total_bytes: 1}}\n"
	"  nvlink: {links: 18}\n"
	"  clocks_mhz: [1980, 2619]\n"
	"devices:\n"
	"  - index: 0\n"
	"    uuid: GPU-00000000-0000-0000-0000-000000000001\n"
	"    minor_number: 0\n"
	"    pci: {bus_id: \"0000:1A:00.0\"}\n"
	"    temperature: 31\n"
	"  - index: 1\n"
	"    minor_number: 0x1\n"
	"    name: NVIDIA H100 PCIe\n"
	"    pci: {bus_id: \"0000:1b:00.0\", device_id: 0x233110DE}\n"
	"    mig: {enabled: false, profiles: []}\n"
	"dynamic: {utilization: random}\n";

static void reads_mokka_shapes_and_ignores_unknown_keys(void **state)
{
	static struct nvm_model m;

	(void)state;
	assert_int_equal(profile_parse("mokka.yaml", mokka_like, sizeof(mokka_like) - 1, 0, &m), 0);
	assert_int_equal(m.ngpus, 2);
	assert_string_equal(m.cuda_version, "12.4");
	assert_string_equal(m.gpus[0].bus_id, "0000:1a:00.0");
	assert_string_equal(m.gpus[1].name, "NVIDIA H100 PCIe");
	assert_int_equal(m.gpus[1].device_id, 0x2331);
	assert_int_equal(m.gpus[0].subsystem_device, 0x1658);
	assert_int_equal(m.gpus[1].minor, 1);
	/* A UUID is derived when the profile has none, and is valid. */
	assert_int_equal(strncmp(m.gpus[1].uuid, "GPU-", 4), 0);
	assert_int_equal(strlen(m.gpus[1].uuid), 40);
	/* No pcie_topology: Mokka's flat default. */
	assert_int_equal(m.nroots, 1);
	assert_string_equal(m.roots[0].id, "pci0000:00");
}

static void num_devices_and_gpus_cut_the_list(void **state)
{
	static struct nvm_model m;
	char path[4096];
	const char *err;

	(void)state;
	snprintf(path, sizeof(path), "%s/profiles/h100.yaml", srcdir());
	assert_int_equal(profile_load(path, 2, &m), 0);
	assert_int_equal(m.ngpus, 2);
	capture_begin();
	assert_int_equal(profile_load(path, 9, &m), -1);
	err = capture_end();
	assert_non_null(strstr(err, "--gpus 9, but the profile has 8 devices"));
}

struct bad_case {
	const char *what;
	const char *yaml;
	const char *error; /* expected "LINE:COL: key: message" fragment */
};

#define SYS "system: {driver_version: \"570.1\"}\n"
#define DEF "device_defaults: {name: X, pci: {device_id: 0x233010DE}}\n"
#define DEV(minor, bus) "  - {minor_number: " minor ", pci: {bus_id: \"" bus "\"}}\n"

static const struct bad_case bad[] = {
	{ "not YAML", "system: [a, b\n", "bad.yaml:2:1: not valid YAML" },
	{ "not a mapping", "- a\n- b\n", "bad.yaml:1:1: (document): expected a mapping" },
	{ "no system", "devices: []\n", "system: missing" },
	{ "no driver version", "system: {cuda_version: \"12.0\"}\n" DEF "devices:\n" DEV("0", "0000:01:00.0"),
	  "bad.yaml:1:9: system.driver_version: missing" },
	{ "driver not a version", "system: {driver_version: \"abc\"}\n" DEF "devices:\n" DEV("0", "0000:01:00.0"),
	  "system.driver_version: \"abc\" is not a version" },
	{ "devices not a list", SYS DEF "devices: {a: 1}\n", "bad.yaml:3:10: devices: expected a list" },
	{ "no name", SYS "devices:\n" DEV("0", "0000:01:00.0"), "bad.yaml:3:5: devices[0].name: missing" },
	{ "no bus id", SYS DEF "devices:\n  - {minor_number: 0}\n", "devices[0].pci.bus_id: missing" },
	{ "no minor", SYS DEF "devices:\n  - {pci: {bus_id: \"0000:01:00.0\"}}\n",
	  "devices[0].minor_number: missing" },
	{ "minor not a number", SYS DEF "devices:\n" DEV("zero", "0000:01:00.0"),
	  "bad.yaml:4:20: devices[0].minor_number: expected an unsigned integer, found \"zero\"" },
	{ "minor out of range", SYS DEF "devices:\n" DEV("255", "0000:01:00.0"),
	  "devices[0].minor_number: 255 is outside 0..254" },
	{ "negative minor", SYS DEF "devices:\n" DEV("-1", "0000:01:00.0"),
	  "devices[0].minor_number: expected an unsigned integer" },
	{ "bus id with a slash", SYS DEF "devices:\n" DEV("0", "0000:01/00.0"),
	  "bad.yaml:4:37: devices[0].pci.bus_id: \"0000:01/00.0\" is not a PCI address" },
	{ "bus id with ..", SYS DEF "devices:\n" DEV("0", "../../etc/x"), "is not a PCI address" },
	{ "bus id short", SYS DEF "devices:\n" DEV("0", "01:00.0"), "is not a PCI address" },
	{ "bus id function 8", SYS DEF "devices:\n" DEV("0", "0000:01:00.8"), "is not a PCI address" },
	{ "duplicate bus id", SYS DEF "devices:\n" DEV("0", "0000:01:00.0") DEV("1", "0000:01:00.0"),
	  "bad.yaml:5:5: devices[1].pci.bus_id: same as devices[0] (line 4)" },
	{ "duplicate minor", SYS DEF "devices:\n" DEV("3", "0000:01:00.0") DEV("3", "0000:02:00.0"),
	  "devices[1].minor_number: same as devices[0]" },
	{ "duplicate uuid", SYS DEF "devices:\n"
	  "  - {uuid: GPU-00000000-0000-0000-0000-000000000001, minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}}\n"
	  "  - {uuid: GPU-00000000-0000-0000-0000-000000000001, minor_number: 1, pci: {bus_id: \"0000:02:00.0\"}}\n",
	  "devices[1].uuid: same as devices[0]" },
	{ "malformed uuid", SYS DEF "devices:\n"
	  "  - {uuid: GPU-1234, minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}}\n",
	  "bad.yaml:4:12: devices[0].uuid: \"GPU-1234\" is not GPU-" },
	{ "wrong type for name", SYS "device_defaults: {name: [a], pci: {device_id: 1}}\n" "devices:\n" DEV("0", "0000:01:00.0"),
	  "bad.yaml:2:25: device_defaults.name: expected a string, found a list" },
	{ "GPU in no root complex", SYS DEF "devices:\n" DEV("0", "0000:01:00.0") DEV("1", "0000:02:00.0")
	  "pcie_topology: {root_complexes: [{id: pci0000:00, numa_node: 0, devices: [\"0000:01:00.0\"]}]}\n",
	  "bad.yaml:5:5: devices[1].pci.bus_id: 0000:02:00.0 is in no root complex" },
	{ "bad cpu list", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "pcie_topology: {root_complexes: [{id: pci0000:00, cpu_affinity: \"0-x\", devices: [\"0000:01:00.0\"]}]}\n",
	  "pcie_topology.root_complexes[0].cpu_affinity: \"0-x\": expected a CPU number" },
	{ "bad root complex id", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "pcie_topology: {root_complexes: [{id: pci0000/00, devices: [\"0000:01:00.0\"]}]}\n",
	  "root_complexes[0].id: \"pci0000/00\" is not of the form pciDDDD:BB" },
	{ "unknown device in topology", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "pcie_topology: {root_complexes: [{id: pci0000:00, devices: [\"0000:01:00.0\", \"0000:09:00.0\"]}]}\n",
	  "devices[1]: 0000:09:00.0 is not one of the devices" },
	{ "nvlink version 0", SYS DEF "devices:\n" DEV("0", "0000:01:00.0") "nvlink: {version: 0, links_per_gpu: 4}\n",
	  "bad.yaml:5:19: nvlink.version: must be 1..5" },
	{ "nvlink too many links", SYS DEF "devices:\n" DEV("0", "0000:01:00.0") "nvlink: {version: 4, links_per_gpu: 19}\n",
	  "nvlink.links_per_gpu: 19 is out of range" },
	{ "nvlink switch_support not a bool", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "nvlink: {version: 4, links_per_gpu: 4, switch_support: yes}\n",
	  "nvlink.switch_support: expected true or false" },
	{ "nvlink peer of itself", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "nvlink: {version: 4, links_per_gpu: 4, peers: [{gpus: [0, 0], links: 2}]}\n",
	  "nvlink.peers[0].gpus: a GPU cannot be its own peer" },
	{ "nvlink peer without links", SYS DEF "devices:\n  - {index: 0, minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}}\n"
	  "  - {index: 1, minor_number: 1, pci: {bus_id: \"0000:02:00.0\"}}\n"
	  "nvlink: {version: 4, links_per_gpu: 4, peers: [{gpus: [0, 1]}]}\n",
	  "nvlink.peers[0].links: missing" },
	{ "nvlink more peer links than links", SYS DEF "devices:\n  - {index: 0, minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}}\n"
	  "  - {index: 1, minor_number: 1, pci: {bus_id: \"0000:02:00.0\"}}\n"
	  "  - {index: 2, minor_number: 2, pci: {bus_id: \"0000:03:00.0\"}}\n"
	  "nvlink: {version: 4, links_per_gpu: 4, peers: [{gpus: [0, 1], links: 3}, {gpus: [0, 2], links: 2}]}\n",
	  "nvlink.peers: GPU 0 has 5 peer links, more than links_per_gpu (4)" },
	{ "telemetry: unknown key", SYS "device_defaults: {name: X, pci: {device_id: 0x233010DE}, clocks: {graphics_mhz: 1980}}\ndevices:\n" DEV("0", "0000:01:00.0"),
	  "bad.yaml:2:67: device_defaults.clocks: unknown key \"graphics_mhz\"" },
	{ "telemetry: temperature out of range", SYS "device_defaults: {name: X, pci: {device_id: 0x233010DE}, thermal: {temperature_gpu_c: 900}}\ndevices:\n" DEV("0", "0000:01:00.0"),
	  "device_defaults.thermal.temperature_gpu_c" },
	{ "telemetry: bad utilization pattern", SYS "device_defaults: {name: X, pci: {device_id: 0x233010DE}, dynamic_metrics: {utilization: {pattern: wavy}}}\ndevices:\n" DEV("0", "0000:01:00.0"),
	  "device_defaults.dynamic_metrics.utilization.pattern: \"wavy\": expected steady, idle, busy, burst" },
	{ "telemetry: a process without pid", SYS "device_defaults: {name: X, pci: {device_id: 0x233010DE}, processes: [{name: x}]}\ndevices:\n" DEV("0", "0000:01:00.0"),
	  "device_defaults.processes[0]: pid: missing (required)" },
	{ "infiniband: unknown key", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "infiniband: {enabled: true, rate: 400}\n", "bad.yaml:5:29: infiniband: unknown key \"rate\"" },
	{ "infiniband: not an mlx5 HCA", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "infiniband: {enabled: true, hca_type: MT4130}\n",
	  "bad.yaml:5:39: infiniband.hca_type: \"MT4130\": expected an mlx5 HCA as MT<PCI device id in decimal>" },
	{ "infiniband: a rate no 4X port has", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "infiniband: {enabled: true, rate_gbps: 300}\n",
	  "infiniband.rate_gbps: 300: expected a 4X port's rate" },
	{ "infiniband: a port state that does not exist", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "infiniband: {enabled: true, port_state: UP}\n",
	  "infiniband.port_state: \"UP\": expected one of DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER" },
	{ "infiniband: a link layer that does not exist", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "infiniband: {enabled: true, link_layer: Omnipath}\n",
	  "infiniband.link_layer: \"Omnipath\": expected InfiniBand or Ethernet" },
	{ "infiniband: a GUID prefix not in hex", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "infiniband: {enabled: true, guid_prefix: \"9b88c2:03zz\"}\n",
	  "infiniband.guid_prefix: \"9b88c2:03zz\": expected hex digits" },
	{ "infiniband: too many HCAs", SYS DEF "devices:\n" DEV("0", "0000:01:00.0")
	  "infiniband: {enabled: true, hcas_per_gpu: 9}\n", "infiniband.hcas_per_gpu: 9 is out of range" },
	{ "mig: a profile the board lacks", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, gpu_instances: [{profile: 3g.40gb}]}}\n",
	  "devices[0].mig.gpu_instances[0]: \"3g.40gb\": not a profile of this board (1g.5gb (19), 2g.10gb (14), 3g.20gb (9), 4g.20gb (5), 7g.40gb (0))" },
	{ "mig: more slices than the board has", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, gpu_instances: [{profile: 4g.20gb}, {profile: 2g.10gb, count: 2}]}}\n",
	  "devices[0].mig.gpu_instances[1]: 2g.10gb: more compute slices than the board's 7" },
	{ "mig: a placement taken", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, instances: [{profile: 3g.20gb, placement_start: 0}, {profile: 1g.5gb, placement_start: 2}]}}\n",
	  "devices[0].mig.instances[1]: 1g.5gb: that placement is taken" },
	{ "mig: a compute instance profile of another GPU instance", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, instances: [{profile: 3g.20gb, compute_instances: [{profile: 1c.2g.10gb}]}]}}\n",
	  "devices[0].mig.instances[0].compute_instances[0]: \"1c.2g.10gb\": not a compute instance profile of 3g.20gb (1c.3g.20gb, 2c.3g.20gb, 3g.20gb)" },
	{ "mig: more compute slices than the GPU instance has", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, instances: [{profile: 3g.20gb, compute_instances: [{profile: 2c.3g.20gb, count: 2}]}]}}\n",
	  "devices[0].mig.instances[0].compute_instances[0]: no free compute slices left for it" },
	{ "mig: a compute placement taken", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, instances: [{profile: 7g.40gb, compute_instances: [{profile: 1c.7g.40gb, placement_start: 3}, {profile: 1c.7g.40gb, placement_start: 3}]}]}}\n",
	  "devices[0].mig.instances[0].compute_instances[1]: that placement is taken" },
	{ "mig: a 4g instance has no 3c", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, instances: [{profile: 4g.20gb, compute_instances: [{profile: 3c.4g.20gb}]}]}}\n",
	  "\"3c.4g.20gb\": not a compute instance profile of 4g.20gb (1c.4g.20gb, 2c.4g.20gb, 4g.20gb)" },
	{ "mig: no compute instance", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, instances: [{profile: 3g.20gb, compute_instances: []}]}}\n",
	  "compute_instances: expected a list of at least one" },
	{ "mig: instances with MIG off", SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\ndevices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {gpu_instances: [{profile: 1g.5gb}]}}\n",
	  "devices[0].mig: instances need mode_current: enabled" },
	{ "mig: a board without a table", SYS DEF "devices:\n"
	  "  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled, gpu_instances: [{profile: 1g.5gb}]}}\n",
	  "devices[0].mig: nvmirage has no MIG profile table for \"X\"" },
	{ "num_devices too large", "system: {driver_version: \"570.1\", num_devices: 3}\n" DEF "devices:\n" DEV("0", "0000:01:00.0"),
	  "system.num_devices: 3, but only 1 devices are listed" },
};

static void each_bad_input_names_file_line_and_key(void **state)
{
	static struct nvm_model m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *err;
		int r;

		capture_begin();
		r = profile_parse("bad.yaml", bad[i].yaml, strlen(bad[i].yaml), 0, &m);
		err = capture_end();
		if (r != -1 || !strstr(err, bad[i].error))
			fail_msg("case \"%s\": want error containing\n  %s\ngot (%d)\n  %s", bad[i].what,
				 bad[i].error, r, err);
	}
}

/* The run-time sections: a device's own block wins whole over the
 * defaults'; dynamic_metrics become moving ranges. */
static void telemetry_sections_and_overrides(void **state)
{
	static const char y[] =
		"system: {driver_version: \"550.163.01\"}\n"
		"device_defaults:\n"
		"  name: X\n"
		"  pci: {device_id: 0x233010DE}\n"
		"  clocks: {graphics_current: 345, graphics_max: 1980, memory_max: 2619}\n"
		"  power: {enforced_limit_mw: 700000, min_limit_mw: 200000, max_limit_mw: 700000, current_draw_mw: 95000}\n"
		"  thermal: {temperature_gpu_c: 34, shutdown_threshold_c: 92}\n"
		"  dynamic_metrics:\n"
		"    temperature: {base_c: 90, variance_c: 2, ramp_c: 10}\n"
		"    utilization: {pattern: busy, gpu_min: 10, gpu_max: 50}\n"
		"  performance_state: P8\n"
		"  processes: []\n"
		"devices:\n"
		"  - {index: 0, minor_number: 0, pci: {bus_id: \"0000:01:00.0\"},\n"
		"     processes: [{pid: 7, type: G, name: Xorg, used_memory_mib: 3}]}\n"
		"  - {index: 1, minor_number: 1, pci: {bus_id: \"0000:02:00.0\"}, clocks: {graphics_max: 1500}}\n";
	static struct nvm_model m;
	const struct nvm_telemetry *t0 = &m.gpus[0].tel, *t1 = &m.gpus[1].tel;

	(void)state;
	assert_int_equal(profile_parse("t.yaml", y, sizeof(y) - 1, 0, &m), 0);
	assert_true(t0->present);
	assert_int_equal(t0->clk_max[0], 1980);
	assert_int_equal(t0->clk_cur[0], 345);
	assert_int_equal(t1->clk_max[0], 1500); /* its own block, whole: */
	assert_int_equal(t1->clk_cur[0], 0);
	assert_int_equal(t0->power_limit, 700000);
	assert_true(t0->power.set && t0->power.lo == 95000 && t0->power.hi == 95000);
	/* 88..102, capped at the shutdown threshold */
	assert_true(t0->temp_gpu.lo == 88 && t0->temp_gpu.hi == 92);
	/* busy: the top quarter of 10..50 */
	assert_true(t0->util_gpu.lo == 40 && t0->util_gpu.hi == 50);
	assert_int_equal(t0->pstate, 8);
	assert_int_equal(t0->nprocs, 1);
	assert_int_equal(t0->procs[0].pid, 7);
	assert_int_equal(t0->procs[0].type, 'g');
	assert_string_equal(t0->procs[0].name, "Xorg");
	assert_int_equal(t0->memory_used, 3 << 20);
	assert_int_equal(t1->nprocs, 0);
}

/* Links to peers count on both GPUs; a peer the cut leaves out is dropped;
 * a switches list means NVSwitches. */
static void nvlink_peers_and_switches(void **state)
{
	static const char y[] = SYS DEF "devices:\n"
		"  - {index: 0, minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}}\n"
		"  - {index: 1, minor_number: 1, pci: {bus_id: \"0000:02:00.0\"}}\n"
		"  - {index: 2, minor_number: 2, pci: {bus_id: \"0000:03:00.0\"}}\n"
		"nvlink:\n  version: 3\n  links_per_gpu: 12\n  switches: [{id: sw0}]\n"
		"  peers:\n    - {gpus: [0, 1], links: 4}\n    - {gpus: [1, 2], links: 2}\n";
	static struct nvm_model m;

	(void)state;
	assert_int_equal(profile_parse("nv.yaml", y, sizeof(y) - 1, 0, &m), 0);
	assert_int_equal(m.nvlink.version, 3);
	assert_int_equal(m.nvlink.links, 12);
	assert_true(m.nvlink.switched);
	assert_int_equal(m.nvlink.peer[0][1], 4);
	assert_int_equal(m.nvlink.peer[1][0], 4);
	assert_int_equal(m.nvlink.peer[1][2], 2);
	assert_int_equal(m.nvlink.peer[2][1], 2);
	assert_int_equal(m.nvlink.peer[0][2], 0);
	assert_int_equal(profile_parse("nv.yaml", y, sizeof(y) - 1, 2, &m), 0);
	assert_int_equal(m.nvlink.peer[1][2], 0);
	assert_int_equal(m.nvlink.peer[0][1], 4);
}

/* The HCAs: one beside each GPU on its root complex, on the next free
 * bus; GUIDs and LIDs from the node name, distinct per HCA and per node. */
static void infiniband_hcas_beside_their_gpus(void **state)
{
	static const char y[] = SYS DEF "devices:\n"
		"  - {index: 0, minor_number: 0, pci: {bus_id: \"0000:18:00.0\"}}\n"
		"  - {index: 1, minor_number: 1, pci: {bus_id: \"0000:19:00.0\"}}\n"
		"pcie_topology: {root_complexes: [{id: pci0000:00, devices: [\"0000:18:00.0\"]},"
		" {id: pci0000:80, numa_node: 1, devices: [\"0000:19:00.0\"]}]}\n"
		"infiniband: {enabled: true, hca_type: MT4123, rate_gbps: 200, guid_prefix: \"a288c2:0300:ab\","
		" hcas_per_gpu: 2, port_state: init}\n";
	static struct nvm_model m, other;

	(void)state;
	setenv("NODE_NAME", "node-a", 1);
	assert_int_equal(profile_parse("ib.yaml", y, sizeof(y) - 1, 0, &m), 0);
	assert_int_equal(m.ib.nhcas, 4);
	assert_int_equal(m.ib.device_id, 4123);
	assert_int_equal(m.ib.port_state, 2);
	/* GPU 0 at bus 18: its HCAs take 1a and 1b (19 is GPU 1's). */
	assert_string_equal(m.ib.hcas[0].bus_id, "0000:1a:00.0");
	assert_string_equal(m.ib.hcas[1].bus_id, "0000:1b:00.0");
	assert_int_equal(m.ib.hcas[1].gpu, 0);
	assert_string_equal(m.ib.hcas[2].bus_id, "0000:1c:00.0");
	assert_int_equal(m.ib.hcas[3].gpu, 1);
	assert_string_equal(m.ib.hcas[3].node_desc, "node-a mlx5_3");
	assert_true(m.ib.hcas[0].guid >> 32 == 0xa288c203);
	assert_true(m.ib.hcas[1].guid == m.ib.hcas[0].guid + 1);
	assert_true(m.ib.hcas[1].lid == m.ib.hcas[0].lid + 1 && m.ib.hcas[0].lid >= 2 &&
		    m.ib.hcas[3].lid < 0xc000);
	setenv("NODE_NAME", "node-b", 1);
	assert_int_equal(profile_parse("ib.yaml", y, sizeof(y) - 1, 0, &other), 0);
	assert_true(other.ib.hcas[0].guid != m.ib.hcas[0].guid);
	unsetenv("NODE_NAME");
}

/* MIG by count: placed as the driver would (wide at the top, narrow at the
 * bottom), GPU instance ids from the placements, listed by id. */
static void mig_layout_by_count(void **state)
{
	static const char y[] = SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\n"
		"devices:\n  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled,"
		" gpu_instances: [{profile: 1g.5gb, count: 2}, {profile: 3g.20gb}, {profile_id: 14}]}}\n"
		"  - {minor_number: 1, pci: {bus_id: \"0000:02:00.0\"}}\n";
	static const unsigned ids[] = { 2, 3, 9, 10 }, starts[] = { 4, 0, 2, 3 };
	static const char *const names[] = { "3g.20gb", "2g.10gb", "1g.5gb", "1g.5gb" };
	static struct nvm_model m;

	(void)state;
	assert_int_equal(profile_parse("mig.yaml", y, sizeof(y) - 1, 0, &m), 0);
	assert_true(m.gpus[0].mig.enabled && m.gpus[0].mig.pending && m.gpus[0].mig.table);
	assert_int_equal(m.gpus[0].mig.ngi, 4);
	for (unsigned k = 0; k < 4; k++) {
		assert_int_equal(m.gpus[0].mig.gi[k].id, ids[k]);
		assert_int_equal(m.gpus[0].mig.gi[k].start, starts[k]);
		assert_string_equal(m.gpus[0].mig.gi[k].profile->name, names[k]);
	}
	assert_false(m.gpus[1].mig.enabled);
	assert_int_equal(m.gpus[1].mig.ngi, 0);
}

/* Compute instances: fixed placements first, then the widest at the
 * lowest free placement, ids the lowest free in that order. */
static void mig_compute_instances(void **state)
{
	static const char y[] = SYS "device_defaults: {name: \"NVIDIA A100-SXM4-40GB\", pci: {device_id: 0x20B010DE}}\n"
		"devices:\n  - {minor_number: 0, pci: {bus_id: \"0000:01:00.0\"}, mig: {mode_current: enabled,"
		" instances: [{profile: 7g.40gb, compute_instances: [{profile: 1c.7g.40gb, count: 2},"
		" {profile: 1c.7g.40gb, placement_start: 6}, {profile: 4c.7g.40gb}]}]}}\n";
	static const unsigned slices[] = { 4, 1, 1, 1 }, starts[] = { 0, 4, 5, 6 },
			      ids[] = { 1, 2, 3, 0 };
	static struct nvm_model m;
	const struct nvm_mig_gi *gi = &m.gpus[0].mig.gi[0];

	(void)state;
	assert_int_equal(profile_parse("ci.yaml", y, sizeof(y) - 1, 0, &m), 0);
	assert_int_equal(m.gpus[0].mig.ngi, 1);
	assert_int_equal(gi->nci, 4);
	/* listed by id: 0 is the fixed one (made first), 1 the 4c, 2-3 the 1c */
	for (unsigned k = 0; k < 4; k++) {
		unsigned want = 0;

		while (ids[want] != k)
			want++;
		assert_int_equal(gi->ci[k].id, k);
		assert_int_equal(gi->ci[k].slices, slices[want]);
		assert_int_equal(gi->ci[k].start, starts[want]);
	}
}

/* Boards by their name as nvidia-smi gives it: GH200 is not H200, GB200
 * not B200; the 144 GB GH200 and GB200 have no table. */
static void mig_board_tables(void **state)
{
	static const struct {
		const char *gpu, *first;
		unsigned mb, sms;
	} cases[] = {
		{ "NVIDIA H200", "1g.18gb", 16384, 16 },
		{ "NVIDIA H200 NVL", "1g.18gb", 16384, 16 },
		{ "NVIDIA H100 NVL", "1g.12gb", 11008, 16 },
		{ "NVIDIA H100 80GB HBM3", "1g.10gb", 9984, 16 },
		{ "NVIDIA GH200 480GB", "1g.12gb", 11264, 16 },
		{ "NVIDIA B200", "1g.23gb", 20992, 18 },
		{ "NVIDIA GB200", NULL, 0, 0 },
		{ "NVIDIA GH200 144G HBM3e", NULL, 0, 0 },
		{ "NVIDIA L40S", NULL, 0, 0 },
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct nvm_mig_profile *t = mig_board_table(cases[k].gpu);

		if (!cases[k].first) {
			assert_null(t);
			continue;
		}
		assert_non_null(t);
		assert_string_equal(t[0].name, cases[k].first);
		assert_int_equal(t[0].memory_mb, cases[k].mb);
		assert_int_equal(t[0].sms, cases[k].sms);
		while (t[1].name) /* the whole GPU last, profile id 0, 7 slices */
			t++;
		assert_int_equal(t->id, 0);
		assert_int_equal(t->slices, 7);
	}
}

static void more_than_64_gpus_is_refused(void **state)
{
	static struct nvm_model m;
	char *y = malloc(65536), *p = y;
	const char *err;

	(void)state;
	p += sprintf(p, SYS DEF "devices:\n");
	for (int i = 0; i < 65; i++)
		p += sprintf(p, "  - {minor_number: %d, pci: {bus_id: \"0000:%02x:00.0\"}}\n", i, i + 1);
	capture_begin();
	assert_int_equal(profile_parse("big.yaml", y, strlen(y), 0, &m), -1);
	err = capture_end();
	assert_non_null(strstr(err, "65 devices; at most 64"));
	free(y);
}

static void files_over_1_mib_are_refused(void **state)
{
	static struct nvm_model m;
	size_t n = (1 << 20) + 1;
	char *y = malloc(n + 1);
	const char *err;

	(void)state;
	memset(y, '#', n);
	y[n] = '\0';
	capture_begin();
	assert_int_equal(profile_parse("huge.yaml", y, n, 0, &m), -1);
	err = capture_end();
	assert_non_null(strstr(err, "over the 1 MiB profile limit"));
	free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_shipped_profile_loads),
		cmocka_unit_test(gb300_has_the_values_slurm_needs),
		cmocka_unit_test(reads_mokka_shapes_and_ignores_unknown_keys),
		cmocka_unit_test(num_devices_and_gpus_cut_the_list),
		cmocka_unit_test(each_bad_input_names_file_line_and_key),
		cmocka_unit_test(infiniband_hcas_beside_their_gpus),
		cmocka_unit_test(mig_layout_by_count),
		cmocka_unit_test(mig_compute_instances),
		cmocka_unit_test(mig_board_tables),
		cmocka_unit_test(nvlink_peers_and_switches),
		cmocka_unit_test(telemetry_sections_and_overrides),
		cmocka_unit_test(more_than_64_gpus_is_refused),
		cmocka_unit_test(files_over_1_mib_are_refused),
	};

	return cmocka_run_group_tests_name("profile", tests, NULL, NULL);
}
