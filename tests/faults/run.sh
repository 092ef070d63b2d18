#!/bin/sh
# GPU faults at runtime (`nvmirage fault`), each as readers in a target see
# it: NVML (check_faults, through nvmirage's libnvidia-ml.so.1), `nvmirage
# smi`, lspci, the driver's information file; a process outside the targets
# sees none of it; `clear` leaves the tree byte for byte as rendered; a fault
# set while readers loop never gives one half a change; bad input changes
# nothing; only root may set one; faults from the profile at start.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
setup_suite f "$out"
ROOT=/run/nvf
LOG=$LOGS/agent.log
lib=$(pwd)/$out/libnvidia-ml.so.1
cf=$(pwd)/$out/helpers/check_faults
work=$(mktemp -d)
chmod 755 "$work"
on_exit 'stop_agent; remove_cgroups "$T" "$O"; rm -rf "$work"'
B0=0008:06:00.0 B1=0009:06:00.0 B2=0018:06:00.0 B3=0019:06:00.0

fault() { "$nvm" fault --root "$ROOT" "$@" 2>&1; }
in_t() { timeout 60 "$in_cgroup" "$T" "$@" 2>&1; }
# tree_sum: every file of the tree and what it holds (nodes, links, bytes).
tree_sum() { (cd "$ROOT" && find . -type f -exec sha256sum {} + | sort) | sha256sum | cut -c1-16; }

echo "== bad input"
check "agent starts" start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT"
sum0=$(tree_sum)
r=$(fault 9 lost); rc=$?
check_eq "an unknown GPU: status 2" 2 $rc
check_has "and says which" 'no GPU or HCA "9" in profile' "$r"
r=$(fault 0 melt); rc=$?
check_eq "an unknown mode: status 2" 2 $rc
check_has "and lists the modes" "unknown mode (lost, fallen-off-bus, excluded, ecc, xid, clear)" "$r"
r=$(fault 0 xid); rc=$?
check_eq "xid without --xid: status 2" 2 $rc
check_has "and says what it needs" "needs a code 1..65535 (--xid N)" "$r"
r=$("$nvm" fault --root /run/nvf-none 0 lost 2>&1); rc=$?
check_eq "no agent: status 2" 2 $rc
check_has "and says so" "no agent answers at /run/nvf-none.sock" "$r"
cp "$nvm" "$work/nvmirage"; chmod 755 "$work/nvmirage"
r=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$work/nvmirage" fault --root "$ROOT" 0 lost 2>&1); rc=$?
check_eq "not root: status 2" 2 $rc
check_has "refused by the agent, from the socket's peer credentials" "only root may set or clear a fault" "$r"
r=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$work/nvmirage" status --root "$ROOT" 2>&1)
check_has "while anyone may read the status" "agent pid $agent_pid" "$r"
check_eq "none of it changed the tree" "$sum0" "$(tree_sum)"
check_has "and the status lists no fault" '"faults":[]' "$("$nvm" status --root "$ROOT" -j)"

echo "== lost"
"$in_cgroup" "$T" "$cf" "$lib" hold "$B1" "$work/go" > "$work/hold" 2>&1 &
hpid=$!
for _ in $(seq 1 100); do grep -q ready "$work/hold" && break; sleep 0.1; done
check_eq "GPU 1 lost" "" "$(fault 1 lost | grep -v 'done')"
touch "$work/go"; wait $hpid
check_has "a process holding its handle from before: GPU_IS_LOST at its next call" "name: GPU is lost" "$(cat "$work/hold")"
r=$(in_t "$cf" "$lib" handles)
check_eq "NVML still counts 4; the lost one's handle is refused" "$(printf '%s\n' count=4 \
	"0: 00000008:06:00.0" "1: GPU is lost" "2: 00000018:06:00.0" "3: 00000019:06:00.0")" "$r"
r=$(in_t "$nvm" smi -L); rc=$?
check_has "smi -L: the others as before" "GPU 2: NVIDIA GB300 NVL (UUID: GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f03)" "$r"
check_has "and nvidia-smi's words for the lost one" \
	"Unable to determine the device handle for GPU 1: GPU is lost.  Reboot the system to recover this GPU" "$r"
check_eq "and its exit status 15" 15 $rc
# NVIDIA's nvidia-smi (the nvml stage fetched it) on the same NVML.
smi_bin=$(pwd)/$out/cache/nvidia-smi/usr/lib/nvidia/current/nvidia-smi
r=$(in_t env LD_LIBRARY_PATH="$(pwd)/$out" "$smi_bin" -L); rc=$?
echo "$r" | sed 's/^/   nvidia-smi -L: /'
check_has "NVIDIA's nvidia-smi -L: the others as before" "GPU 2: NVIDIA GB300 NVL (UUID: GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f03)" "$r"
check_has "and the lost one is lost" "GPU is lost" "$r"
check_has "the driver files stay (a lost GPU is still on the bus)" "Model:" \
	"$(in_t cat /proc/driver/nvidia/gpus/$B1/information)"
r=$(timeout 30 "$in_cgroup" "$O" "$nvm" smi -L); rc=$?
check_eq "outside the targets: still no driver at all (exit 9)" 9 $rc
check_has "the status lists it" '"gpu":1,"bus_id":"0009:06:00.0","mode":"lost"' "$("$nvm" status --root "$ROOT" -j)"
check_has "in words too" "fault: GPU 1 (0009:06:00.0): lost" "$("$nvm" status --root "$ROOT")"

echo "== fallen-off-bus, with an Xid 79 to a process waiting for events"
in_t "$cf" "$lib" events 10000 1 > "$work/ev79" &
epid=$!
for _ in $(seq 1 100); do grep -q ready "$work/ev79" && break; sleep 0.1; done
fault 2 fallen-off-bus > /dev/null
wait $epid
check_has "the waiter gets Xid 79 from GPU 2" "xid 00000018:06:00.0 79 type 8" "$(cat "$work/ev79")"
r=$(in_t lspci -s $B2)
check_has "lspci: rev ff" "(rev ff)" "$r"
check_has "lspci -v: unknown header type 7f" "Unknown header type 7f" "$(in_t lspci -v -s $B2)"
check_has "lspci -vmm: Rev ff" "Rev:	ff" "$(in_t lspci -vmm -s $B2)"
check_eq "its config space reads all 0xff" "ff" "$(in_t od -An -tx1 -v /sys/bus/pci/devices/$B2/config | tr -s ' \n' '\n\n' | sort -u | grep .)"
check_eq "lspci outside: no such device" "" "$(timeout 30 "$in_cgroup" "$O" lspci -s $B2 2>/dev/null)"
check_lacks "and no rev ff anywhere outside" "rev ff" "$(timeout 30 "$in_cgroup" "$O" lspci 2>&1)"
check_has "NVML: lost" "2: GPU is lost" "$(in_t "$cf" "$lib" handles)"

echo "== excluded"
fault 3 excluded > /dev/null
check_has "the information file says so" "GPU Excluded:	 Yes" "$(in_t cat /proc/driver/nvidia/gpus/$B3/information)"
check_eq "/proc still lists the 4 GPUs" 4 "$(in_t ls /proc/driver/nvidia/gpus | wc -l)"
check_eq "NVML leaves it out (count 3)" "count=3" "$(in_t "$cf" "$lib" handles | head -n 1)"
check_eq "outside, no information file" "" "$(timeout 30 "$in_cgroup" "$O" cat /proc/driver/nvidia/gpus/$B3/information 2>/dev/null)"

echo "== ecc, and Xid events"
in_t "$cf" "$lib" events 10000 3 > "$work/ev" &
epid=$!
for _ in $(seq 1 100); do grep -q ready "$work/ev" && break; sleep 0.1; done
fault 0 ecc > /dev/null
fault 0 ecc > /dev/null
fault 0 xid --xid 31 > /dev/null
wait $epid
check_eq "the waiter gets Xid 48, 48 and 31 from GPU 0, in order" "$(printf '%s\n' \
	"xid 00000008:06:00.0 48 type 8" "xid 00000008:06:00.0 48 type 8" "xid 00000008:06:00.0 31 type 8")" \
	"$(grep '^xid' "$work/ev")"
check_eq "ECC: 2 uncorrectable errors (volatile and aggregate), 2 rows to remap, pending (no page retirement on GB300)" \
	"ecc_mode=1 volatile=2 aggregate=2 corrected=0 remapped_corr=0 remapped_unc=2 remap_pending=1 remap_failed=0 retired_pending=9" \
	"$(in_t "$cf" "$lib" ecc $B0)"
r=$(in_t env LD_LIBRARY_PATH="$(pwd)/$out" "$smi_bin" -q -d ECC -i 0)
check_eq "NVIDIA's nvidia-smi -q -d ECC: the 2 under DRAM Uncorrectable, volatile and aggregate" \
	"2 2" "$(echo "$r" | sed -n 's/^ *DRAM Uncorrectable *: //p' | paste -sd ' ')"
r=$(in_t "$cf" "$lib" events 300 1)
check_has "a waiter that comes later gets no old event" "timeout" "$r"
check_has "status counts them" '"gpu":0,"bus_id":"0008:06:00.0","mode":"none","ecc_errors":2,"ecc_pending":true,"xid_events":3,"xids":[48,48,31]' \
	"$("$nvm" status --root "$ROOT" -j)"
r=$(timeout 30 "$in_cgroup" "$O" "$cf" "$lib" events 300 1)
check_has "outside: no NVML at all" "init: Driver Not Loaded" "$r"

echo "== clear"
for g in 0 1 2 3; do fault $g clear > /dev/null; done
check_eq "the tree is byte for byte as rendered" "$sum0" "$(tree_sum)"
check_has "status: no faults" '"faults":[]' "$("$nvm" status --root "$ROOT" -j)"
check_eq "smi -L lists the 4 again" "$(cat tests/nvml/gb300-L.txt)" "$(in_t "$nvm" smi -L)"
check_has "lspci: rev a1 again" "(rev a1)" "$(in_t lspci -s $B2)"

echo "== faults set while readers loop: never half a change"
# Copies of each version of the files, then readers in the target while
# the faults go on and off.
cp "$ROOT/proc/driver/nvidia/gpus/$B3/information" "$work/info-a"
cp "$ROOT/sys/bus/pci/devices/$B2/config" "$work/cfg-a"
fault 3 excluded > /dev/null; fault 2 fallen-off-bus > /dev/null
cp "$ROOT/proc/driver/nvidia/gpus/$B3/information" "$work/info-b"
cp "$ROOT/sys/bus/pci/devices/$B2/config" "$work/cfg-b"
fault 3 clear > /dev/null; fault 2 clear > /dev/null
check "the two versions differ" sh -c '! cmp -s "$1/info-a" "$1/info-b" && ! cmp -s "$1/cfg-a" "$1/cfg-b"' _ "$work"
in_t "$cf" - reads /proc/driver/nvidia/gpus/$B3/information 300 "$work/info-a" "$work/info-b" > "$work/r1" &
r1=$!
in_t "$cf" - reads /sys/bus/pci/devices/$B2/config 300 "$work/cfg-a" "$work/cfg-b" > "$work/r2" &
r2=$!
flips=0
while kill -0 $r1 2>/dev/null || kill -0 $r2 2>/dev/null; do
	fault 3 excluded > /dev/null; fault 2 fallen-off-bus > /dev/null
	fault 3 clear > /dev/null; fault 2 clear > /dev/null
	flips=$((flips + 1))
done
wait $r1 $r2
echo "note: $flips rounds of faults while the readers read: $(cat "$work/r1") / $(cat "$work/r2")"
check_has "information: every read was one version or the other" "other=0" "$(cat "$work/r1")"
check_has "config: every read was one version or the other" "other=0" "$(cat "$work/r2")"
# Each reader reads until it saw each version 300 times: both counts at
# least 300, or the faults did not change while it read.
check "and the readers saw both, 300 times each" sh -c 'for f in "$1/r1" "$1/r2"; do
	awk -F "[= ]" "{ exit !(\$2 >= 300 && \$4 >= 300) }" "$f" || exit 1; done' _ "$work"
stop_agent

. tests/faults/mig.sh

echo "== faults from the profile at start (Mokka's failure settings)"
sed -e "/uuid: \"GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f02\"/a\\    failure: {mode: fallen_off_bus}" \
    -e "/uuid: \"GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f04\"/a\\    failure: {mode: lost, probability: 0.5}" \
	profiles/gb300.yaml > "$work/failing.yaml"
check "agent starts with it" start_agent "$LOG" --profile "$work/failing.yaml" --cgroup "$T" --root "$ROOT"
check_has "GPU 1 has fallen off the bus from the start" "(rev ff)" "$(in_t lspci -s $B1)"
check_has "a fault on the n-th NVML call is left out, and said so" \
	"probability and after_calls trip a fault on an NVML call, which nvmirage cannot do; left out" "$(cat "$LOG")"
check_eq "NVML: GPU 1 lost, GPU 3 not" "$(printf '%s\n' count=4 "0: 00000008:06:00.0" "1: GPU is lost" \
	"2: 00000018:06:00.0" "3: 00000019:06:00.0")" "$(in_t "$cf" "$lib" handles)"
check_has "status lists it" '"gpu":1,"bus_id":"0009:06:00.0","mode":"fallen-off-bus"' "$("$nvm" status --root "$ROOT" -j)"
stop_agent
sed "/uuid: \"GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f02\"/a\\    failure: {mode: melted}" profiles/gb300.yaml > "$work/bad.yaml"
r=$("$nvm" run --profile "$work/bad.yaml" --cgroup "$T" --root "$ROOT" 2>&1); rc=$?
check_eq "an unknown failure mode in a profile: status 2" 2 $rc
check_has "with file, line and key" "bad.yaml:$(grep -n melted "$work/bad.yaml" | cut -d: -f1):" "$r"
check_has "and what is allowed" 'devices[1].failure: mode "melted": expected lost, fallen_off_bus' "$r"
check "and nothing was left behind" test ! -e "$ROOT"
check_node_clean
summary
