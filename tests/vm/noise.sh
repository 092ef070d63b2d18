# Sourced by the guest's bench.sh (busybox sh): make bench's noise harness
# (tests/bench/noise.sh) on the guest's kernel, where the agent picks the
# in-kernel strategy, and with the assisted one for comparison. The same
# noise, its times scaled as the agent's are (--time-scale):
# - competing load: a busy loop on every CPU, outside the targets;
# - the agent's CPU time throttled in bursts: for 0.3 s every 1.5 s, its
#   threads get 10 ms in every 100 ms. The guest has cgroup v2 only, where
#   a cgroup's cpu.max holds back only the CFS threads: the real-time ones
#   (the patch service's) are held back by the kernel's own real-time
#   budget (sched_rt_runtime_us), which only the agent's threads use here;
# - steal-like stalls: the whole agent stopped (SIGSTOP) for 30 ms every
#   0.7 s.
# Uses bench.sh's start, stop, stat_of, causes_now, causes_since, in_cgroup,
# $agent, $T, $cg.

NOISE_CG=$cg/nvmb-agent
RT=/proc/sys/kernel
# us N: N microseconds, scaled.
us() { awk -v n="$1" -v s="$time_scale" 'BEGIN { printf "%d", n * s + 0.5 }'; }

# What of the throttling this kernel allows, said once.
noise_cpu=no noise_rt=no
if echo +cpu > "$cg/cgroup.subtree_control" 2>/dev/null && mkdir -p "$NOISE_CG" &&
	[ -w "$NOISE_CG/cpu.max" ]; then
	noise_cpu=yes
fi
# The real-time budget's period down to 100 ms (runtime first: it must
# never exceed the period), so that a 10 ms budget is a 100 ms cycle.
rt_period0=$(cat $RT/sched_rt_period_us) rt_runtime0=$(cat $RT/sched_rt_runtime_us)
if echo 90000 > $RT/sched_rt_runtime_us 2>/dev/null && echo 100000 > $RT/sched_rt_period_us 2>/dev/null; then
	noise_rt=yes
fi
echo "bench: under noise: a busy loop on each of $(nproc) CPUs; the agent throttled to 10 ms in 100 for $(us 300000) us every $(us 1500000) us (CFS through cpu.max: $noise_cpu; real-time through sched_rt_runtime_us: $noise_rt); stopped $(us 30000) us every $(us 700000) us"

noise_on() {
	noise_pids=
	for c in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$c" sh -c 'while :; do :; done' &
		noise_pids="$noise_pids $!"
	done
	[ $noise_cpu = yes ] && echo "$agent" > "$NOISE_CG/cgroup.procs"
	(
		while :; do
			usleep "$(us 1200000)"
			[ $noise_cpu = yes ] && echo "10000 100000" > "$NOISE_CG/cpu.max"
			[ $noise_rt = yes ] && echo 10000 > $RT/sched_rt_runtime_us
			usleep "$(us 300000)"
			[ $noise_cpu = yes ] && echo "max 100000" > "$NOISE_CG/cpu.max"
			[ $noise_rt = yes ] && echo 90000 > $RT/sched_rt_runtime_us
		done
	) &
	noise_pids="$noise_pids $!"
	(
		while kill -0 "$agent" 2>/dev/null; do
			usleep "$(us 700000)"
			kill -STOP "$agent" 2>/dev/null
			usleep "$(us 30000)"
			kill -CONT "$agent" 2>/dev/null
		done
	) &
	noise_pids="$noise_pids $!"
}

noise_off() {
	# shellcheck disable=SC2086
	kill $noise_pids 2>/dev/null
	# shellcheck disable=SC2086
	wait $noise_pids 2>/dev/null
	kill -CONT "$agent" 2>/dev/null
	[ $noise_cpu = yes ] && echo "max 100000" > "$NOISE_CG/cpu.max"
	[ $noise_rt = yes ] && echo 90000 > $RT/sched_rt_runtime_us
}

NL=${NL:-1000}
for strategy in auto assisted; do
	start --strategy $strategy --linger-us 500
	picked=$(sed -n 's/.*strategy: \([a-z-]*\).*/\1/p' /tmp/agent.log | head -n 1)
	c0=$(causes_now)
	noise_on
	r=$(in_cgroup "$T" /bench latency "$NL" 2000 /proc/driver/nvidia/version)
	noise_off
	echo "bench:   (3n) $strategy (${picked:-?}), $NL reads 2 ms apart: $r; the kernel's misses: $(causes_since "$c0")"
	stop
	for where in literal data; do
		arg=; [ $where = data ] && arg=data
		start --strategy $strategy
		c0=$(causes_now) w0=$(stat_of ik_write_faults)
		noise_on
		in_cgroup "$T" /reader tree 10 $arg > /tmp/tree.1 &
		t1=$!
		in_cgroup "$T" /reader tree 10 $arg > /tmp/tree.2 &
		t2=$!
		in_cgroup "$T" /reader mapping 100 $arg > /tmp/map.1 &
		m1=$!
		in_cgroup "$T" /reader mapping 100 $arg > /tmp/map.2 &
		m2=$!
		wait $t1 $t2 $m1 $m2
		noise_off
		trees=$(cat /tmp/tree.1 /tmp/tree.2)
		sum() { echo "$trees" | sed -n "s/^$1=//p" | awk '{s += $1} END {print s + 0}'; }
		maps=$(cat /tmp/map.1 /tmp/map.2 | sed -n 's/^good=\([0-9]*\) of \([0-9]*\)$/\1 \2/p' | awk '{g += $1; n += $2} END {print n - g, n}')
		echo "bench:   (6n) $strategy, 2 trees of threads, forks and execs ($where): $(sum tree_missed) of $(sum tree_reads) unredirected, $(sum tree_broken) broken;" \
			"(7n) 2 processes mapping memory: ${maps% *} of ${maps#* }; the kernel's misses: $(causes_since "$c0");" \
			"$(($(stat_of ik_write_faults) - w0)) paths the kernel could not write, written by the agent"
		# What broke, in the readers' words (a child's literals not
		# back, a child that died).
		grep -h 'literals_intact=no\|literals_back_ms\|died' /tmp/tree.1 /tmp/tree.2 /tmp/map.1 /tmp/map.2 |
			head -n 4 | sed 's/^/bench:     /'
		stop
	done
done
[ $noise_rt = yes ] && echo "$rt_period0" > $RT/sched_rt_period_us && echo "$rt_runtime0" > $RT/sched_rt_runtime_us
rmdir "$NOISE_CG" 2>/dev/null
