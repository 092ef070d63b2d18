# nvmirage's nvidia-smi against NVIDIA's (550, $smi_bin), both on
# nvmirage's NVML in the same target: the forms people use. The profile is
# h100 without its moving values (so two runs a second apart agree), with
# a process on GPU 0. nvmirage's draws the table and -q in driver 580's
# layout (../reference), NVIDIA's 550 in its own: rows and values are
# compared, the frame against the reference. Sourced by run.sh.

echo "== nvmirage's nvidia-smi against NVIDIA's, on the same NVML"
sed -e '/^  dynamic_metrics:/,+3d' \
	-e '/minor_number: 0$/a\    processes: [{pid: 4242, type: C, name: "python3 train.py", used_memory_mib: 20480}]' \
	profiles/h100.yaml > "$LOGS/still.yaml"
sed -e '/^  dynamic_metrics:/,+3d' profiles/t4.yaml > "$LOGS/t4still.yaml"
# both PROFILE ARGS...: $LOGS/theirs and $LOGS/ours, each its stdout and status.
both() {
	prof=$1; shift
	timeout 60 "$nvm" -q exec --profile "$prof" --root /run/nvn -- sh -c '
		o=$1 smi=$2 lib=$3 ours=$4; shift 4
		env LD_LIBRARY_PATH="$lib" "$smi" "$@" > "$o/theirs" 2>&1; echo "status $?" >> "$o/theirs"
		"$ours" "$@" > "$o/ours" 2>&1; echo "status $?" >> "$o/ours"' \
		sh "$LOGS" "$smi_bin" "$(dirname "$lib")" "$(pwd)/$out/nvidia-smi" "$@"
}
fields=index,name,uuid,serial,pci.bus_id,pci.domain,pci.bus,pci.device,pci.device_id,pci.sub_device_id,driver_version,vbios_version,count,persistence_mode,pstate,temperature.gpu,temperature.memory,power.draw,power.draw.average,power.draw.instant,power.limit,power.default_limit,power.min_limit,power.max_limit,memory.total,memory.reserved,memory.used,memory.free,utilization.gpu,utilization.memory,clocks.gr,clocks.sm,clocks.mem,clocks.video,clocks.max.gr,clocks.max.sm,clocks.max.mem,clocks.applications.graphics,clocks.applications.memory,fan.speed,compute_mode,ecc.mode.current,ecc.errors.uncorrected.volatile.total,mig.mode.current,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,display_active,display_mode,accounting.mode,inforom.img
for p in still t4still; do
	both "$LOGS/$p.yaml" --query-gpu=$fields --format=csv
	check_eq "$p: --query-gpu of 52 fields, byte for byte as NVIDIA's" "$(cat "$LOGS/theirs")" "$(cat "$LOGS/ours")"
done
both "$LOGS/still.yaml" -i 1,6 --query-gpu=index,pci.bus_id --format=csv,noheader
check_eq "-i 1,6 --format=csv,noheader: the same 2 lines" "$(cat "$LOGS/theirs")" "$(cat "$LOGS/ours")"
check_eq "(which are GPUs 1 and 6)" "1 6" "$(sed -n 's/^\([0-9]\), .*/\1/p' "$LOGS/ours" | tr '\n' ' ' | sed 's/ $//')"
both "$LOGS/still.yaml" --query-compute-apps=gpu_name,gpu_bus_id,gpu_serial,gpu_uuid,pid,process_name,used_memory --format=csv
check_eq "--query-compute-apps, byte for byte" "$(cat "$LOGS/theirs")" "$(cat "$LOGS/ours")"
check_has "(the profile's process on GPU 0)" "00000000:18:00.0, 1650004096900, GPU-344e1aa0-d0ea-ba06-729f-5261a1d94e06, 4242, python3 train.py, 20480 MiB" "$(cat "$LOGS/ours")"
both "$LOGS/t4still.yaml" --query-compute-apps=pid,used_memory --format=csv
check_eq "no process: the header alone, as NVIDIA's" "$(cat "$LOGS/theirs")" "$(cat "$LOGS/ours")"

both "$LOGS/still.yaml"
check_eq "the table: column titles and the 8 GPUs' rows, byte for byte" \
	"$(sed -n 5,40p "$LOGS/theirs")" "$(sed -n 5,40p "$LOGS/ours")"
check_eq "its frame is a real 580 node's (tests/nvml/h200-smi.txt, read off one)" \
	"$(sed -n '2p;4,8p' tests/nvml/h200-smi.txt)" "$(sed -n '2p;4,8p' "$LOGS/ours")"
check_has "its banner names the profile's driver and CUDA" \
	"| NVIDIA-SMI 550.163.01             Driver Version: 550.163.01     CUDA Version: 12.4     |" "$(cat "$LOGS/ours")"
check_eq "the processes box: a 580 node's header" \
	"$(sed -n '13,18p' tests/nvml/h200-smi.txt)" "$(sed -n '41,46p' "$LOGS/ours")"
check_eq "and the process in its columns (PID, type, name, memory)" \
	"|    0   N/A  N/A             4242      C   python3 train.py                      20480MiB |" \
	"$(sed -n 47p "$LOGS/ours")"
check_eq "and status 0" "status 0" "$(tail -n 1 "$LOGS/ours")"

for p in t4still still; do
	both "$LOGS/$p.yaml" -q
	r=$(/usr/bin/python3 tests/nvml/q_lines_in.py "$LOGS/ours" "$LOGS/theirs")
	check_eq "$p: -q, every line in NVIDIA's -q in order (keys unpadded)" 0 $?
	echo "$r" | tail -n 1
	check "(over 85 lines per GPU)" test "$(grep -c '' "$LOGS/ours")" -gt $((85 * $(grep -c '^GPU 0000' "$LOGS/ours")))
done
check_has "still: the process, as -q lists it" "$(printf '        Process ID                                     : 4242\n            Type                                       : C\n            Name                                       : python3 train.py\n            Used GPU Memory                            : 20480 MiB')" "$(cat "$LOGS/ours")"
sed 's/^\(    Product Name  *: \).*/\1NVIDIA A100/' "$LOGS/ours" > "$LOGS/ours-wrong"
r=$(/usr/bin/python3 tests/nvml/q_lines_in.py "$LOGS/ours-wrong" "$LOGS/theirs"); rc=$?
check_eq "a wrong product name on each GPU is caught, 8 times (the comparison can fail)" "1 8" "$rc $(echo "$r" | grep -c 'product name : NVIDIA A100')"
