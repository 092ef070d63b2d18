#!/bin/sh
# make vmbench, inside the guest (busybox sh): the engine's figures on the
# guest's kernel, each a ratio to a baseline measured in the same run, since
# emulation (TCG) is tens of times slower than hardware.
#   (1) openat+close of a non-target process, agent running vs not, for
#       each strategy the agent can use here;
#   (3) redirected open latency, in-kernel and assisted rewrite, and the
#       open of the rendered file itself (the redirect's own baseline).
N=${N:-20000} L=${L:-2000}
cg=/sys/fs/cgroup
T=$cg/nvm-target
mkdir -p "$T"
in_cgroup() { d=$1; shift; sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$d" "$@"; }
ns() { sed -n 's/ns_per_op=//p'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
least() { tr ' ' '\n' | grep . | sort -n | head -n 1; }
median_of() { sed -n 's/^median_us=\([0-9.]*\) .*/\1/p'; }

start() {
	/nvmirage run --profile /gb300.yaml --cgroup "$T" --root /run/nvm "$@" > /tmp/agent.log 2>&1 &
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

echo "bench: kernel $(uname -r) ($(uname -m)), TCG; openat+close of /init, $N times, pinned to CPU 0, 3 rounds, fastest"
off= ik= as=
for _ in 1 2 3; do
	off="$off $(pin /bench openclose "$N" /init | ns)"
	start
	ik="$ik $(pin /bench openclose "$N" /init | ns)"
	stop
	start --strategy assisted
	as="$as $(pin /bench openclose "$N" /init | ns)"
	stop
done
b=$(echo "$off" | least) i=$(echo "$ik" | least) a=$(echo "$as" | least)
echo "bench:   no agent:                          $b ns"
echo "bench:   (1) non-target, in-kernel (tp_btf):  $i ns  ratio $(ratio "$i" "$b")"
echo "bench:   (1) non-target, assisted (tp_btf):   $a ns  ratio $(ratio "$a" "$b")"

echo "bench: open+read+close, $L times, 2 ms apart, in the target cgroup"
start
base=$(in_cgroup "$T" /bench latency "$L" 2000 /run/nvm/proc/driver/nvidia/version)
rik=$(in_cgroup "$T" /bench latency "$L" 2000 /proc/driver/nvidia/version)
ikw=$(/nvmirage status --root /run/nvm | awk '$1 == "ik_rewritten" {print $2}')
stop
start --strategy assisted
ras=$(in_cgroup "$T" /bench latency "$L" 2000 /proc/driver/nvidia/version)
stop
echo "bench:   the rendered file itself:        $base"
echo "bench:   (3) in-kernel redirect:          $rik  ratio $(ratio "$(echo "$rik" | median_of)" "$(echo "$base" | median_of)") to the file itself ($ikw rewritten in the kernel)"
echo "bench:   (3) assisted redirect:           $ras  ratio $(ratio "$(echo "$ras" | median_of)" "$(echo "$base" | median_of)")"
echo "bench: done"
