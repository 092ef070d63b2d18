#!/bin/sh
# Kernel tests of the redirect engine on this machine's kernel: real BPF
# programs, real processes in real cgroups. Every reader also runs in a
# sibling cgroup outside the targets, which must see the host's real (absent)
# files. Needs root.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
setup_suite k "$out"
ROOT=/run/nvk
LOG=$LOGS/agent.log
work=$(mktemp -d)
cleanup() {
	stop_agent
	remove_cgroups "$T/later" "$T" "$O"
	[ -z "${NORT:-}" ] || rmdir "$NORT" 2>/dev/null
	rm -rf "$work"
}
on_exit cleanup

echo "== probe"
p=$("$nvm" probe 2>&1)
lock=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/security/lockdown 2>/dev/null || echo unknown)
# Lockdown refuses bpf_probe_write_user, so it decides the strategy.
want=in-kernel; [ "$lock" = none ] || want=assisted
check_has "probe reports the kernel's lockdown mode ($lock)" "lockdown               $lock" "$p"
check_has "probe names the chosen strategy ($want)" "chosen: $want" "$p"
if [ "$lock" != none ]; then
	check_has "probe says lockdown refuses bpf_probe_write_user" "bpf_probe_write_user   no   load refused (Invalid argument): lockdown is \"$lock\"" "$p"
	check_has "probe lists in-kernel as not available, and why" "in-kernel              no   load refused" "$p"
	r=$("$nvm" run --profile gb300 --cgroup "$T" --root "$ROOT" --strategy in-kernel 2>&1); rc=$?
	check_eq "--strategy in-kernel under lockdown: status 2" 2 $rc
	check_has "and says why" "--strategy in-kernel: not available on this kernel: bpf_probe_write_user load refused (Invalid argument): lockdown is \"$lock\"" "$r"
	check "and nothing was left behind" test ! -e "$ROOT"
fi
# fentry on the syscall functions decides the entry points.
fentry_ok=$("$nvm" probe -j | python3 -c 'import json,sys; print(json.load(sys.stdin)["programs"]["fentry"]["ok"])')
went=tp_btf; [ "$fentry_ok" = True ] && went=fentry
check_has "probe names the chosen entry points ($went)" "chosen entry: $went" "$p"
if [ "$went" = tp_btf ]; then
	r=$("$nvm" run --profile gb300 --cgroup "$T" --root "$ROOT" --entry fentry 2>&1); rc=$?
	check_eq "--entry fentry where fentry does not load: status 2" 2 $rc
	check_has "and says why" "--entry fentry: not available on this kernel: fentry on the syscall functions load refused" "$r"
fi
r=$("$nvm" run --profile gb300 --cgroup "$T" --entry kprobe 2>&1); rc=$?
check_eq "--entry kprobe: status 2" 2 $rc
check_has "and names the entry points there are" "--entry kprobe: not an entry point (auto, fentry or tp_btf)" "$r"
pj=$("$nvm" probe -j | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["strategy"], d["programs"]["tp_btf"]["ok"])')
check_eq "probe -j is JSON with the strategy" "$want True" "$pj"
r=$("$nvm" run --profile gb300 --cgroup "$T" --strategy fastest 2>&1); rc=$?
check_eq "--strategy fastest: status 2" 2 $rc
check_has "and names the strategies there are" "--strategy fastest: not a strategy (auto, in-kernel or assisted)" "$r"

echo "== the rule matcher, in C and in BPF"
# The same table of paths through the agent's rules_match and the kernel
# side's matcher (BPF_PROG_RUN): they must agree on every path.
r=$("$(pwd)/$out/helpers/match" profiles/gb300.yaml /run/nvm tests/kernel/match_paths.txt 2>&1)
echo "$r" | grep '^FAIL' || true
check_has "the kernel side's matcher and rules_match agree on every path of the table" "ok: matcher: the kernel side and rules_match agree on all" "$r"

echo "== bad input"
r=$("$nvm" run --profile gb300 --cgroup /tmp 2>&1); rc=$?
check_eq "a target that is not a cgroup v2 directory: status 2" 2 $rc
check_has "and says so" "not a cgroup v2 directory" "$r"
printf 'system: {driver_version: "570.1"}\ndevices:\n  - {minor_number: 300, name: X, pci: {bus_id: "0000:01:00.0", device_id: 1}}\n' > "$work/bad.yaml"
r=$("$nvm" run --profile "$work/bad.yaml" --cgroup "$T" 2>&1); rc=$?
check_eq "a profile that does not validate: status 2" 2 $rc
check_has "and names file, line and key" "$work/bad.yaml:3:20: devices[0].minor_number: 300 is outside 0..254" "$r"
r=$("$nvm" run --profile gb300 --cgroup "$T" --btf /nonexistent/vmlinux 2>&1); rc=$?
check_eq "no BTF: status 2" 2 $rc
check_has "and says BTF is missing" "no kernel BTF at /nonexistent/vmlinux" "$r"
cp "$nvm" "$work/nvmirage"; chmod 755 "$work" "$work/nvmirage"
r=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$work/nvmirage" run --profile gb300 --cgroup "$T" 2>&1); rc=$?
check_eq "not root: status 2" 2 $rc
check_has "and says it must run as root" "must run as root" "$r"
r=$("$nvm" run --profile gb300 --cgroup "$T" --cgroup "$O" --max-targets 1 2>&1); rc=$?
check_eq "more --cgroup than --max-targets: status 2" 2 $rc
check_has "and says so" "2 --cgroup, more than --max-targets 1" "$r"
check "nothing was left behind by the failures" test ! -e "$ROOT"

echo "== 500 target cgroups (no fixed limit)"
mkdir -p "$T/many"
many=$(for i in $(seq 1 500); do mkdir -p "$T/many/c$i"; printf ' --cgroup %s/many/c%d' "$T" "$i"; done)
# shellcheck disable=SC2086
check "an agent takes 500 --cgroup" start_agent "$LOG" --profile gb300 $many --root "$ROOT"
check_has "and says so" "ready: 500 target cgroups" "$(cat "$LOG")"
check_has "the first sees the GPUs" "gpus=4" "$(timeout 20 "$in_cgroup" "$T/many/c1" "$reader" literal)"
check_has "the last too" "gpus=4" "$(timeout 20 "$in_cgroup" "$T/many/c500" "$reader" literal)"
check_has "a cgroup outside them does not" "gpus=0" "$(timeout 20 "$in_cgroup" "$O" "$reader" literal)"
check_eq "status lists the 500" 500 "$("$nvm" status --root "$ROOT" -j | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["targets"]))')"
stop_agent
for i in $(seq 1 500); do rmdir "$T/many/c$i"; done
rmdir "$T/many"

echo "== start"
check "agent starts on $T" start_agent "$LOG" --profile gb300 --device-nodes --cgroup "$T" --root "$ROOT"
check_has "log says which strategy ($want)" "strategy: $want rewrite (auto" "$(cat "$LOG")"
check_has "log says which entry points ($went)" "entry points: $went" "$(cat "$LOG")"
check_has "log lists the rules" "rule /proc/driver/nvidia -> $ROOT/p" "$(cat "$LOG")"
# probe and run decide with the same function: what probe says is what runs.
check_eq "probe's strategy and entry points are the running agent's" \
	"$("$nvm" probe -j | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["strategy"], d["entry"])')" \
	"$("$nvm" status --root "$ROOT" -j | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["strategy"], d["entry"])')"
check_has "log names the target" "target cgroup $T" "$(cat "$LOG")"
check_eq "every patch service thread runs SCHED_FIFO (status)" "$((2 * $(nproc)))" "$(status_field "$ROOT" agent realtime_threads)"
check_eq "and the kernel says so (/proc policy)" "$((2 * $(nproc)))" "$(fifo_threads "$agent_pid")"
r=$("$nvm" run --profile gb300 --cgroup "$T" --root /run/nvk2 2>&1); rc=$?
check_eq "a second agent on the same cgroup is refused: status 2" 2 $rc
check_has "with a clear message" "is already in use by another nvmirage agent" "$r"
check "the refused agent left no tree" test ! -e /run/nvk2

echo "== string literals (read-only page): opendir+readdir, fopen"
r=$(timeout 20 "$in_cgroup" "$T" "$reader" literal)
check_has "target sees 4 GPUs" "gpus=4" "$r"
check_has "target sees gpu 0019:06:00.0" "gpu=0019:06:00.0" "$r"
check_has "target reads version" "version=NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.124.06" "$r"
check_has "literals hold their original bytes" "literals_intact=yes" "$r"
r=$(timeout 20 "$in_cgroup" "$O" "$reader" literal)
check_has "sibling sees no GPUs" "gpus=0" "$r"
check_has "sibling reads no version" "version=(none)" "$r"
r=$(timeout 20 "$reader" literal)
check_has "the test's own process (outside) sees no GPUs" "gpus=0" "$r"

echo "== heap and stack buffers: stat, access, readlink, open through the link"
online=$(cat /sys/devices/system/cpu/online)
r=$(timeout 20 "$in_cgroup" "$T" "$reader" buffers 0008:06:00.0)
check_has "stat finds information" "stat=file" "$r"
check_has "access finds information" "access=ok" "$r"
check_has "readlink of the driver link" "readlink=../../../../devices/pci0008:00/0008:06:00.0" "$r"
check_has "local_cpulist through the link" "local_cpulist=$online" "$r"
check_has "buffers hold their original bytes" "buffers_intact=yes" "$r"
r=$(timeout 20 "$in_cgroup" "$O" "$reader" buffers 0008:06:00.0)
check_has "sibling: stat finds nothing" "stat=No such file or directory" "$r"
check_has "sibling: readlink finds nothing" "readlink=No such file or directory" "$r"

echo "== raw syscalls, exec'd and static binaries, Python, device nodes"
r=$(timeout 20 "$in_cgroup" "$T" "$reader" raw)
check_has "raw syscall(SYS_openat) reads version" "raw=NVRM version:" "$r"
r=$(timeout 20 "$in_cgroup" "$O" "$reader" raw)
check_has "sibling raw syscall sees nothing" "raw=No such file or directory" "$r"
r=$(timeout 20 "$in_cgroup" "$T" sh -c "$reader literal")
check_has "a child exec'd by a shell sees 4 GPUs" "gpus=4" "$r"
bb=$(command -v busybox)
check_has "busybox is statically linked" "not a dynamic executable" "$(ldd "$bb" 2>&1)"
r=$(timeout 20 "$in_cgroup" "$T" "$bb" ls /proc/driver/nvidia/gpus | tr '\n' ' ')
check_eq "static busybox ls lists the GPUs" "0008:06:00.0 0009:06:00.0 0018:06:00.0 0019:06:00.0 " "$r"
r=$(timeout 20 "$in_cgroup" "$T" "$bb" cat /proc/driver/nvidia/gpus/0009:06:00.0/information | head -1)
check_has "static busybox cat reads information" "NVIDIA GB300 NVL" "$r"
r=$(timeout 20 "$in_cgroup" "$O" "$bb" ls /proc/driver/nvidia/gpus 2>&1)
check_has "sibling busybox ls sees nothing" "No such file" "$r"
r=$(timeout 20 "$in_cgroup" "$T" "$bb" cat /proc//driver///nvidia/version 2>&1)
check_has "a path with repeated slashes inside (/proc//driver///nvidia/version)" "NVRM version:" "$r"
# Go: a static binary without cgo makes its own system calls (no C library).
check_has "the pure Go program is static" "not a dynamic executable" "$(ldd "$out/helpers/ls_gpus" 2>&1)"
r=$(timeout 20 "$in_cgroup" "$T" "$out/helpers/ls_gpus" 2>&1)
check_eq "a static Go program lists the GPUs and reads their model" \
	"$(printf '0008:06:00.0 NVIDIA GB300 NVL\n0009:06:00.0 NVIDIA GB300 NVL\n0018:06:00.0 NVIDIA GB300 NVL\n0019:06:00.0 NVIDIA GB300 NVL')" "$r"
r=$(timeout 20 "$in_cgroup" "$O" "$out/helpers/ls_gpus" 2>&1)
check_has "sibling Go program sees nothing" "no such file or directory" "$r"
py='import os; print(sorted(os.listdir("/proc/driver/nvidia/gpus"))); print(open("/proc/driver/nvidia/version").readline().strip())'
r=$(timeout 20 "$in_cgroup" "$T" /usr/bin/python3 -c "$py" 2>&1)
check_has "python os.listdir" "['0008:06:00.0', '0009:06:00.0', '0018:06:00.0', '0019:06:00.0']" "$r"
check_has "python open" "NVRM version:" "$r"
r=$(timeout 20 "$in_cgroup" "$O" /usr/bin/python3 -c "$py" 2>&1)
check_has "sibling python sees nothing" "No such file or directory" "$r"
r=$(timeout 20 "$in_cgroup" "$T" stat -c '%F %t:%T' /dev/nvidia0 /dev/nvidiactl 2>&1 | tr '\n' ' ')
check_eq "/dev/nvidia0 and nvidiactl are character devices 195:N" "character special file c3:0 character special file c3:ff " "$r"
r=$(timeout 20 "$in_cgroup" "$T" ls -l /dev/nvidia3 2>&1)
check_has "ls -l /dev/nvidia3 (statx + xattrs)" "crw-rw-rw-" "$r"
r=$(timeout 20 "$in_cgroup" "$O" stat /dev/nvidia0 2>&1)
check_has "sibling has no /dev/nvidia0" "No such file" "$r"

echo "== the driver's user space: NVML and nvidia-smi where the toolkit puts them"
# No LD_LIBRARY_PATH, no image change: the dynamic linker's own search finds
# the tree's NVML (its cache has no entry), and a shell's PATH search finds
# the tree's nvidia-smi and runs it (stat, then execve, both redirected).
nvml_py='import ctypes
for name in ("libnvidia-ml.so.1", "libnvidia-ml.so"):
    h = ctypes.CDLL(name)
    n = ctypes.c_uint()
    print(name, h.nvmlInit_v2(), h.nvmlDeviceGetCount_v2(ctypes.byref(n)), n.value)'
r=$(timeout 20 "$in_cgroup" "$T" env -u LD_LIBRARY_PATH /usr/bin/python3 -c "$nvml_py" 2>&1)
check_eq "python's ctypes loads libnvidia-ml.so.1 and libnvidia-ml.so: 4 GPUs" \
	"$(printf 'libnvidia-ml.so.1 0 0 4\nlibnvidia-ml.so 0 0 4')" "$r"
r=$(timeout 20 "$in_cgroup" "$O" env -u LD_LIBRARY_PATH /usr/bin/python3 -c "$nvml_py" 2>&1)
check_has "sibling: no such library" "libnvidia-ml.so.1: cannot open shared object file" "$r"
# As NVIDIA's Go bindings load it: cgo, dlopen("libnvidia-ml.so.1").
r=$(timeout 20 "$in_cgroup" "$T" env -u LD_LIBRARY_PATH "$out/helpers/nvml_dlopen" 2>&1)
check_eq "a Go program dlopens NVML by name: 4 GPUs" \
	"4 GPUs: NVIDIA GB300 NVL, NVIDIA GB300 NVL, NVIDIA GB300 NVL, NVIDIA GB300 NVL" "$r"
r=$(timeout 20 "$in_cgroup" "$O" env -u LD_LIBRARY_PATH "$out/helpers/nvml_dlopen" 2>&1)
check_has "sibling Go program: no such library" "libnvidia-ml.so.1: cannot open shared object file" "$r"
r=$(timeout 20 "$in_cgroup" "$T" sh -c 'nvidia-smi -L' 2>&1)
check_eq "a shell (dash) runs nvidia-smi -L from its PATH: the 4 GPUs" 4 "$(echo "$r" | grep -c '^GPU [0-3]: NVIDIA GB300 NVL (UUID: GPU-')"
g0=$(status_field "$ROOT" kernel exec_gone)
r=$(timeout 20 "$in_cgroup" "$T" bash -c 'nvidia-smi -L' 2>&1)
check_eq "bash, which execs it itself: the 4 GPUs" 4 "$(echo "$r" | grep -c '^GPU [0-3]: NVIDIA GB300 NVL (UUID: GPU-')"
g1=$(status_field "$ROOT" kernel exec_gone)
check "its execve was redirected, and the patch forgotten with the old image (exec_gone $g0 -> $g1)" test "$g1" -gt "$g0"
r=$(timeout 20 "$in_cgroup" "$T" sh -c 'nvidia-smi; echo "status $?"' 2>&1)
check_eq "nvidia-smi's table: a row per GPU" 4 "$(echo "$r" | grep -c '^| *[0-3]  NVIDIA GB300 NVL ')"
check_has "and status 0" "status 0" "$r"
r=$(timeout 20 "$in_cgroup" "$T" sh -c 'nvidia-smi nvlink -s; echo "status $?"' 2>&1)
check_has "a form it does not answer: not supported by nvmirage, said so" "nvidia-smi: nvlink is not supported by nvmirage" "$r"
check_has "with status 2" "status 2" "$r"
r=$(timeout 20 "$in_cgroup" "$T" stat -c '%F %s' /usr/bin/nvidia-smi 2>&1)
check_eq "/usr/bin/nvidia-smi is a regular file (as the toolkit's)" "regular file $(stat -c %s "$out/nvidia-smi")" "$r"
r=$(timeout 20 "$in_cgroup" "$O" sh -c 'nvidia-smi -L' 2>&1)
check_has "sibling: no nvidia-smi" "not found" "$r"
check "and nothing of it on the node" test ! -e /usr/bin/nvidia-smi
# An exec is redirected by a file rule's exact path only: never a path
# under a directory rule, whatever it names in the tree.
r=$(timeout 20 "$in_cgroup" "$T" /usr/bin/python3 -c '
import os
for p in ("/proc/driver/nvidia/version", "/usr/bin/nvidia-smi/", "/usr/bin/nvidia-smi-x"):
    try:
        os.execv(p, [p])
    except OSError as e:
        print(p, e.strerror, flush=True)' 2>&1)
check_eq "execve of other paths: not redirected (a driver file, a trailing /, a longer name)" \
	"$(printf '/proc/driver/nvidia/version No such file or directory\n/usr/bin/nvidia-smi/ No such file or directory\n/usr/bin/nvidia-smi-x No such file or directory')" "$r"
# A vfork child (dash, posix_spawn, Python's subprocess) shares its
# parent's memory until its exec, which hands that memory back to the
# parent: the path is put back there, through the parent.
x0=$(status_field "$ROOT" kernel exec_shared)
r=$(timeout 20 "$in_cgroup" "$T" "$reader" vfork /usr/bin/nvidia-smi -L 2>&1)
x1=$(status_field "$ROOT" kernel exec_shared)
check_eq "vfork and execv of /usr/bin/nvidia-smi -L: the 4 GPUs" 4 "$(echo "$r" | grep -c '^GPU [0-3]: NVIDIA GB300 NVL')"
check_has "and the parent's copy of the path holds its bytes again" "vfork_path_intact=yes" "$r"
check "counted as an exec of a task sharing its parent's memory (exec_shared $x0 -> $x1)" test "$x1" -gt "$x0"
r=$(timeout 20 "$in_cgroup" "$T" /usr/bin/python3 -c 'import subprocess; subprocess.run(["nvidia-smi", "-L"])' 2>&1)
check_eq "python's subprocess.run([\"nvidia-smi\", \"-L\"]): the 4 GPUs" 4 "$(echo "$r" | grep -c '^GPU [0-3]: ')"

. tests/kernel/infiniband.sh

echo "== cgroups made later below a target"
mkdir -p "$T/later"
r=$(timeout 20 "$in_cgroup" "$T/later" "$reader" literal)
check_has "a new child cgroup of the target is covered" "gpus=4" "$r"

# Under contention, a task that would have to wait on the last CPU while the
# agent is still waking cannot (no CPU would be left to answer): it goes on
# unredirected, counted as slot_busy, as a deadline miss is. So concurrent
# readers are checked for: memory left as it was, every missed read counted,
# and misses rare (at most 1% of the reads).
# The kernel's count of syscalls that went on unredirected, by cause: no
# wait possible (refused), a wait that ran out (deadline), and the agent
# answering that it could not patch (failed); then agent errors and the
# log's deadline notes.
counters() {
	"$nvm" status --root "$ROOT" -j | python3 -c '
import json, sys
d = json.load(sys.stdin)
k, a = d["kernel"], d["agent"]
print(k["slot_busy"], k["deadline_misses"], k["agent_failed"], a["errors"])'
	echo " $(grep -c 'deadline passed' "$LOG")"
}
# check_counted NAME READS MISSED "COUNTERS-BEFORE" [MAX-PERCENT]: every
# missed read was counted by the kernel as unredirected, and at most
# MAX-PERCENT (default 1) of the reads missed.
check_counted() {
	name=$1 reads=$2 missed=$3 max=${5:-1}
	set -- $4 $(counters)
	counted=$(($6 - $1 + $7 - $2 + $8 - $3))
	check "$name: $missed of $reads reads missed, every one counted (refused +$(($6 - $1)), deadline +$(($7 - $2)), failed +$(($8 - $3))), at most $max%" \
		test "$missed" -le "$counted" -a $((missed * 100)) -le $((reads * max))
}
# check_waits NAME "COUNTERS-BEFORE": every wait that ran out is named in
# the log, and agent errors came only where a wait ran out (its late
# answer then finds the memory changed).
check_waits() {
	name=$1 before=$2
	# The agent's main thread logs the kernel's notes as they come, unless
	# it is busy restoring what a stuck process left: give it 3 s.
	for _ in $(seq 1 30); do
		set -- $before $(counters)
		[ $((${10} - $5)) -ge $(($7 - $2)) ] && break
		sleep 0.1
	done
	check_eq "$name: each of the $(($7 - $2)) waits that ran out is named in the log" $(($7 - $2)) $((${10} - $5))
	check "$name: agent errors (+$(($9 - $4))) only where a wait ran out" \
		test $(($9 - $4)) -eq 0 -o $(($7 - $2)) -gt 0
}

echo "== threads, forks, execs"
# Forks while other threads have patches in place: each child's copy must
# be repaired before it runs, through the literal and a writable copy.
for where in literal data; do
	arg=; [ $where = data ] && arg=data
	rep0=$(status_field "$ROOT" agent fork_repairs)
	r=$(timeout 60 "$in_cgroup" "$T" "$reader" forks 200 $arg)
	check_has "200 forks while 2 threads open ($where): every child's copy intact" "forks_broken=0" "$r"
	echo "note: forks ($where): $(( $(status_field "$ROOT" agent fork_repairs) - rep0 )) children repaired, $(echo "$r" | sed -n 's/^forks_opens=//p') opens meanwhile"
done
c0=$(counters)
r=$(timeout 60 "$in_cgroup" "$T" "$reader" threads 8 200)
check_lacks "8 threads x 200 opens through one literal: the literal is intact" "literals_intact=no" "$r"
set -- $(echo "$r" | good_reads)
check_eq "8 threads x 200 opens: every read answered" 1600 "${1:-0}"
check_counted "8 threads x 200 opens" "${1:-0}" "${2:-1}" "$c0"
c0=$(counters)
r=$(timeout 60 "$in_cgroup" "$T" "$reader" tree 50)
check_eq "threads + forks + exec in a forked pid: nothing broken" 1 "$(echo "$r" | grep -c '^tree_broken=0$')"
check_lacks "and every copy of the literals intact" "literals_intact=no" "$r"
check_counted "threads + forks + exec" "$(echo "$r" | sed -n 's/^tree_reads=//p')" \
	"$(echo "$r" | sed -n 's/^tree_missed=//p')" "$c0"

echo "== stress"
# Many processes at once on few CPUs. A read goes unredirected when no wait
# is possible: every CPU but the agent's would be held, or the agent sleeps
# on the process's memory lock (its other threads fork, exit or map memory
# and wait for a CPU meanwhile). Each such read must be counted by the
# kernel and the memory must end intact; how many there are depends on the
# machine's timing, and the benchmark reports it (make bench). The bounds
# here only catch an engine that stopped working.
note_agent() {
	echo "note: $1: agent answer max $(status_field "$ROOT" agent answer_us_max) us," \
		"claim max $(status_field "$ROOT" agent claim_us_max) us," \
		"refused in a stuck process $(status_field "$ROOT" agent stuck_refused)," \
		"no CPU to wait on $(status_field "$ROOT" kernel busy_no_cpu)"
}
c0=$(counters)
run_readers 4 "$work/loop" timeout 120 "$in_cgroup" "$T" "$reader" loop 2500
for i in 1 2 3 4; do
	check_eq "stress process $i: 2500 reads done" "2500" "$(good_reads "$work/loop$i" | cut -d' ' -f1)"
done
set -- $(good_reads "$work"/loop*)
check_counted "stress, 4 processes" 10000 "$2" "$c0"
check_waits "stress" "$c0"
c0=$(counters)
run_readers 8 "$work/tree" timeout 120 "$in_cgroup" "$T" "$reader" tree 40
n=$(cat "$work"/tree* | grep -c '^tree_broken=0$')
check_eq "8 concurrent process trees on $(nproc) CPUs: none broken" 8 "$n"
check_lacks "8 trees: every copy of the literals intact" "literals_intact=no" "$(cat "$work"/tree*)"
# The heaviest loads here (8 process trees at once, with threads, forks and
# execs, on 2 CPUs; processes mapping memory while they read) get 25%, not
# 1%: on a quiet host they miss none (bench (6), (7): 0 of 7776, 0 of
# 7200), but while the VM's host is busy the mapping load has missed 343
# of 7200 in 3 rounds, and 221 of 2400 in one (9%, with an older build as
# well); each miss counted by the kernel, which is what is checked besides.
check_counted "8 trees" "$(sum_key tree_reads "$work"/tree*)" "$(sum_key tree_missed "$work"/tree*)" "$c0" 25
check_waits "8 trees" "$c0"
note_agent "8 trees"
c0=$(counters)
run_readers 6 "$work/map" timeout 120 "$in_cgroup" "$T" "$reader" mapping 200
set -- $(good_reads "$work"/map*)
check_eq "6 processes mapping memory while they read: every read done" 2400 "$1"
check_lacks "and their literals intact" "literals_intact=no" "$(cat "$work"/map*)"
check_counted "6 mapping processes" "$1" "$2" "$c0" 25
check_waits "6 mapping processes" "$c0"
note_agent "6 mapping processes"
c0=$(counters)
set -- $(timeout 20 "$in_cgroup" "$T" "$reader" threads 4 200 | good_reads)
check_eq "after the stress, 4 threads x 200 opens: all answered" 800 "${1:-0}"
check_counted "after the stress, 4 threads x 200 opens" "${1:-0}" "${2:-1}" "$c0"
r=$("$nvm" status --root "$ROOT")
check_has "status prints the counters" "rewritten" "$r"

echo "== idle"
# Idle is no target process and no request for a second first: a reader of
# the stress still ending, or the service polling on after its last answer,
# is work. What is left is named, then killed.
left=$(find "$T" -name cgroup.procs -exec cat {} + 2>/dev/null | tr '\n' ' ')
if [ -n "$left" ]; then
	echo "note: left in the target after the stress: $(for p in $left; do printf '%s(%s) ' "$p" "$(cat /proc/$p/comm 2>/dev/null)"; done)"
	kill -KILL $left 2>/dev/null
fi
settled() {
	last=-1
	for _ in $(seq 1 60); do
		n=$(status_field "$ROOT" agent requests)
		[ "$n" = "$last" ] && return 0
		last=$n
		sleep 1
	done
	return 1
}
check "no request for a second after the stress" settled
q0=$(status_field "$ROOT" agent requests)
t0=$(awk '{print $14 + $15}' /proc/$agent_pid/stat)
sleep 5
t1=$(awk '{print $14 + $15}' /proc/$agent_pid/stat)
q1=$(status_field "$ROOT" agent requests)
check "agent idle for 5 s (requests $q0 -> $q1) used under 1% of a CPU ($((t1 - t0)) ticks)" \
	test "$q0" = "$q1" -a $((t1 - t0)) -le 5

echo "== a stopped agent is waited for, up to the limit"
# A live agent kept off the CPU (a stop here; a host's steal or a cgroup's
# budget elsewhere) is waited for: the read goes to the tree once it runs.
kill -STOP "$agent_pid"
start=$(date +%s%N)
timeout 20 "$in_cgroup" "$T" "$reader" loop 1 > "$work/stopped" 2>&1 &
rpid=$!
sleep 0.3
kill -CONT "$agent_pid"
wait $rpid
took=$((($(date +%s%N) - start) / 1000000))
check_eq "stopped for 0.3 s: the read waited, and was redirected" "good=1 of 1" "$(cat "$work/stopped")"
check "and it took the stop's time ($took ms)" test "$took" -ge 300
# Past the limit (a second) the syscall goes on, and says so.
c0=$(counters)
kill -STOP "$agent_pid"
timeout 20 "$in_cgroup" "$T" "$reader" loop 1 > "$work/stopped" 2>&1 &
rpid=$!
sleep 2
kill -CONT "$agent_pid"
wait $rpid
check_eq "stopped for 2 s: the read went on after the limit" "good=0 of 1" "$(cat "$work/stopped")"
check_counted "stopped for 2 s" 1 1 "$c0" 100
for _ in $(seq 1 30); do grep -q 'deadline passed: pid [0-9]* (reader' "$LOG" && break; sleep 0.1; done
check_has "the log names the task, the path and why" \
	'(reader, tgid ' "$(grep 'deadline passed: pid' "$LOG" | grep 'patch of "/proc/driver/nvidia/version": no answer within the limit, though the agent lives; the syscall went on')"

echo "== stop"
stop_agent
check_has "SIGTERM: the agent detaches and reports its counters" "detached; counters: matched" "$(cat "$LOG")"
check "the tree is removed" test ! -e "$ROOT"
check "the control socket is removed" test ! -e "$ROOT.sock"
r=$(timeout 20 "$in_cgroup" "$T" "$reader" literal)
check_has "after stop the target sees the host again" "gpus=0" "$r"

echo "== SIGKILL while readers loop"
check "agent starts again" start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT"
start_readers 3 "$work/kill" timeout 60 "$in_cgroup" "$T" "$reader" loop 20000
sleep 1
kill -KILL "$agent_pid"; wait "$agent_pid" 2>/dev/null; agent_pid=
s=$(date +%s)
wait_readers
for i in 1 2 3; do
	check_has "reader $i finished after SIGKILL" "good=" "$(cat "$work/kill$i")"
done
check "and none hung (finished in $(( $(date +%s) - s )) s)" test $(( $(date +%s) - s )) -lt 30
r=$(timeout 20 "$in_cgroup" "$T" "$reader" literal)
check_has "afterwards the target sees the host, as if nvmirage had never run" "gpus=0" "$r"
check "a new agent can take the same root and cgroup" start_agent "$LOG" --profile h100 --cgroup "$T" --root "$ROOT"
r=$(timeout 20 "$in_cgroup" "$T" "$reader" literal)
check_has "and serves its profile" "gpus=8" "$r"
stop_agent

echo "== SIGKILL while a syscall holds a rewritten path"
# The reader's open blocks on a FIFO in the tree, its path rewritten, until
# a writer comes; the agent is killed meanwhile. Its keeper puts the bytes
# back: nothing else can (the exit program goes with the agent).
check "agent starts again" start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT"
check "a keeper runs beside it" sh -c 'pgrep -x -P "$1" nvmirage-keep > /dev/null' _ "$agent_pid"
fifo=$ROOT/proc/driver/nvidia/nvmk-fifo
mkfifo "$fifo"
timeout 60 "$in_cgroup" "$T" "$reader" blocked /proc/driver/nvidia/nvmk-fifo > "$work/blocked" 2>&1 &
rpid=$!
for _ in $(seq 1 50); do grep -q opening= "$work/blocked" && break; sleep 0.1; done
sleep 0.3
check_eq "the reader waits inside its open, its path rewritten" "1 0" \
	"$(status_field "$ROOT" kernel rewritten) $(status_field "$ROOT" kernel restored)"
# The writer waits in the FIFO's directory: the keeper unmounts the tree
# once the agent is gone, and a working directory inside it outlives that.
(cd "$ROOT/proc/driver/nvidia" && for _ in $(seq 1 300); do [ -e "$work/go" ] && break; sleep 0.1; done &&
	echo hello > nvmk-fifo) &
wpid=$!
kill -KILL "$agent_pid"; wait "$agent_pid" 2>/dev/null; agent_pid=
for _ in $(seq 1 100); do pgrep -x nvmirage-keep > /dev/null || break; sleep 0.1; done
check "the keeper ends once it has looked" sh -c '! pgrep -x nvmirage-keep'
check_has "and says it put back the bytes" "put back the original bytes of 1 rewritten path it left" "$(cat "$LOG")"
check_has "then removed the tree the agent left mounted" "removed its tree at $ROOT" "$(cat "$LOG")"
check "it is gone" test ! -e "$ROOT"
touch "$work/go"
wait $wpid
wait $rpid
r=$(cat "$work/blocked")
check_has "the open went to the tree" "read=hello" "$r"
check_has "and the reader's path holds its original bytes" "buffer_intact=yes" "$r"
rm -f "$ROOT.sock"

echo "== a restore left to the janitor"
# The agent is stopped (SIGSTOP) while an open in the tree holds a
# rewritten path: the open returns, its restore is not answered within its
# wait, and the task goes on with the alias in its memory; the janitor puts
# the bytes back once the agent runs again. The reader checks its buffer
# only after that (late_restores counted).
check "agent starts again" start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT"
fifo=$ROOT/proc/driver/nvidia/nvmk-late
mkfifo "$fifo"
timeout 60 "$in_cgroup" "$T" "$reader" blocked /proc/driver/nvidia/nvmk-late "$work/late-go" \
	> "$work/late" 2>&1 &
rpid=$!
for _ in $(seq 1 50); do grep -q opening= "$work/late" && break; sleep 0.1; done
sleep 0.3
check_eq "the reader waits inside its open, its path rewritten" "1 0" \
	"$(status_field "$ROOT" kernel rewritten) $(status_field "$ROOT" kernel restored)"
l0=$(status_field "$ROOT" agent late_restores)
kill -STOP "$agent_pid"
# (A stop reaches each thread on its own: a polling one may answer first.)
all_stopped() { ! grep -L '^State:.*stopped' /proc/"$agent_pid"/task/*/status | grep -q .; }
for _ in $(seq 1 50); do all_stopped && break; sleep 0.1; done
check "every thread of the agent stopped" all_stopped
echo hello > "$fifo"
for _ in $(seq 1 100); do grep -q after_open= "$work/late" && break; sleep 0.1; done
check_has "with the agent stopped, the open returned with the alias still in the reader's memory" \
	"after_open=rewritten" "$(cat "$work/late")"
kill -CONT "$agent_pid"
for _ in $(seq 1 50); do [ "$(status_field "$ROOT" agent late_restores)" -gt "$l0" ] && break; sleep 0.1; done
check_eq "the janitor restored it once the agent ran again (late_restores)" $((l0 + 1)) \
	"$(status_field "$ROOT" agent late_restores)"
touch "$work/late-go"
wait $rpid
r=$(cat "$work/late")
check_has "the open went to the tree" "read=hello" "$r"
check_has "and the reader's path holds its original bytes" "buffer_intact=yes" "$r"
rm -f "$fifo"
stop_agent

echo "== no real-time budget in the agent's cpu cgroup"
# Services and containers often run in a cgroup v1 cpu group whose
# cpu.rt_runtime_us is 0, where SCHED_FIFO is refused: the agent moves its
# service threads to the hierarchy's root.
cpu1=$(findmnt -n -t cgroup -O cpu -o TARGET | head -n 1)
if [ -n "$cpu1" ] && [ -e "$cpu1/cpu.rt_runtime_us" ]; then
	NORT=$cpu1/nvmk-nort
	mkdir -p "$NORT" && echo 0 > "$NORT/cpu.rt_runtime_us"
	sh -c 'echo $$ > "$1/tasks" && shift && exec "$@"' _ "$NORT" \
		"$nvm" run --profile gb300 --cgroup "$T" --root "$ROOT" > "$LOGS/nort.log" 2>&1 &
	agent_pid=$!
	for _ in $(seq 1 100); do grep -q 'ready:' "$LOGS/nort.log" && break; sleep 0.1; done
	check_has "the agent says it moved its threads, and why" \
		"cpu cgroup /nvmk-nort has no real-time budget (cpu.rt_runtime_us 0): moved to the root of $cpu1" \
		"$(cat "$LOGS/nort.log")"
	check_eq "and they run SCHED_FIFO there" "$((2 * $(nproc)))" "$(fifo_threads "$agent_pid")"
	c0=$(counters)
	set -- $(timeout 20 "$in_cgroup" "$T" "$reader" threads 4 200 | good_reads)
	check_eq "and serve: 4 threads x 200 opens answered" 800 "${1:-0}"
	check_counted "4 threads x 200 opens" "${1:-0}" "${2:-1}" "$c0"
	stop_agent
	rmdir "$NORT"
else
	echo "note: no cgroup v1 cpu hierarchy with real-time budgets here: not checkable"
fi

echo "== an agent confined to one CPU"
# Its doorbells are on that CPU only: a reader on the other CPU must still
# find one to ring (the kernel side scans the agent's CPUs, not its own
# neighbours).
last=$(($(nproc) - 1))
taskset -c "$last" "$nvm" run --profile gb300 --cgroup "$T" --root "$ROOT" > "$LOGS/one-cpu.log" 2>&1 &
agent_pid=$!
for _ in $(seq 1 100); do grep -q 'ready:' "$LOGS/one-cpu.log" && break; sleep 0.1; done
check_has "the agent serves from 1 CPU" "patch service: 2 threads, 2 pinned" "$(cat "$LOGS/one-cpu.log")"
c0=$(counters)
set -- $(timeout 20 taskset -c 0 "$in_cgroup" "$T" "$reader" threads 2 200 | good_reads)
check_eq "a reader on CPU 0: 2 threads x 200 opens answered" 400 "${1:-0}"
check_counted "one-CPU agent, 2 threads x 200 opens" "${1:-0}" "${2:-1}" "$c0"
# A reader on the agent's only CPU would hold it while it waited: none of
# the agent's threads could run. It does not wait for one (no doorbell on
# another CPU to ring), or not past the short limit: not the second.
c0=$(counters)
start=$(date +%s%N)
set -- $(timeout 20 taskset -c "$last" "$in_cgroup" "$T" "$reader" loop 4 | good_reads)
took=$((($(date +%s%N) - start) / 1000000))
note_agent "reader on the agent's CPU"
check "a reader on the agent's only CPU: 4 reads in $took ms, not seconds" test "$took" -lt 1500
check_counted "reader on the agent's CPU" "${1:-0}" "${2:-1}" "$c0" 100
stop_agent

echo "== exec"
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nve -- "$reader" literal); rc=$?
check_eq "exec exits with the command's status" 0 $rc
check_has "exec's command sees 4 GPUs" "gpus=4" "$r"
timeout 60 "$nvm" -q exec --profile t4 --root /run/nve -- sh -c 'exit 7'; rc=$?
check_eq "exec passes on exit status 7" 7 $rc
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nve --no-driver-userspace -- \
	sh -c 'nvidia-smi -L; /usr/bin/python3 -c "import ctypes; ctypes.CDLL(\"libnvidia-ml.so.1\")"' 2>&1)
check_has "--no-driver-userspace: no nvidia-smi in the target" "nvidia-smi: not found" "$r"
check_has "and no NVML" "libnvidia-ml.so.1: cannot open shared object file" "$r"
r=$(timeout 60 "$nvm" exec --profile gb300 --root /run/nve --nvidia-smi /nonexistent/nvidia-smi -- true 2>&1); rc=$?
check_eq "--nvidia-smi naming no program: status 2" 2 $rc
check_has "and says why" "--nvidia-smi /nonexistent/nvidia-smi: No such file or directory" "$r"
check "exec removed its tree" test ! -e /run/nve
check "exec removed its cgroup" sh -c "! ls -d $cg2/nvmirage-exec-* 2>/dev/null"
check_node_clean
summary
