#!/bin/sh
# make bench: figures, measured in one run on this machine, as ratios to a
# baseline measured in the same run. Needs root.
set -u
out=${1:-build}
. tests/lib/agent.sh
nvm=$(pwd)/$out/nvmirage
bench=$(pwd)/$out/helpers/bench
shim=$(pwd)/$out/helpers/libshim.so
N=${NVM_BENCH_OPS:-500000}
L=${NVM_BENCH_LAT:-10000}
cg2=$(cgroup2_root)
T=$cg2/nvmb-target
ROOT=/run/nvb
LOG=/tmp/nvmb-agent.log
mkdir -p "$T"
on_exit 'stop_agent; rmdir "$T" 2>/dev/null'
pin() { taskset -c 0 "$@"; }
ns() { sed -n 's/ns_per_op=//p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

reader=$(pwd)/$out/helpers/reader
K=${NVM_BENCH_LOAD_ROUNDS:-3}
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
least() { tr ' ' '\n' | grep . | sort -n | head -n 1; }
R=${NVM_BENCH_ROUNDS:-5}
# NVM_BENCH_ONLY=targets, pods or noise: that part alone (targets.sh,
# pods.sh, noise.sh).
if [ -n "${NVM_BENCH_ONLY:-}" ]; then
	. tests/bench/"$NVM_BENCH_ONLY".sh
	exit 0
fi
echo "openat+close of /etc/hostname, $N times, pinned to CPU 0; $R rounds alternating agent off/on"
echo "(ratios of the fastest round of each, which other load on the machine disturbs least; medians after)"
# The floors: an empty tp_btf/sys_enter program (floor.bpf.c), which is all
# any tp_btf entry point can cost at the least, and the same with an empty
# sys_exit program, the pair the engine attaches (with_floor exit).
floor=$(pwd)/$out/helpers/floor
with_floor() {
	"$floor" $1 > "$LOG.floor" 2>&1 &
	fpid=$!
	for _ in $(seq 1 100); do grep -q attached "$LOG.floor" && break; sleep 0.05; done
	grep -q attached "$LOG.floor" || { cat "$LOG.floor"; exit 1; }
	shift
	"$@"
	kill -TERM $fpid; wait $fpid
}
off= offt= on= ont= fl= fx= offu= ontu=
# (2') a path where the driver's user space rules start (/usr/lib): the
# matcher walks it to its third component before it leaves.
upath=/usr/lib/os-release
for _ in $(seq 1 "$R"); do
	off="$off $(pin "$bench" openclose "$N" /etc/hostname | ns)"
	offt="$offt $(pin "$in_cgroup" "$T" "$bench" openclose "$N" /etc/hostname | ns)"
	offu="$offu $(pin "$in_cgroup" "$T" "$bench" openclose "$N" $upath | ns)"
	fl="$fl $(with_floor enter pin "$bench" openclose "$N" /etc/hostname | ns)"
	fx="$fx $(with_floor exit pin "$bench" openclose "$N" /etc/hostname | ns)"
	start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT" || exit 1
	on="$on $(pin "$bench" openclose "$N" /etc/hostname | ns)"
	ont="$ont $(pin "$in_cgroup" "$T" "$bench" openclose "$N" /etc/hostname | ns)"
	ontu="$ontu $(pin "$in_cgroup" "$T" "$bench" openclose "$N" $upath | ns)"
	stop_agent
done
for f in least median; do
	eval "b=\$(echo \"\$off\" | $f); bt=\$(echo \"\$offt\" | $f); n=\$(echo \"\$on\" | $f); t=\$(echo \"\$ont\" | $f); e=\$(echo \"\$fl\" | $f); x=\$(echo \"\$fx\" | $f)"
	eval "r1_$f=\$(ratio $n $b); r2_$f=\$(ratio $t $bt); r0_$f=\$(ratio $e $b); rx_$f=\$(ratio $x $b); x_$f=$x; n_$f=$n; t_$f=$t; b_$f=$b; bt_$f=$bt; e_$f=$e"
	eval "bu=\$(echo \"\$offu\" | $f); tu=\$(echo \"\$ontu\" | $f)"
	eval "r2u_$f=\$(ratio $tu $bu); bu_$f=$bu; tu_$f=$tu"
done
echo "  no agent:                     $b_least ns  (rounds:$off; in the target cgroup:$offt)"
echo "  empty tp_btf program (floor): $e_least ns  ratio $r0_least (median $r0_median)   (rounds:$fl)"
echo "  empty enter+exit pair (floor): $x_least ns  ratio $rx_least (median $rx_median)   (rounds:$fx)"
echo "  (1) agent, non-target:        $n_least ns  ratio $r1_least (median $r1_median)   target <= 1.08  (rounds:$on)"
echo "  (2) agent, target, no match:  $t_least ns  ratio $r2_least (median $r2_median)   target <= 1.15  (rounds:$ont)"
echo "  (2') the same, $upath:  $tu_least vs $bu_least ns  ratio $r2u_least (median $r2u_median)   (rounds:$ontu; off:$offu)"

echo "redirected open+read+close of /proc/driver/nvidia/version, $L times, 2 ms apart (agent asleep in between)"
# The floor: what waking a real-time thread asleep on another CPU costs by
# itself here; an agent asleep pays it on every first request.
echo "  waking a sleeping thread on another CPU (floor): $("$bench" wake "$L" 2000)"
start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT" --linger-us 500 || exit 1
r=$("$in_cgroup" "$T" "$bench" latency "$L" 2000 /proc/driver/nvidia/version)
echo "  (3) nvmirage:                 $r   target median <= 60, p99 <= 1000"
echo "      deadline misses: $(status_field "$ROOT" kernel deadline_misses), busy: $(status_field "$ROOT" kernel slot_busy)"
req=$(status_field "$ROOT" agent requests); claimed=$(status_field "$ROOT" agent claim_us_total)
echo "      waiting to be claimed: mean $((claimed / (req ? req : 1))) us over $req requests (patches and restores), max $(status_field "$ROOT" agent claim_us_max) us"
stop_agent
"$nvm" -q render --profile gb300 --root "$ROOT"
r=$(NVM_SHIM_ROOT=$ROOT LD_PRELOAD=$shim "$bench" latency "$L" 2000 /proc/driver/nvidia/version)
echo "  (4) LD_PRELOAD shim:          $r"
rm -rf "$ROOT"

secs=${NVM_BENCH_IDLE:-60}
echo "agent CPU time over $secs s idle"
start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT" || exit 1
t0=$(awk '{print $14 + $15}' /proc/$agent_pid/stat)
sleep "$secs"
t1=$(awk '{print $14 + $15}' /proc/$agent_pid/stat)
echo "  (5) $((t1 - t0)) ticks of $(getconf CLK_TCK)/s = $(awk -v t=$((t1 - t0)) -v h=$(getconf CLK_TCK) -v s=$secs 'BEGIN { printf "%.3f%%", 100 * t / h / s }') of one CPU"
stop_agent


echo "reads that went unredirected under load on $(nproc) CPUs, $K rounds each (the kernel counts every one)"
# load NAME COUNT ARGS...: COUNT readers at once, K rounds; prints missed of reads.
load() {
	name=$1 count=$2; shift 2
	args=$* reads=0 missed=0 stall=0
	for _ in $(seq 1 "$K"); do
		start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT" || exit 1
		# shellcheck disable=SC2086
		run_readers "$count" "$LOG." "$in_cgroup" "$T" "$reader" $args
		# "good=G of N" (mapping) or tree_reads= and tree_missed= lines
		set -- $(good_reads "$LOG".[0-9]*)
		reads=$((reads + $1 + $(sum_key tree_reads "$LOG".[0-9]*)))
		missed=$((missed + $2 + $(sum_key tree_missed "$LOG".[0-9]*)))
		s=$(status_field "$ROOT" agent answer_us_max)
		[ "$s" -gt "$stall" ] && stall=$s
		stop_agent
		rm -f "$LOG".[0-9]*
	done
	echo "  $name $missed of $reads ($(awk -v m=$missed -v r=$reads 'BEGIN { printf "%.2f%%", r ? 100 * m / r : 0 }')); longest agent answer $stall us"
}
load "(6) 8 process trees (threads, forks, execs):   " 8 tree 40
load "(7) 6 processes mapping memory while they read:" 6 mapping 200
. tests/bench/targets.sh
. tests/bench/pods.sh
. tests/bench/noise.sh
