# The noise harness of make bench (sourced by run.sh): figures (3), (6) and
# (7) again while the node is busy, with the unredirected reads counted by
# cause, as the kernel side counts them. The noise:
# - competing load: a busy loop on every CPU, outside the targets, at the
#   readers' priority;
# - the agent's CPU time throttled in bursts: its threads in a cpu cgroup of
#   their own (v1, where real-time groups have budgets) whose real-time and
#   CFS budgets drop to 10 ms in every 100 ms for 300 ms, every 1.5 s;
# - steal-like stalls: the whole agent stopped (SIGSTOP) for 30 ms, every
#   0.7 s, as a virtual machine's host takes its CPU away.
# Uses run.sh's start_agent, status_field, run_readers, good_reads and
# sum_key, $in_cgroup, $T, $ROOT, $LOG, $bench, $reader.

NOISE_CG=/sys/fs/cgroup/cpu/nvmb-agent

# noise_on: load and throttling for the running agent ($agent_pid).
noise_on() {
	noise_pids=
	for c in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$c" sh -c 'while :; do :; done' &
		noise_pids="$noise_pids $!"
	done
	if [ -w /sys/fs/cgroup/cpu/cgroup.procs ] && mkdir -p "$NOISE_CG" 2>/dev/null; then
		echo 100000 > "$NOISE_CG/cpu.rt_period_us"
		echo 90000 > "$NOISE_CG/cpu.rt_runtime_us" 2>/dev/null
		for t in /proc/"$agent_pid"/task/*; do
			echo "${t##*/}" > "$NOISE_CG/tasks" 2>/dev/null
		done
		(
			while :; do
				sleep 1.2
				echo 10000 > "$NOISE_CG/cpu.rt_runtime_us" 2>/dev/null
				echo 10000 > "$NOISE_CG/cpu.cfs_quota_us"
				sleep 0.3
				echo 90000 > "$NOISE_CG/cpu.rt_runtime_us" 2>/dev/null
				echo -1 > "$NOISE_CG/cpu.cfs_quota_us"
			done
		) &
		noise_pids="$noise_pids $!"
	fi
	(
		while kill -0 "$agent_pid" 2>/dev/null; do
			sleep 0.7
			kill -STOP "$agent_pid" 2>/dev/null
			sleep 0.03
			kill -CONT "$agent_pid" 2>/dev/null
		done
	) &
	noise_pids="$noise_pids $!"
}

noise_off() {
	# shellcheck disable=SC2086
	kill $noise_pids 2>/dev/null
	# shellcheck disable=SC2086
	wait $noise_pids 2>/dev/null
	kill -CONT "$agent_pid" 2>/dev/null
	echo -1 > "$NOISE_CG/cpu.cfs_quota_us" 2>/dev/null
	echo 90000 > "$NOISE_CG/cpu.rt_runtime_us" 2>/dev/null
}

# The kernel side's miss counters, as "cause=N ..." (events: reads, and the
# restores and fork repairs behind them).
CAUSES="deadline_misses cpus_held answer_limit agent_gone busy_no_cpu busy_no_slot busy_no_bell busy_gave_way agent_failed"
causes_now() {
	"$nvm" status --root "$ROOT" -j | python3 -c '
import json, sys
k = json.load(sys.stdin)["kernel"]
print(" ".join("%s=%d" % (c, k.get(c, 0)) for c in sys.argv[1:]))' $CAUSES
}
# add_causes "a=1 b=2" "a=3 b=0": "a=4 b=2"
add_causes() {
	python3 -c '
import sys
tot = {}
for arg in sys.argv[1:]:
    for kv in arg.split():
        k, v = kv.split("=")
        tot[k] = tot.get(k, 0) + int(v)
print(" ".join("%s=%d" % kv for kv in tot.items()))' "$@"
}

echo "under noise: a busy loop on each of $(nproc) CPUs; the agent throttled to 10 ms in 100 (real-time and CFS) for 0.3 s every 1.5 s; stopped 30 ms every 0.7 s"
NL=${NVM_BENCH_NOISE_LAT:-3000}
start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT" --linger-us 500 || exit 1
noise_on
r=$("$in_cgroup" "$T" "$bench" latency "$NL" 2000 /proc/driver/nvidia/version)
noise_off
echo "  (3n) redirected reads, $NL, 2 ms apart:  $r"
echo "       by cause: $(causes_now)"
echo "       longest answer $(status_field "$ROOT" agent answer_us_max) us, longest wait to be claimed $(status_field "$ROOT" agent claim_us_max) us"
stop_agent

# noisy_load NAME COUNT ARGS...: as run.sh's load, under the noise.
noisy_load() {
	name=$1 count=$2; shift 2
	args=$* reads=0 missed=0 causes=
	for _ in $(seq 1 "$K"); do
		start_agent "$LOG" --profile gb300 --cgroup "$T" --root "$ROOT" || exit 1
		noise_on
		# shellcheck disable=SC2086
		run_readers "$count" "$LOG." "$in_cgroup" "$T" "$reader" $args
		noise_off
		set -- $(good_reads "$LOG".[0-9]*)
		reads=$((reads + $1 + $(sum_key tree_reads "$LOG".[0-9]*)))
		missed=$((missed + $2 + $(sum_key tree_missed "$LOG".[0-9]*)))
		causes=$(add_causes "$causes" "$(causes_now)")
		stop_agent
		rm -f "$LOG".[0-9]*
	done
	echo "  $name $missed of $reads unredirected"
	echo "       by cause: $causes"
}
noisy_load "(6n) 8 process trees:        " 8 tree 40
noisy_load "(7n) 6 processes mapping memory:" 6 mapping 200
rmdir "$NOISE_CG" 2>/dev/null
