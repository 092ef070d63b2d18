#!/bin/sh
# The mock NVML: exported names, every function against gb300 and h100 in a
# target cgroup, DRIVER_NOT_LOADED outside, and `nvmirage smi` byte for byte.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
setup_suite n "$out"
lib=$(pwd)/$out/libnvidia-ml.so.1
check_nvml=$(pwd)/$out/helpers/check_nvml
devdeny=$(pwd)/$out/helpers/devdeny
ROOT=/run/nvn
on_exit 'stop_agent; remove_cgroups "$T"/j* "$T" "$O"'

echo "== exported symbols"
check_eq "soname is libnvidia-ml.so.1" "libnvidia-ml.so.1" \
	"$(objdump -p "$lib" | sed -n 's/^ *SONAME *//p')"
nm -D --defined-only "$lib" | awk '{print $3}' | sort > "$LOGS/exported"
exported=$(cat "$LOGS/exported")
missing=$(grep -v '^#' tests/nvml/symbols.txt | sort | comm -23 - "$LOGS/exported")
check_eq "every name in tests/nvml/symbols.txt is exported" "" "$missing"
check_eq "only nvml* names are exported" "" "$(printf '%s\n' "$exported" | grep -v '^nvml')"

# bridged.yaml: NVLinks between GPUs (the shipped profiles' go to NVSwitches);
# sixteen.yaml: 16 GPUs, as HGX-class nodes with 16 partitions have.
/usr/bin/python3 tests/nvml/sixteen.py profiles/h100.yaml "$LOGS/sixteen.yaml"
for p in profiles/gb300.yaml profiles/h100.yaml tests/nvml/bridged.yaml "$LOGS/sixteen.yaml"; do
	echo "== $p: every function against the profile, in a target cgroup"
	r=$(timeout 60 "$nvm" -q exec --profile $p --root /run/nvn -- "$check_nvml" "$lib" $p)
	echo "$r" | grep FAIL
	n=$(echo "$r" | sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p')
	check "$p: all $n NVML checks pass" test -n "$n" -a "${n:-0}" -gt 100
done
echo "== against NVIDIA's nvml.h (libnvidia-ml-dev from Debian's non-free, a private apt configuration)"
. tests/lib/apt.sh
cache=$(pwd)/$out/cache
conf=$(private_apt "$cache" trixie "$(dpkg --print-architecture)" "main contrib non-free")
if check "apt-get download libnvidia-ml-dev" fetch_debs "$conf" "$cache/debs" libnvidia-ml-dev; then
	rm -rf "$cache/nvidia-ml-dev" "$LOGS/header"
	mkdir -p "$LOGS/header"
	dpkg-deb -x "$cache"/debs/libnvidia-ml-dev_*.deb "$cache/nvidia-ml-dev"
	/usr/bin/python3 tests/nvml/against_nvidia.py nvml/nvml.h "$cache/nvidia-ml-dev/usr/include/nvml.h" \
		"$lib" "$LOGS/header" > "$LOGS/header.out" 2>&1
	while IFS= read -r line; do
		case $line in
		"ok: "*) ok "${line#ok: }" ;;
		"FAIL: "*) not_ok "${line#FAIL: }" ;;
		*) not_ok "against_nvidia.py: $line" ;;
		esac
	done < "$LOGS/header.out"
fi

echo "== the profile's run-time sections, through the clients people watch GPUs with"
# Debian trixie's python3-pynvml (NVIDIA's bindings), gpustat and nvitop,
# fetched (not installed) through the same private apt configuration; they
# are pure Python and run on this machine's python3 (psutil and blessed
# from deps.sh).
py() {
	prof=$1; shift
	timeout 60 "$nvm" -q exec --profile "$prof" --root "${pyroot:-/run/nvn}" -- env LD_LIBRARY_PATH="$(dirname "$lib")" \
		PYTHONPATH="$cache/clients/usr/lib/python3/dist-packages" /usr/bin/python3 "$@" 2>&1
}
if check "apt-get download python3-pynvml gpustat nvitop" \
	fetch_debs "$conf" "$cache/debs" python3-pynvml gpustat nvitop; then
	rm -rf "$cache/clients"
	for d in python3-pynvml gpustat nvitop; do dpkg-deb -x "$cache"/debs/${d}_*.deb "$cache/clients"; done
	for p in gb300 h100 t4; do
		r=$(py profiles/$p.yaml tests/nvml/pynvml_calls.py calls)
		echo "$r" | grep FAIL
		check_has "$p: every call nvitop and gpustat make answers (pynvml)" "calls on" "$r"
		check_lacks "$p: and none fails" "FAIL" "$r"
	done
	check_has "h100: 700 W cap, no fan (N/A, as a real SXM GPU)" "W/700W" "$(py profiles/h100.yaml tests/nvml/pynvml_calls.py calls)"
	r=$(py profiles/gb300.yaml "$cache/clients/usr/bin/gpustat" --no-color)
	echo "$r"
	check_eq "gpustat: a line per GPU with a temperature" 4 "$(echo "$r" | grep -c '°C')"
	check_lacks "gpustat: no ??" "??" "$r"
	r=$(py profiles/gb300.yaml "$cache/clients/usr/bin/nvitop" -1)
	echo "$r" | head -n 12
	check_has "nvitop -1: power draw and cap" "W / 1400W" "$r"
	check_lacks "nvitop -1: no traceback" "Traceback" "$r"
	check_lacks "nvitop -1: no NVML error" "ERROR" "$r"
	# Two processes reading at the same second see the same values (each
	# in a target of its own agent, on one profile).
	pyroot=/run/nvo py profiles/gb300.yaml tests/nvml/pynvml_calls.py sample 4 > "$LOGS/sample1" &
	s1=$!
	py profiles/gb300.yaml tests/nvml/pynvml_calls.py sample 4 > "$LOGS/sample2"
	wait $s1
	same=$(join "$LOGS/sample1" "$LOGS/sample2" | awk '$2==$6 && $3==$7 && $4==$8 {n++} END {print n+0}')
	both=$(join "$LOGS/sample1" "$LOGS/sample2" | wc -l)
	check "two processes at the same seconds ($both in common) read the same values" \
		test "$both" -gt 0 -a "$same" = "$both"
	check_eq "energy only grows" "$(awk '{print $5}' "$LOGS/sample1" | sort -n | tr '\n' ' ')" \
		"$(awk '{print $5}' "$LOGS/sample1" | tr '\n' ' ')"
	check "and grows" test "$(awk 'NR==1{a=$5} END{print ($5>a)}' "$LOGS/sample1")" = 1
	# Mokka's processes section, on GPU 0 only (a device's own entry wins).
	sed '/minor_number: 0$/a\    processes: [{pid: 4242, type: C, name: "python3 train.py", used_memory_mib: 20480}]' \
		profiles/h100.yaml > "$LOGS/procs.yaml"
	r=$(py "$LOGS/procs.yaml" tests/nvml/pynvml_calls.py procs)
	check_has "the profile's process on GPU 0, with its name and memory" \
		"gpu 0: 4242 python3 train.py 20480; used 20992 MiB" "$r"
	check_has "none on GPU 1" "gpu 1: none; used 512 MiB" "$r"
fi

echo "== NVIDIA's nvidia-smi (Debian trixie non-free 550.163.01, fetched, not installed) on nvmirage's NVML"
if check "apt-get download nvidia-smi" fetch_debs "$conf" "$cache/debs" nvidia-smi; then
	rm -rf "$cache/nvidia-smi"
	dpkg-deb -x "$cache"/debs/nvidia-smi_*.deb "$cache/nvidia-smi"
	smi_bin=$cache/nvidia-smi/usr/lib/nvidia/current/nvidia-smi
	nsmi() {
		prof=$1; shift
		timeout 60 "$nvm" -q exec --profile "$prof" --root /run/nvn -- \
			env LD_LIBRARY_PATH="$(dirname "$lib")" "$smi_bin" "$@" 2>&1
	}
	r=$(nsmi gb300 -L)
	check_eq "nvidia-smi -L: what nvmirage smi -L prints, byte for byte" "$(cat tests/nvml/gb300-L.txt)" "$r"
	# Given to the agent (--nvidia-smi), it is the one a target's shell
	# finds, and it finds NVML where it looks (no LD_LIBRARY_PATH).
	r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn --nvidia-smi "$smi_bin" -- \
		sh -c 'env -u LD_LIBRARY_PATH nvidia-smi -L; env -u LD_LIBRARY_PATH nvidia-smi | head -n 3' 2>&1)
	check_eq "--nvidia-smi: NVIDIA's, run as nvidia-smi in a target, lists the 4 GPUs" \
		"$(cat tests/nvml/gb300-L.txt)" "$(echo "$r" | grep '^GPU ')"
	check_has "and draws its table" "NVIDIA-SMI 550.163.01" "$r"
	r=$(nsmi gb300 --query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version --format=csv)
	check_eq "nvidia-smi --query-gpu: the same as nvmirage smi" "$(cat tests/nvml/gb300-query.csv)" "$r"
	r=$(nsmi gb300); rc=$?
	echo "$r" | head -n 12
	check_eq "nvidia-smi (its table) exits 0" 0 $rc
	check_has "with its own version and the profile's driver (570, another major)" \
		"NVIDIA-SMI 550.163.01             Driver Version: 570.124.06     CUDA Version: 12.8" "$r"
	check_eq "a row per GPU" 4 "$(echo "$r" | grep -c 'NVIDIA GB300 NVL')"
	check_has "power draw against the 1400 W cap" "W / 1400W" "$r"
	check_has "the processes box" "No running processes found" "$r"
	r=$(nsmi h100 --query-gpu=temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.mem,utilization.gpu,pstate,pcie.link.gen.current --format=csv,noheader)
	echo "$r" | head -n 2
	check_eq "--query-gpu of run-time fields: a line per GPU" 8 "$(echo "$r" | grep -c ', 700.00 W, 345 MHz, 2619 MHz, .* %, P0, 5$')"
	r=$(nsmi h100 -q); rc=$?
	check_eq "nvidia-smi -q exits 0" 0 $rc
	check_eq "a section per GPU" 8 "$(echo "$r" | grep -c 'Product Name  *: NVIDIA H100 80GB HBM3')"
	check_has "with the profile's clocks" "$(printf '    Max Clocks\n        Graphics                          : 1980 MHz\n        SM                                : 1980 MHz\n        Memory                            : 2619 MHz')" "$r"
	check_eq "no line of it says Function Not Found (every function it looks up is there)" 0 \
		"$(echo "$r" | grep -c 'Function Not Found')"
	check_has "power readings from the profile (GPU scope; module scope N/A, as an H200's)" \
		"$(printf '        Current Power Limit               : 700.00 W\n        Requested Power Limit             : 700.00 W\n        Default Power Limit               : 700.00 W\n        Min Power Limit                   : 200.00 W\n        Max Power Limit                   : 700.00 W')" "$r"
	check_has "T.Limit thresholds from the profile's (92, 87 and 85 C)" \
		"$(printf '        GPU Shutdown T.Limit Temp         : -7 C\n        GPU Slowdown T.Limit Temp         : -2 C\n        GPU Max Operating T.Limit Temp    : 0 C')" "$r"
	check_eq "ECC errors by location: 15 counters, all 0 (SRAM and DRAM), on each GPU" 120 \
		"$(echo "$r" | grep -c '^            \(SRAM\|DRAM\) [A-Za-z0-9 -]* *: 0$')"
	check_eq "N/A lines per GPU (a real H200 under 580 prints 54 of its own set)" 40 \
		"$(echo "$r" | sed -n '/^GPU 00000000:18:00.0/,/^GPU 00000000:2A/p' | grep -c 'N/A')"
	nsmi gb300 -q -x > "$LOGS/qx.xml"
	check_eq "nvidia-smi -q -x is valid XML, a gpu element per GPU" 4 \
		"$(/usr/bin/python3 -c 'import sys, xml.etree.ElementTree as E; print(len(E.parse(sys.argv[1]).findall("gpu")))' "$LOGS/qx.xml" 2>&1)"
	r=$(nsmi gb300 topo -m); rc=$?
	check_eq "nvidia-smi topo -m exits 0" 0 $rc
	check_has "and draws the matrix" "GPU0	 X" "$r"
	check_has "with the profile's HCAs as NICs (it walks /sys/class/infiniband)" \
		"$(printf 'NIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n  NIC2: mlx5_2\n  NIC3: mlx5_3')" "$r"
	echo "$r" | sed 's/[^\t]*\t/C\t/g' > "$LOGS/topo-theirs"
	timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi topo -m | \
		sed 's/[^\t]*\t/C\t/g' > "$LOGS/topo-ours"
	check_eq "nvmirage's topo -m has its rows, columns and legends" "$(cat "$LOGS/topo-theirs")" \
		"$(cat "$LOGS/topo-ours")"
	# Every display type of -q -d (its --help lists them): each exits 0
	# and prints a section per GPU.
	bad=
	for d in MEMORY UTILIZATION ECC TEMPERATURE POWER CLOCK COMPUTE PIDS PERFORMANCE \
		SUPPORTED_CLOCKS PAGE_RETIREMENT ACCOUNTING ENCODER_STATS SUPPORTED_GPU_TARGET_TEMP \
		VOLTAGE FBC_STATS ROW_REMAPPER RESET_STATUS GSP_FIRMWARE_VERSION; do
		r=$(nsmi h100 -q -d $d); rc=$?
		n=$(echo "$r" | grep -c '^GPU 00000000:')
		[ $rc = 0 ] && [ "$n" = 8 ] || bad="$bad $d(rc=$rc,gpus=$n)"
	done
	check_eq "nvidia-smi -q -d: each of 19 display types exits 0 with 8 GPUs" "" "$bad"
	r=$(nsmi "$LOGS/procs.yaml" --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv,noheader); rc=$?
	check_eq "--query-compute-apps exits 0" 0 $rc
	check_eq "and lists the profile's one process" \
		"00000000:18:00.0, 4242, python3 train.py, 20480 MiB" "$r"
	r=$(nsmi "$LOGS/procs.yaml")
	check_has "the processes box shows it" "4242      C   python3 train.py" "$r"
	r=$(nsmi gb300 nvlink -s); rc=$?
	check_eq "nvidia-smi nvlink -s exits 0" 0 $rc
	check_eq "and shows the profile's 18 NVLink 5 links of each of the 4 GPUs" "4 72" \
		"$(echo "$r" | grep -c '^GPU [0-3]: NVIDIA GB300 NVL') $(echo "$r" | grep -c 'Link [0-9]*: 53.125 GB/s$')"
	r=$(nsmi tests/nvml/bridged.yaml nvlink -s)
	check_eq "bridged: GPU 0's 6 links up at NVLink 4 speed, the other 12 inactive" "6 12" \
		"$(echo "$r" | sed -n '/^GPU 0:/,/^GPU 1:/p' | grep -c '26.562 GB/s') $(echo "$r" | sed -n '/^GPU 0:/,/^GPU 1:/p' | grep -c '<inactive>')"
fi

if [ -n "${smi_bin:-}" ] && [ -x "$smi_bin" ]; then
	. tests/nvml/smi_forms.sh
fi
. tests/nvml/mig.sh

echo "== 16 GPUs"
r=$(timeout 60 "$nvm" -q exec --profile "$LOGS/sixteen.yaml" --root /run/nvn -- \
	sh -c 'ls /proc/driver/nvidia/gpus | wc -l; nvidia-smi -L | grep -c "^GPU "' 2>&1)
check_eq "16 GPUs in /proc/driver/nvidia/gpus, and nvmirage's nvidia-smi -L lists 16" "$(printf '16\n16')" "$r"
if [ -n "${smi_bin:-}" ] && [ -x "$smi_bin" ]; then
	r=$(timeout 60 "$nvm" -q exec --profile "$LOGS/sixteen.yaml" --root /run/nvn -- \
		env LD_LIBRARY_PATH="$(dirname "$lib")" "$smi_bin" -L 2>&1)
	check_eq "NVIDIA's nvidia-smi -L lists the 16" 16 "$(echo "$r" | grep -c '^GPU ')"
	check_has "the last with its UUID" "GPU 15: NVIDIA H100 80GB HBM3 (UUID: GPU-344e1aa0-d0ea-ba06-729f-5261a1d94f07)" "$r"
fi
. tests/nvml/nvtop.sh

echo "== bad run-time sections"
sed 's/    graphics_max: 1980/    graphics_mhz: 1980/' profiles/h100.yaml > "$LOGS/bad1.yaml"
r=$("$nvm" render --profile "$LOGS/bad1.yaml" --root /run/nvn 2>&1); rc=$?
check_eq "an unknown key: status 2" 2 $rc
check_has "with file, line and key" "bad1.yaml:$(grep -n graphics_mhz "$LOGS/bad1.yaml" | cut -d: -f1):5: device_defaults.clocks: unknown key \"graphics_mhz\"" "$r"
check "and nothing rendered" test ! -e /run/nvn
sed 's/  performance_state: P0/  performance_state: P99/' profiles/h100.yaml > "$LOGS/bad2.yaml"
r=$("$nvm" render --profile "$LOGS/bad2.yaml" --root /run/nvn 2>&1); rc=$?
check_eq "a performance state that does not exist: status 2" 2 $rc
check_has "and says what is allowed" 'device_defaults.performance_state: "P99": expected P0 to P15' "$r"
sed 's/single_bit_retirement: {count: 0, addresses: \[\]}/single_bit_retirement: {count: 2, addresses: [0x1f000]}/' \
	profiles/t4.yaml > "$LOGS/bad3.yaml"
r=$("$nvm" render --profile "$LOGS/bad3.yaml" --root /run/nvn 2>&1); rc=$?
check_eq "retired pages counted but not listed: status 2" 2 $rc
check_has "and says which" "device_defaults.retired_pages.single_bit_retirement: count 2, but 1 addresses listed" "$r"
sed 's/^  remapped_rows:$/  gpu_operation_mode: {current: turbo}\n&/' profiles/h100.yaml > "$LOGS/bad4.yaml"
r=$("$nvm" render --profile "$LOGS/bad4.yaml" --root /run/nvn 2>&1); rc=$?
check_eq "an operation mode that does not exist: status 2" 2 $rc
check_has "and says what is allowed" 'device_defaults.gpu_operation_mode.current: "turbo": expected all_on, compute, low_dp, N/A' "$r"

echo "== outside the targets"
r=$(timeout 30 "$in_cgroup" "$O" "$check_nvml" "$lib" --outside)
check_eq "nvmlInit gives DRIVER_NOT_LOADED outside" "3 passed, 0 failed" "$(echo "$r" | tail -1)"
r=$(timeout 30 "$in_cgroup" "$O" "$check_nvml" "$lib" profiles/gb300.yaml | tail -1)
check_lacks "the profile checks fail outside (the check can fail)" " 0 failed" "$r"

echo "== nvmirage smi"
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi -L)
check_eq "smi -L, byte for byte" "$(cat tests/nvml/gb300-L.txt)" "$r"
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi \
	--query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version --format=csv)
check_eq "smi --query-gpu --format=csv, byte for byte" "$(cat tests/nvml/gb300-query.csv)" "$r"
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi \
	--query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version --format=csv,noheader)
check_eq "smi csv,noheader" "$(tail -n +2 tests/nvml/gb300-query.csv)" "$r"
# topo -m: NVLinks between GPUs (bridged.yaml's pairs; an NVSwitch fabric
# joins all), else where they meet on PCIe (the profile's root complexes:
# PHB on one, SYS across NUMA nodes).
topo() { timeout 60 "$nvm" -q exec --profile "$1" --root /run/nvn -- "$nvm" smi topo -m | grep '^GPU' | cut -f 1-9; }
r=$(topo tests/nvml/bridged.yaml)
check_eq "topo -m, bridged: NV6, NV2 and NV18 where the profile's links are, PHB and SYS elsewhere" \
	"$(printf 'GPU0\t X \tNV6\tPHB\tPHB\tSYS\tSYS\tSYS\tSYS\nGPU1\tNV6\t X \tNV2\tPHB\tSYS\tSYS\tSYS\tSYS')" \
	"$(echo "$r" | head -n 2)"
check_eq "GPU 4 and 5 by their 18 links" "GPU4	SYS	SYS	SYS	SYS	 X 	NV18	PHB	PHB" "$(echo "$r" | sed -n 5p)"
r=$(topo l40s)
check_eq "l40s (no NVLink, 2 GPUs per root complex): PHB beside, SYS across" \
	"$(printf 'GPU0\t X \tPHB\tSYS\tSYS\nGPU1\tPHB\t X \tSYS\tSYS\nGPU2\tSYS\tSYS\t X \tPHB\nGPU3\tSYS\tSYS\tPHB\t X ')" \
	"$(echo "$r" | cut -f 1-5)"
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi topo -m)
check_eq "gb300: NV18 between every pair (the NVSwitch fabric)" 12 "$(echo "$r" | grep -o 'NV18' | wc -l)"
check_eq "NUMA affinity the root complex's node, no GPU NUMA id (x86 and Grace alike: not modelled)" \
	"0 N/A,0 N/A,1 N/A,1 N/A" "$(echo "$r" | awk -F '\t' '/^GPU[0-9]/ {print $(NF-2), $NF}' | paste -sd,)"
for form in "-x" "nvlink -s" "topo -p2p r" "-q -d MEMORY"; do
	r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi $form 2>&1); rc=$?
	check_eq "smi $form: refused with status 2" "2 1" "$rc $(echo "$r" | grep -c 'is not supported by nvmirage')"
done
r=$(timeout 30 "$in_cgroup" "$O" "$nvm" smi -L); rc=$?
check_eq "smi outside exits 9, as nvidia-smi does without a driver" 9 $rc
check_has "with nvidia-smi's message" "couldn't communicate with the NVIDIA driver" "$r"

# As on a real node (../reference: what NVML shows when a device cgroup
# denies the nodes): a job confined by the device cgroup still lists every
# GPU in /proc, and NVML shows only those whose /dev/nvidiaN it may open,
# numbered 0..n-1. The denials come from a cgroup v2 device program, the
# one Slurm's ConstrainDevices attaches.
echo "== under a device cgroup (agent with device nodes)"
check "agent starts with --device-nodes" start_agent "$LOGS/agent.log" --profile gb300 \
	--device-nodes --cgroup "$T" --root $ROOT
uvm=$(sed -n 's/.*nvidia-uvm-tools (\([0-9]*\)), nvidia-caps.*(\([0-9]*\): the first.*/\1/p' "$LOGS/agent.log")
caps=$(sed -n 's/.*nvidia-uvm-tools (\([0-9]*\)), nvidia-caps.*(\([0-9]*\): the first.*/\2/p' "$LOGS/agent.log")
check "the log names the majors of nvidia-uvm ($uvm) and nvidia-caps ($caps)" test -n "$uvm" -a -n "$caps"
check_eq "neither is a character major this machine uses" "" "$(awk -v u="$uvm" -v c="$caps" \
	'/^Character/ { on = 1 } /^Block/ { on = 0 } on && ($1 == u || $1 == c)' /proc/devices)"
r=$(timeout 20 "$in_cgroup" "$T" stat -c '%n %A %t:%T' /dev/nvidia-uvm /dev/nvidia-uvm-tools \
	/dev/nvidia-caps/nvidia-cap1 /dev/nvidia-caps/nvidia-cap2)
check_eq "uvm and caps nodes as on a real node (modes, numbers)" "$(printf '%s\n' \
	"/dev/nvidia-uvm crw-rw-rw- $(printf %x "$uvm"):0" \
	"/dev/nvidia-uvm-tools crw-rw-rw- $(printf %x "$uvm"):1" \
	"/dev/nvidia-caps/nvidia-cap1 cr-------- $(printf %x "$caps"):1" \
	"/dev/nvidia-caps/nvidia-cap2 cr--r--r-- $(printf %x "$caps"):2")" "$r"
r=$(timeout 20 "$in_cgroup" "$T" head -c 1 /dev/nvidia0 2>&1)
check_has "open /dev/nvidia0 in the target: no driver behind it (ENXIO)" "No such device or address" "$r"

# job NAME DEVICE...: a cgroup below the target whose device program denies
# DEVICE... (MAJOR:MINOR).
job() {
	name=$1; shift
	mkdir -p "$T/$name"
	check_eq "$name: device program attached (denies $*)" attached "$("$devdeny" "$T/$name" "$@" 2>&1)"
}
smi_in() { j=$1; shift; timeout 30 "$in_cgroup" "$T/$j" "$nvm" smi "$@" 2>&1; }
query=--query-gpu=index,uuid

job j0 195:0
r=$(smi_in j0 -L); rc=$?
check_eq "195:0 denied: smi -L shows the other 3, numbered 0..2" "$(tail -n +2 tests/nvml/gb300-L.txt | \
	awk '{sub(/^GPU [0-9]+/, "GPU " NR - 1); print}')" "$r"
check_eq "and exits 0" 0 $rc
check_eq "/proc still lists the 4 GPUs" 4 \
	"$(timeout 20 "$in_cgroup" "$T/j0" ls /proc/driver/nvidia/gpus | wc -l)"
r=$(timeout 20 "$in_cgroup" "$T/j0" head -c 1 /dev/nvidia0 2>&1)
check_has "open /dev/nvidia0: EPERM" "Operation not permitted" "$r"
r=$(timeout 20 "$in_cgroup" "$T/j0" head -c 1 /dev/nvidia1 2>&1)
check_has "open /dev/nvidia1: ENXIO, as before" "No such device or address" "$r"
r=$(timeout 60 "$in_cgroup" "$T/j0" "$check_nvml" "$lib" profiles/gb300.yaml 2>&1 | tail -1)
check_lacks "the full profile checks see a GPU missing (the checks can fail)" " 0 failed" "$r"

job j1 195:0 195:1
r=$(smi_in j1 "$query" --format=csv,noheader)
check_eq "195:0,1 denied: query lists GPUs 2 and 3 as 0 and 1" "$(printf '%s\n' \
	"0, GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f03" "1, GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f04")" "$r"

job jall 195:0 195:1 195:2 195:3
r=$(smi_in jall -L); rc=$?
check_eq "every GPU denied: smi -L says no devices" "No devices found." "$r"
check_eq "and exits 0, as nvidia-smi does" 0 $rc
r=$(smi_in jall "$query" --format=csv,noheader); rc=$?
check_eq "the query says no devices" "No devices were found" "$r"
check_eq "and exits 6" 6 $rc

job jctl 195:255
r=$(smi_in jctl -L); rc=$?
check_eq "nvidiactl denied: NVML cannot initialise" "Failed to initialize NVML: Unknown Error" "$r"
check_eq "and smi exits 255" 255 $rc

job juvm "$uvm:0" "$uvm:1"
r=$(smi_in juvm -L)
check_eq "nvidia-uvm denied: all 4 GPUs, as before" "$(cat tests/nvml/gb300-L.txt)" "$r"
r=$(timeout 20 "$in_cgroup" "$T/juvm" head -c 1 /dev/nvidia-uvm 2>&1)
check_has "open /dev/nvidia-uvm: EPERM" "Operation not permitted" "$r"
stop_agent

# MIG under a device cgroup: a job given one instance's two nvidia-caps
# nodes (and its GPU's node) sees that instance alone, as a container the
# toolkit gave one MIG device does (a100-mig: GPU 0's instances 2, 3, 9, 10
# have minors 21/22, 30/31, 84/85, 93/94).
check "agent starts with a100-mig" start_agent "$LOGS/agent-mig.log" --profile a100-mig \
	--device-nodes --cgroup "$T" --root $ROOT
caps=$(sed -n 's/.*nvidia-uvm-tools (\([0-9]*\)), nvidia-caps.*(\([0-9]*\): the first.*/\2/p' "$LOGS/agent-mig.log")
mig_lines() { smi_in "$1" -L | sed -n 's/^  MIG \([0-9g.]*gb\) *Device *\([0-9]*\).*/\1 \2/p' | paste -sd,; }
check_eq "only nvidia-uvm denied: GPU 0's 4 MIG devices" "3g.20gb 0,2g.10gb 1,1g.5gb 2,1g.5gb 3" "$(mig_lines juvm)"
job jmig "$caps:21" "$caps:22" "$caps:84" "$caps:85" "$caps:93" "$caps:94" 195:1 195:2 195:3 195:4 195:5 195:6 195:7
r=$(smi_in jmig -L)
check_eq "the caps of 3 instances and GPUs 1-7 denied: GPU 0 with its 2g.10gb alone, as MIG device 0" \
	"2g.10gb 0" "$(mig_lines jmig)"
check_eq "and no other GPU" 1 "$(echo "$r" | grep -c '^GPU ')"
r2=$(smi_in juvm -L | grep '2g.10gb')
check_eq "with the UUID it has when nothing is denied" "$(echo "$r2" | sed 's/Device  *1/Device  0/')" \
	"$(echo "$r" | grep '2g.10gb')"
job jmigci "$caps:31"
check_eq "only the 2g.10gb's compute instance node denied: it is gone, the other 3 stay" \
	"3g.20gb 0,1g.5gb 1,1g.5gb 2" "$(mig_lines jmigci)"
stop_agent
check_node_clean
summary
