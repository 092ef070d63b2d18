# MIG: profiles/a100-mig.yaml (GPU 0 as 3g.20gb + 2g.10gb + 1g.5gb x2) in a
# target: the driver files, the nvidia-caps nodes, NVML's MIG calls (ctypes,
# against the profile's layout), nvmirage's nvidia-smi -L against NVIDIA's
# ($smi_bin, when fetched), and nothing outside. Sourced by run.sh.

echo "== MIG (a100-mig: GPU 0 split, the other 7 whole)"
inmig() { timeout 60 "$nvm" -q exec --profile a100-mig --device-nodes --root /run/nvn -- "$@" 2>&1; }
r=$(inmig sh -c 'wc -l < /proc/driver/nvidia-caps/mig-minors; sed -n "1,3p;4322p" /proc/driver/nvidia-caps/mig-minors')
check_eq "mig-minors: every GPU, GPU and compute instance the driver names (4322 lines)" \
	"$(printf '4322\nconfig 1\nmonitor 2\ngpu0/gi0/access 3\ngpu31/gi14/ci7/access 4322')" "$r"
r=$(inmig sh -c 'cd /proc/driver/nvidia/capabilities/gpu0/mig && ls -d gi*; cat gi2/access gi2/ci0/access; cat ../../mig/config')
check_eq "capabilities: the 4 GPU instances (ids 2, 3, 9, 10), each with its minors" "$(printf '%s\n' gi10 gi2 gi3 gi9 \
	'DeviceFileMinor: 21' 'DeviceFileMode: 292' 'DeviceFileModify: 1' \
	'DeviceFileMinor: 22' 'DeviceFileMode: 292' 'DeviceFileModify: 1' \
	'DeviceFileMinor: 1' 'DeviceFileMode: 256' 'DeviceFileModify: 1')" "$r"
r=$(inmig sh -c 'ls /dev/nvidia-caps | sort -V | tr "\n" " "')
check_eq "nvidia-caps nodes: config, monitor, and each instance's two" \
	"nvidia-cap1 nvidia-cap2 nvidia-cap21 nvidia-cap22 nvidia-cap30 nvidia-cap31 nvidia-cap84 nvidia-cap85 nvidia-cap93 nvidia-cap94 " "$r"
mig_py='import ctypes
l = ctypes.CDLL("libnvidia-ml.so.1"); l.nvmlInit_v2()
d = ctypes.c_void_p(); l.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(d))
d1 = ctypes.c_void_p(); l.nvmlDeviceGetHandleByIndex_v2(1, ctypes.byref(d1))
c, p, n = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
l.nvmlDeviceGetMigMode(d, ctypes.byref(c), ctypes.byref(p)); print("mode", c.value, p.value)
l.nvmlDeviceGetMigMode(d1, ctypes.byref(c), ctypes.byref(p)); print("gpu1 mode", c.value, p.value)
l.nvmlDeviceGetMaxMigDeviceCount(d, ctypes.byref(n)); print("max", n.value)
class A(ctypes.Structure):
    _fields_ = [(f, ctypes.c_uint) for f in ("sm", "ce", "dec", "enc", "jpg", "ofa", "gis", "cis")] + [("mb", ctypes.c_ulonglong)]
for i in range(5):
    m = ctypes.c_void_p(); r = l.nvmlDeviceGetMigDeviceHandleByIndex(d, i, ctypes.byref(m))
    if r: print("index", i, "ret", r); break
    gi, ci, ism = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint(); a = A(); par = ctypes.c_void_p()
    name = ctypes.create_string_buffer(96)
    l.nvmlDeviceGetGpuInstanceId(m, ctypes.byref(gi)); l.nvmlDeviceGetComputeInstanceId(m, ctypes.byref(ci))
    l.nvmlDeviceIsMigDeviceHandle(m, ctypes.byref(ism)); l.nvmlDeviceGetAttributes_v2(m, ctypes.byref(a))
    l.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(m, ctypes.byref(par)); l.nvmlDeviceGetName(m, name, 96)
    print(i, gi.value, ci.value, ism.value, a.gis, a.cis, a.mb, par.value == d.value, name.value.decode())'
r=$(inmig env LD_LIBRARY_PATH="$(dirname "$lib")" /usr/bin/python3 -c "$mig_py")
check_eq "NVML: MIG on for GPU 0 (1 1), off for GPU 1, 7 devices at most" \
	"$(printf 'mode 1 1\ngpu1 mode 0 0\nmax 7')" "$(echo "$r" | head -n 3)"
check_eq "the 4 MIG devices: GI id, CI id, MIG handle, slices, memory, parent, name; then NOT_FOUND (6)" "$(printf '%s\n' \
	"0 2 0 1 3 3 20096 True NVIDIA A100-SXM4-40GB MIG 3g.20gb" \
	"1 3 0 1 2 2 9984 True NVIDIA A100-SXM4-40GB MIG 2g.10gb" \
	"2 9 0 1 1 1 4864 True NVIDIA A100-SXM4-40GB MIG 1g.5gb" \
	"3 10 0 1 1 1 4864 True NVIDIA A100-SXM4-40GB MIG 1g.5gb" "index 4 ret 6")" "$(echo "$r" | sed -n 4,8p)"
r=$(inmig "$nvm" smi -L)
check_eq "smi -L: the 4 MIG devices under GPU 0, 12 lines in all" "12 4" \
	"$(echo "$r" | wc -l) $(echo "$r" | grep -c '^  MIG [0-9]g\.[0-9]*gb  *Device  [0-3]: (UUID: MIG-')"
if [ -n "${smi_bin:-}" ] && [ -x "$smi_bin" ]; then
	theirs=$(timeout 60 "$nvm" -q exec --profile a100-mig --root /run/nvn -- \
		env LD_LIBRARY_PATH="$(dirname "$lib")" "$smi_bin" -L 2>&1)
	check_eq "and byte for byte what NVIDIA's nvidia-smi -L prints on the same NVML" "$theirs" "$r"
	smig() { timeout 60 "$nvm" -q exec --profile a100-mig --root /run/nvn -- \
		env LD_LIBRARY_PATH="$(dirname "$lib")" "$smi_bin" mig "$@" 2>&1; }
	r=$(smig -lgipp)
	check_eq "nvidia-smi mig -lgipp: the A100 40GB's 5 profiles and their placements" "$(printf '%s\n' \
		"GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1" "GPU  0 Profile ID 14 Placements: {0,2,4}:2" \
		"GPU  0 Profile ID  9 Placements: {0,4}:4" "GPU  0 Profile ID  5 Placement : {0}:4" \
		"GPU  0 Profile ID  0 Placement : {0}:8")" "$r"
	r=$(smig -lgip)
	check_has "mig -lgip: 1g.5gb, none free (all 7 slices in use), 4.75 GiB, 14 SMs" \
		"|   0  MIG 1g.5gb        19     0/7        4.75       No     14     0     0   |" "$r"
	check_has "7g.40gb: 98 SMs, 5 decoders, 7 copy engines, a JPEG and an OFA" "$(printf '%s\n' \
		"|   0  MIG 7g.40gb        0     0/1        39.38      No     98     5     0   |" \
		"|                                                             7     1     1   |")" "$r"
	r=$(smig -lgi | grep MIG | tr -s ' ')
	check_eq "mig -lgi: the 4 GPU instances, profile, id and placement" "$(printf '%s\n' \
		"| 0 MIG 1g.5gb 19 9 2:1 |" "| 0 MIG 1g.5gb 19 10 3:1 |" "| 0 MIG 2g.10gb 14 3 0:2 |" \
		"| 0 MIG 3g.20gb 9 2 4:4 |")" "$r"
	r=$(smig -lcip | grep MIG | tr -s ' ')
	check_eq "mig -lcip: each GPU instance's compute instance profiles (* the default, spanning it)" "$(printf '%s\n' \
		"| 0 9 MIG 1g.5gb 0* 0/1 14 0 0 0 |" "| 0 10 MIG 1g.5gb 0* 0/1 14 0 0 0 |" \
		"| 0 3 MIG 1c.2g.10gb 0 0/2 14 1 0 0 |" "| 0 3 MIG 2g.10gb 1* 0/1 28 1 0 0 |" \
		"| 0 2 MIG 1c.3g.20gb 0 0/3 14 2 0 0 |" "| 0 2 MIG 2c.3g.20gb 1 0/1 28 2 0 0 |" \
		"| 0 2 MIG 3g.20gb 2* 0/1 42 2 0 0 |")" "$r"
	r=$(smig -lci | grep MIG | tr -s ' ')
	check_eq "mig -lci: the one compute instance of each, spanning it" "$(printf '%s\n' \
		"| 0 9 MIG 1g.5gb 0 0 0:1 |" "| 0 10 MIG 1g.5gb 0 0 0:1 |" "| 0 3 MIG 2g.10gb 1 0 0:2 |" \
		"| 0 2 MIG 3g.20gb 2 0 0:3 |")" "$r"
	r=$(smig -cgi 19); rc=$?
	check_eq "mig -cgi in a target: status 4 (nvmirage mig changes layouts)" 4 $rc
	check_has "as nvidia-smi words NVML's NO_PERMISSION" "Failed to create GPU instances: Insufficient Permissions" "$r"
fi
r=$(timeout 30 "$in_cgroup" "$O" sh -c 'ls /proc/driver/nvidia-caps /proc/driver/nvidia/capabilities' 2>&1)
check_has "outside: no mig-minors" "cannot access '/proc/driver/nvidia-caps'" "$r"
r=$(timeout 60 "$nvm" -q exec --profile a100 --root /run/nvn -- sh -c 'ls /proc/driver/nvidia-caps /proc/driver/nvidia/capabilities' 2>&1)
check_has "a100 (MIG off): no MIG files at all, as before" "cannot access '/proc/driver/nvidia-caps'" "$r"

echo "== MIG compute instances (GPU 0's 3g.20gb holding two 1c.3g.20gb)"
ci_profile=$(mktemp /tmp/nvm-ci-XXXXXX.yaml)
sed 's|        - {profile: "3g.20gb", count: 1}|        - {profile: "3g.20gb", count: 1, compute_instances: [{profile: "1c.3g.20gb", count: 2}]}|' \
	profiles/a100-mig.yaml > "$ci_profile"
check_eq "the profile asks for them" 1 "$(grep -c 'compute_instances' "$ci_profile")"
inci() { timeout 60 "$nvm" -q exec --profile "$ci_profile" --device-nodes --root /run/nvn -- "$@" 2>&1; }
r=$(inci sh -c 'cd /proc/driver/nvidia/capabilities/gpu0/mig/gi2 && ls -d ci*; cat ci1/access; ls /dev/nvidia-caps | sort -V | tr "\n" " "')
check_eq "gi2 has ci0 and ci1, each with its minor; their nodes beside the others'" "$(printf '%s\n' ci0 ci1 \
	'DeviceFileMinor: 23' 'DeviceFileMode: 292' 'DeviceFileModify: 1' \
	'nvidia-cap1 nvidia-cap2 nvidia-cap21 nvidia-cap22 nvidia-cap23 nvidia-cap30 nvidia-cap31 nvidia-cap84 nvidia-cap85 nvidia-cap93 nvidia-cap94 ')" "$r"
r=$(inci env LD_LIBRARY_PATH="$(dirname "$lib")" /usr/bin/python3 -c "$mig_py")
check_eq "NVML: 5 MIG devices, the two of gi2 (ci 0-1, 1 of 3 slices, 20096 MiB shared) first" "$(printf '%s\n' \
	"0 2 0 1 3 1 20096 True NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb" \
	"1 2 1 1 3 1 20096 True NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb" \
	"2 3 0 1 2 2 9984 True NVIDIA A100-SXM4-40GB MIG 2g.10gb" \
	"3 9 0 1 1 1 4864 True NVIDIA A100-SXM4-40GB MIG 1g.5gb" \
	"4 10 0 1 1 1 4864 True NVIDIA A100-SXM4-40GB MIG 1g.5gb")" "$(echo "$r" | sed -n 4,8p)"
r=$(inci "$nvm" smi -L)
check_eq "smi -L: 5 MIG devices under GPU 0, 2 of them 1c.3g.20gb" "5 2" \
	"$(echo "$r" | grep -c '^  MIG ') $(echo "$r" | grep -c '^  MIG 1c\.3g\.20gb  *Device  [0-1]: (UUID: MIG-')"
check_eq "each with its own UUID" 5 "$(echo "$r" | grep '^  MIG ' | sed 's/.*UUID: //' | sort -u | wc -l)"
if [ -n "${smi_bin:-}" ] && [ -x "$smi_bin" ]; then
	theirs=$(timeout 60 "$nvm" -q exec --profile "$ci_profile" --root /run/nvn -- \
		env LD_LIBRARY_PATH="$(dirname "$lib")" "$smi_bin" -L 2>&1)
	check_eq "and byte for byte what NVIDIA's nvidia-smi -L prints" "$theirs" "$r"
	cmig() { timeout 60 "$nvm" -q exec --profile "$ci_profile" --root /run/nvn -- \
		env LD_LIBRARY_PATH="$(dirname "$lib")" "$smi_bin" mig "$@" 2>&1; }
	r=$(cmig -lci -gi 2 | grep MIG | tr -s ' ')
	check_eq "nvidia-smi mig -lci: gi2's two, at slices 0 and 1" "$(printf '%s\n' \
		"| 0 2 MIG 1c.3g.20gb 0 0 0:1 |" "| 0 2 MIG 1c.3g.20gb 0 1 1:1 |")" "$r"
	r=$(cmig -lcip -gi 2 | grep MIG | tr -s ' ')
	check_eq "mig -lcip: room left in gi2 for one more 1c, none for a 2c or the whole" "$(printf '%s\n' \
		"| 0 2 MIG 1c.3g.20gb 0 1/3 14 2 0 0 |" "| 0 2 MIG 2c.3g.20gb 1 0/1 28 2 0 0 |" \
		"| 0 2 MIG 3g.20gb 2* 0/1 42 2 0 0 |")" "$r"
fi
rm -f "$ci_profile"
