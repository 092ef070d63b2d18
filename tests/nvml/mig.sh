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
fi
r=$(timeout 30 "$in_cgroup" "$O" sh -c 'ls /proc/driver/nvidia-caps /proc/driver/nvidia/capabilities' 2>&1)
check_has "outside: no mig-minors" "cannot access '/proc/driver/nvidia-caps'" "$r"
r=$(timeout 60 "$nvm" -q exec --profile a100 --root /run/nvn -- sh -c 'ls /proc/driver/nvidia-caps /proc/driver/nvidia/capabilities' 2>&1)
check_has "a100 (MIG off): no MIG files at all, as before" "cannot access '/proc/driver/nvidia-caps'" "$r"
