#!/bin/sh
# The kernel tests that run inside the QEMU guest (busybox sh, as /init's
# child): the engine on the guest's kernel, with real processes in real
# cgroups. Prints ok:/FAIL: lines and "N passed, N failed" like the host
# stages; the host script relays them.
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
check_has() { case "$3" in *"$2"*) ok "$1" ;; *) bad "$1: [$2] not in [$3]" ;; esac; }
# in_cgroup DIR CMD...: CMD as a process of cgroup DIR
in_cgroup() { d=$1; shift; sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$d" "$@"; }

cg=/sys/fs/cgroup
T=$cg/nvm-target O=$cg/nvm-other
mkdir -p "$T" "$O"
echo "note: kernel $(uname -r), lockdown $(cat /sys/kernel/security/lockdown 2>/dev/null), lsm $(cat /sys/kernel/security/lsm 2>/dev/null)"

p=$(/nvmirage probe 2>&1)
echo "$p"
check_has "probe: BTF found" "btf" "$p"
check_has "probe: no lockdown on this kernel" "lockdown               none" "$p"
check_has "probe: tp_btf loads and attaches" "tp_btf                 yes" "$p"
check_has "probe: bpf_probe_write_user loads without lockdown" "bpf_probe_write_user   yes" "$p"
check_has "probe: chosen strategy" "chosen: assisted" "$p"

/nvmirage run --profile /gb300.yaml --cgroup "$T" --root /run/nvm > /tmp/agent.log 2>&1 &
agent=$!
for _ in $(seq 1 600); do
	grep -q 'ready:' /tmp/agent.log && break
	kill -0 $agent 2>/dev/null || break
	sleep 0.2
done
if grep -q 'ready:' /tmp/agent.log; then ok "agent ready"; else bad "agent ready"; cat /tmp/agent.log; fi

r=$(in_cgroup "$T" /reader literal)
check_has "target lists the profile's 4 GPUs" "gpus=4" "$r"
check_has "target reads the profile's driver version" "version=NVRM version: NVIDIA UNIX" "$r"
check_has "target: literals intact" "literals_intact=yes" "$r"
r=$(in_cgroup "$O" /reader literal)
check_has "sibling cgroup sees no GPUs" "gpus=0" "$r"
r=$(in_cgroup "$T" /reader raw)
check_has "raw syscall(SYS_openat) in the target" "raw=NVRM version" "$r"
# Concurrent readers: under emulation timing varies widely, so as on the
# host every miss must be counted by the kernel, and most reads redirected.
counted() { /nvmirage status --root /run/nvm | awk '$1 ~ /^(slot_busy|deadline_misses|agent_failed)$/ {s += $2} END {print s + 0}'; }
check_counted() { # NAME READS MISSED COUNTED-BEFORE
	c=$(($(counted) - $4))
	if [ "$3" -le "$c" ] && [ $(($3 * 2)) -le "$2" ]; then ok "$1: $3 of $2 missed, every one counted"
	else bad "$1: $3 of $2 missed, $c counted"; fi
}
c0=$(counted)
r=$(in_cgroup "$T" /reader threads 4 50)
good=$(echo "$r" | sed -n 's/^good=\([0-9]*\) of 200$/\1/p')
check_counted "4 threads x 50 opens" 200 $((200 - ${good:-0})) "$c0"
c0=$(counted)
r=$(in_cgroup "$T" /reader tree 10)
check_has "threads, forks, exec: none broken" "tree_broken=0" "$r"
check_has "threads, forks, exec: literals intact" "tree_reads=" "$r"
check_counted "threads, forks, exec" "$(echo "$r" | sed -n 's/^tree_reads=//p')" "$(echo "$r" | sed -n 's/^tree_missed=//p')" "$c0"
/nvmirage status --root /run/nvm

kill -TERM $agent
wait $agent
check_has "SIGTERM: detached" "detached; counters" "$(cat /tmp/agent.log)"
r=$(in_cgroup "$T" /reader literal)
check_has "after the agent, the target sees no GPUs" "gpus=0" "$r"
[ $fail = 0 ] || cat /tmp/agent.log
echo "$pass passed, $fail failed"
