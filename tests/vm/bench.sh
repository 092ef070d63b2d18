#!/bin/sh
# make vmbench, inside the guest (busybox sh): the engine's figures on the
# guest's kernel, each a ratio to a baseline measured in the same run, since
# emulation (TCG) is tens of times slower than hardware.
#   (1) openat+close of a non-target process, agent running vs not, with
#       fentry and tp_btf entry points, in-kernel and assisted;
#   (3) redirected open latency, in-kernel and assisted rewrite, and the
#       open of the rendered file itself (the redirect's own baseline);
#   loads: how many reads concurrent readers (threads, forks, execs) leave
#       unredirected here, each counted by the kernel, and fork repairs
#       missed: figures of the guest's timing, not checks;
#   (3n) (6n) (7n): make bench's noise harness on the guest (noise.sh).
N=${N:-20000} L=${L:-2000}
. /timescale.sh
cg=/sys/fs/cgroup
T=$cg/nvm-target
mkdir -p "$T"
in_cgroup() { d=$1; shift; sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$d" "$@"; }
ns() { sed -n 's/ns_per_op=//p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
least() { tr ' ' '\n' | grep . | sort -n | head -n 1; }
median_of() { sed -n 's/^median_us=\([0-9.]*\) .*/\1/p'; }

start() {
	/nvmirage run --profile /gb300.yaml --cgroup "$T" --root /run/nvm \
		--time-scale "$time_scale" "$@" > /tmp/agent.log 2>&1 &
	agent=$!
	for _ in $(seq 1 600); do
		grep -q 'ready:' /tmp/agent.log && return 0
		kill -0 $agent 2>/dev/null || break
		sleep 0.2
	done
	echo "bench: the agent did not start:"; cat /tmp/agent.log
	exit 1
}
stop() { kill -TERM $agent; wait $agent; }
pin() { taskset -c 0 "$@"; }
stat_of() {
	/nvmirage status --root /run/nvm | awk -v want=" $* " 'index(want, " " $1 " ") {s += $2} END {print s + 0}'
}
# The kernel's misses by cause (docs/counters.md): of reads, and of the
# restores and fork repairs behind them (which the agent finishes late).
CAUSES="cpus_held answer_limit agent_gone deadline_misses busy_no_cpu busy_no_slot busy_no_bell busy_gave_way agent_failed"
causes_now() { for c in $CAUSES; do printf '%s ' "$(stat_of "$c")"; done; }
# causes_since C0: "cause=N ..." since causes_now gave C0, the causes not 0
# (deadline_misses less the three causes it includes, as "deadline").
causes_since() {
	set -- $1 $(causes_now)
	n=$(echo $CAUSES | wc -w) out= i=1 held=0
	for c in $CAUSES; do
		eval "d=\$((\${$((i + n))} - \${$i}))"
		case $c in
		cpus_held | answer_limit | agent_gone) held=$((held + d)) ;;
		deadline_misses) c=deadline d=$((d - held)) ;;
		esac
		[ "$d" != 0 ] && out="$out $c=$d"
		i=$((i + 1))
	done
	echo "${out# }"
}

# (1), (3) and the loads (figures.sh), then the noise harness (noise.sh);
# with nvm.noise_only on the kernel command line (NVM_VM_APPEND), the
# noise harness alone.
grep -q nvm.noise_only /proc/cmdline || . /figures.sh
. /noise.sh
echo "bench: done"
