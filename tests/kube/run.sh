#!/bin/sh
# Kubernetes mode against a fake kubelet (real gRPC PodResources v1 on a
# unix socket) and a node laid out as the kubelet does it: pod cgroups for
# both cgroup drivers and all QoS classes, pod log directories, and
# "containers": processes in the pods' container cgroups, each in a mount
# namespace of its own with a read-only root and a fresh tmpfs on /dev.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
setup_suite kube "$out"
PY=/usr/bin/python3
ROOT=/dev/nvkt
LOG=$LOGS/agent.log
PORT=19417
work=$(mktemp -d)
R=$T/node            # the cgroup root the agent is given
PODLOGS=$work/pods
STATE=$work/pods.json
SOCK=$work/kubelet.sock
fake_pid=
ctr_pids=
cleanup() {
	stop_agent
	[ -z "$fake_pid" ] || kill "$fake_pid" 2>/dev/null
	[ -z "$ctr_pids" ] || kill $ctr_pids 2>/dev/null
	if [ -d "$R" ]; then
		find "$R" -depth -type d | while read -r d; do
			echo 1 > "$d/cgroup.kill" 2>/dev/null
		done
		sleep 0.2
		find "$R" -depth -type d -exec rmdir {} \; 2>/dev/null
	fi
	remove_cgroups "$T" "$O"
	rm -rf "$work"
}
on_exit cleanup

start_kubelet() {
	$PY tests/kube/fake_kubelet.py agent/kube/podresources.proto "$SOCK" "$STATE" > "$LOGS/kubelet.log" 2>&1 &
	fake_pid=$!
	for _ in $(seq 1 100); do [ -S "$SOCK" ] && return 0; sleep 0.1; done
	cat "$LOGS/kubelet.log"; return 1
}

# pods_json "NS/NAME:RESOURCE:N" ...: the pods the kubelet lists.
pods_json() {
	$PY - "$@" > "$STATE.tmp" <<'PYEOF'
import json, sys
pods = []
for spec in sys.argv[1:]:
    key, res, n = spec.split(":")
    ns, name = key.split("/")
    devs = [{"resource_name": res, "device_ids": [str(i) for i in range(int(n))]}] if int(n) else []
    pods.append({"namespace": ns, "name": name, "containers": [{"name": "main", "devices": devs}]})
print(json.dumps({"pods": pods}))
PYEOF
	mv "$STATE.tmp" "$STATE"
}

# new_pod NS NAME UID DIR: the kubelet's log directory and pod cgroup DIR
# (relative to R), with a container cgroup in it.
new_pod() {
	mkdir -p "$PODLOGS/$1_$2_$3" "$R/$4/cri-containerd-$3.scope"
}

# start_container DIR: a container in cgroup DIR: its own mount and PID
# namespaces, /proc of its own, a read-only root, a tmpfs on /dev. Prints
# the pid (on the host) of its first process, once that is set up.
start_container() {
	"$in_cgroup" "$1" unshare -m -p -f --kill-child --mount-proc --propagation private sh -c \
		'mount -t tmpfs -o mode=755 tmpfs /dev && mount -o remount,bind,ro / && exec sleep 600' \
		>> "$LOGS/containers.log" 2>&1 &
	u=$!
	for _ in $(seq 1 100); do
		c=$(pgrep -P "$u" -x sleep) && break
		sleep 0.05
	done
	echo "${c:-$u}"
}

# in_container PID CMD...: runs CMD in the container's cgroup and mount namespace.
in_container() {
	p=$1; shift
	cg=$(sed -n 's/^0:://p' /proc/"$p"/cgroup)
	timeout 20 "$in_cgroup" "$(cgroup2_root)$cg" nsenter -t "$p" -m "$@"
}

mounts_at() {
	nsenter -t "$1" -m -p findmnt -n -o TARGET "$2" 2>/dev/null | wc -l
}

wait_for() { # wait_for SECONDS CMD...
	n=$(($1 * 10)); shift
	for _ in $(seq 1 $n); do "$@" && return 0; sleep 0.1; done
	return 1
}

U1=1a2b3c4d-0000-4000-8000-000000000001
U2=1a2b3c4d-0000-4000-8000-000000000002
U3=1a2b3c4d-0000-4000-8000-000000000003
U4=1a2b3c4d-0000-4000-8000-000000000004
U5=1a2b3c4d-0000-4000-8000-000000000005
u_() { echo "$1" | tr - _; }
P1=kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$(u_ $U1).slice
P2=kubepods.slice/kubepods-pod$(u_ $U2).slice
P3=kubepods/besteffort/pod$U3
P4=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$(u_ $U4).slice
P5=kubepods/burstable/pod$U5

echo "== bad input"
r=$("$nvm" run --profile gb300 --kubernetes --cgroup-root /nonexistent 2>&1); rc=$?
check_eq "--cgroup-root that does not exist: status 2" 2 $rc
check_has "and says so" "--cgroup-root /nonexistent: not a directory" "$r"
r=$("$nvm" run --profile gb300 --cgroup "$T" --kubelet-socket /x 2>&1); rc=$?
check_eq "kubelet options without --kubernetes: status 2" 2 $rc
check_has "and says why" "the kubelet options need --kubernetes" "$r"
r=$("$nvm" run --profile gb300 --cgroup "$T" --listen localhost 2>&1); rc=$?
check_eq "--listen without a port: status 2" 2 $rc
check_has "and says what to give" "give HOST:PORT" "$r"
check "nothing was left behind" test ! -e "$ROOT"

echo "== a node with four pods, three of them holding GPUs"
mkdir -p "$PODLOGS"
new_pod slurm worker-0 $U1 "$P1"        # systemd driver, Burstable
new_pod slurm worker-1 $U2 "$P2"        # systemd driver, Guaranteed
new_pod batch trainer $U3 "$P3"         # cgroupfs driver, BestEffort
new_pod web frontend $U4 "$P4"          # no GPU
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 \
	batch/trainer:nvidia.com/gpu:1 web/frontend:nvidia.com/gpu:0
check "the fake kubelet serves PodResources v1" start_kubelet
c1=$(start_container "$R/$P1/cri-containerd-$U1.scope")
c4=$(start_container "$R/$P4/cri-containerd-$U4.scope")
ctr_pids="$c1 $c4"
sleep 0.3
check "agent starts with --kubernetes" start_agent "$LOG" --profile gb300 --kubernetes \
	--kubelet-socket "$SOCK" --cgroup-root "$R" --pod-logs "$PODLOGS" --root "$ROOT" \
	--poll-ms 500 --listen 127.0.0.1:$PORT
targets() { "$nvm" status --root "$ROOT" -j | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["targets"]))'; }
wait_for 5 sh -c "[ \"\$(\"$nvm\" status --root $ROOT -j | $PY -c 'import json,sys; print(len(json.load(sys.stdin)[\"targets\"]))')\" = 3 ]"
check_eq "the three GPU pods are targets" 3 "$(targets)"
check_has "log: the kubelet answered" "answers: 3 pods hold GPUs" "$(cat "$LOG")"
check_has "systemd driver, Burstable pod found" "pod slurm/worker-0 (uid $U1) holds 4 devices: target" "$(cat "$LOG")"
check_has "systemd driver, Guaranteed pod found" "pod slurm/worker-1 (uid $U2) holds 2 devices: target" "$(cat "$LOG")"
check_has "cgroupfs driver, BestEffort pod found" "pod batch/trainer (uid $U3) holds 1 devices: target" "$(cat "$LOG")"
check_lacks "the pod without GPUs is not" "web/frontend" "$(cat "$LOG")"

echo "== the tree inside containers"
wait_for 5 sh -c "[ \$(nsenter -t $c1 -m -p findmnt -n $ROOT | wc -l) = 1 ]"
check_eq "the GPU pod's container has the tree mounted at $ROOT" 1 "$(mounts_at $c1 $ROOT)"
check_has "read-only" "ro" "$(nsenter -t "$c1" -m -p findmnt -n -o OPTIONS "$ROOT")"
check_has "its root file system is read-only too" "Read-only file system" "$(nsenter -t "$c1" -m touch /probe 2>&1)"
r=$(in_container "$c1" "$reader" literal)
check_has "a process in the container sees the 4 GPUs" "gpus=4" "$r"
check_has "and reads the version" "version=NVRM version:" "$r"
check_has "writing into the tree there fails" "Read-only file system" "$(nsenter -t "$c1" -m touch $ROOT/x 2>&1)"
check "it runs in a PID namespace of its own" test "$(readlink /proc/$c1/ns/pid)" != "$(readlink /proc/self/ns/pid)"
check_eq "as its process 1, with a /proc of its own" sleep "$(nsenter -t "$c1" -m -p cat /proc/1/comm)"
check_eq "the pod without GPUs got no tree" 0 "$(mounts_at $c4 $ROOT)"
check_has "and its container sees no GPUs" "gpus=0" "$(in_container "$c4" "$reader" literal)"
check_has "the host (outside every pod) sees no GPUs" "gpus=0" "$(timeout 20 "$in_cgroup" "$O" "$reader" literal)"
sleep 1.2
check_eq "after more polls: still one mount (idempotent)" 1 "$(mounts_at $c1 $ROOT)"
check_eq "bound once per mount namespace" 1 "$(grep -c -F "in mount namespace $(readlink /proc/$c1/ns/mnt)" "$LOG")"

echo "== a restarted container"
kill "$c1"; wait "$c1" 2>/dev/null
c1=$(start_container "$R/$P1/cri-containerd-$U1.scope")
ctr_pids="$c1 $c4"
check "the new container gets the tree within 5 s" wait_for 5 sh -c "[ \$(nsenter -t $c1 -m -p findmnt -n $ROOT | wc -l) = 1 ]"
check_has "and sees the GPUs" "gpus=4" "$(in_container "$c1" "$reader" literal)"

echo "== pods come and go"
new_pod slurm worker-2 $U5 "$P5"
s=$(date +%s%N)
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 \
	batch/trainer:nvidia.com/gpu:1 web/frontend:nvidia.com/gpu:0 slurm/worker-2:nvidia.com/gpu:2
wait_for 5 sh -c "grep -q 'pod slurm/worker-2' $LOG"
ms=$((($(date +%s%N) - s) / 1000000))
check "a new GPU pod is a target within 3 s (took $ms ms)" test $ms -lt 3000
check_eq "four targets" 4 "$(targets)"
r=$(timeout 20 "$in_cgroup" "$R/$P5/cri-containerd-$U5.scope" "$reader" literal)
check_has "its processes see the GPUs" "gpus=4" "$r"
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 web/frontend:nvidia.com/gpu:0 \
	slurm/worker-2:nvidia.com/gpu:2
rmdir "$R/$P3/cri-containerd-$U3.scope" "$R/$P3"
wait_for 5 sh -c "grep -q 'pod batch/trainer.*no longer a target' $LOG"
check_has "a pod that ended is no longer a target" "pod batch/trainer" "$(grep 'no longer a target' "$LOG")"
check_eq "three targets" 3 "$(targets)"

echo "== health and metrics"
check_eq "/healthz answers 200" 200 "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/healthz)"
check_eq "/readyz answers 200 (programs attached)" 200 "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/readyz)"
m=$(curl -s http://127.0.0.1:$PORT/metrics)
check_has "/metrics: targets" "nvmirage_targets 3" "$m"
check_has "/metrics: kubelet up" "nvmirage_kubelet_up 1" "$m"
check_has "/metrics: deadline misses counted" "# TYPE nvmirage_deadline_misses_total counter" "$m"
n=$(echo "$m" | sed -n 's/^nvmirage_redirects_total //p')
check "/metrics: redirects counted ($n)" test "${n:-0}" -gt 0
check_eq "/metrics is Prometheus text (every sample line parses)" 0 \
	"$(echo "$m" | grep -v '^#' | grep -c -v -E '^nvmirage_[a-z_]+ [0-9]+$')"

echo "== the kubelet goes away, and comes back"
kill "$fake_pid"; wait "$fake_pid" 2>/dev/null; fake_pid=
wait_for 5 sh -c "grep -q 'keeping the 3 current targets' $LOG"
check_has "logged, not fatal" "keeping the 3 current targets, retrying" "$(cat "$LOG")"
check "the agent still runs" kill -0 "$agent_pid"
check_has "targets stay in force" "gpus=4" "$(in_container "$c1" "$reader" literal)"
check_has "/metrics: kubelet down" "nvmirage_kubelet_up 0" "$(curl -s http://127.0.0.1:$PORT/metrics)"
start_kubelet
wait_for 5 sh -c "[ \$(grep -c 'answers:' $LOG) = 2 ]"
check_eq "back: the agent says the kubelet answers again" 2 "$(grep -c 'answers:' "$LOG")"

echo "== stop"
stop_agent
check_has "SIGTERM: detached" "detached; counters" "$(cat "$LOG")"
check "the tree is removed" test ! -e "$ROOT"
check_has "the container sees no GPUs any more" "gpus=0" "$(in_container "$c1" "$reader" literal)"
summary
