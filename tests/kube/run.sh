#!/bin/sh
# Kubernetes mode, as a node runs it. The agent runs from its image (built
# here with `make image`, FROM a debootstrapped base) the way the chart runs
# it: podman, host PID and network, the chart's capabilities instead of
# privileged, the host's cgroup tree, bpffs, BTF, the kubelet's
# pod-resources socket and pod log directory mounted. The kubelet is a fake
# (real gRPC PodResources v1 on a unix socket). The pods' containers are
# real OCI containers (runc, a read-only Debian root, their own mount, PID,
# IPC and UTS namespaces, a tmpfs on /dev) in the pod cgroups of each
# kubelet layout: Kind's (kubelet.slice/kubelet-kubepods...), kubeadm's with
# the systemd driver, and the cgroupfs driver's (kubeadm, k3s), pods of
# every QoS class, and pods that hold no GPU. Needs root.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
. tests/lib/containers.sh
setup_suite kube "$out"
containers_init "$out"
PY=/usr/bin/python3
AGENT=nvmkube-agent
ROOT=/dev/nvm          # the chart's treeRoot
LOG=$LOGS/agent.log
PORT=19417
work=$(mktemp -d)
R=$T/node              # the node's cgroup root (the chart's cgroupRoot)
PODLOGS=$work/pods
STATE=$work/pods.json
SOCKDIR=$work/pod-resources
SOCK=$SOCKDIR/kubelet.sock
fake_pid=
logs_pid=
ctrs=
cleanup() {
	podman rm -f -t 0 "$AGENT" > /dev/null 2>&1
	[ -z "$logs_pid" ] || kill "$logs_pid" 2>/dev/null
	[ -z "$fake_pid" ] || kill "$fake_pid" 2>/dev/null
	runc_remove $ctrs
	cgroup_trees_remove "${R#"$cg2"}"
	remove_cgroups "$T" "$O"
	rm -rf "$work"
}
on_exit cleanup
mkdir -p "$PODLOGS" "$SOCKDIR"

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

# The node's layouts. u_: a UID as the systemd driver writes it.
u_() { echo "$1" | tr - _; }
kind_pod() { # QOS UID: Kind (cgroupRoot /kubelet, systemd driver)
	if [ "$1" = guaranteed ]; then echo "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod$(u_ "$2").slice"
	else echo "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-$1.slice/kubelet-kubepods-$1-pod$(u_ "$2").slice"; fi
}
kubeadm_pod() { # QOS UID: kubeadm with the systemd driver
	echo "kubepods.slice/kubepods-$1.slice/kubepods-$1-pod$(u_ "$2").slice"
}
cgroupfs_pod() { # QOS UID: the cgroupfs driver (kubeadm, k3s)
	echo "kubepods/$1/pod$2"
}

# run_pod NAME NS PODNAME UID DIR: the kubelet's log directory for the pod,
# and its container NAME (runc) in cgroup DIR/cri-containerd-NAME.scope
# under the node's root, running sleep as its first process.
run_pod() {
	mkdir -p "$PODLOGS/$2_$3_$4"
	mkdir -p "$R/$5"
	runc_start "$1" "${R#"$cg2"}/$5/cri-containerd-$1.scope" "$rootfs" \
		bind="$(pwd)/$out/helpers:/opt/nvm" hostname="$3" -- sleep 600 ||
		{ cat "$CDIR/bundles/$1.log"; return 1; }
	case " $ctrs " in *" $1 "*) ;; *) ctrs="$ctrs $1" ;; esac
}

# in_pod NAME CMD...: CMD in the pod's container, as kubectl exec runs it.
in_pod() { id=$1; shift; runc_exec "$id" "$@" 2>&1; }

mounts_at() { # PID PATH: how many mounts the container of PID has at PATH
	nsenter -t "$1" -m -p findmnt -n -o TARGET "$2" 2>/dev/null | wc -l
}

wait_for() { # wait_for SECONDS CMD...
	n=$(($1 * 10)); shift
	for _ in $(seq 1 $n); do "$@" && return 0; sleep 0.1; done
	return 1
}

status_j() { podman exec "$AGENT" nvmirage status --root "$ROOT" -j; }
targets() { status_j | $PY -c 'import json,sys; print(len(json.load(sys.stdin)["targets"]))'; }
has_targets() { [ "$(targets 2>/dev/null)" = "$1" ]; }
log() { cat "$LOG"; }

echo "== the image"
rootfs=$(debian_rootfs bookworm)
check "a debootstrapped Debian bookworm base" test -n "$rootfs"
check "make image builds $IMAGE with podman, from that base tagged as the Containerfile's FROM" \
	nvmirage_image "$IMAGE"
check_has "the image's nvmirage is this version" "nvmirage $(echo "$IMAGE" | sed 's/.*://')" \
	"$(podman run --rm --network none "$IMAGE" version 2>&1)"
check "and carries the profiles and nvmirage's NVML" \
	podman run --rm --network none --entrypoint sh "$IMAGE" -c \
	'test -e /usr/share/nvmirage/profiles/gb300.yaml && test -e /usr/lib/nvmirage/libnvidia-ml.so.1'
check_eq "and no compiler (a slim runtime stage)" "none" \
	"$(podman run --rm --network none --entrypoint sh "$IMAGE" -c 'command -v clang gcc cc || echo none')"

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

U1=1a2b3c4d-0000-4000-8000-000000000001
U2=1a2b3c4d-0000-4000-8000-000000000002
U3=1a2b3c4d-0000-4000-8000-000000000003
U4=1a2b3c4d-0000-4000-8000-000000000004
U5=1a2b3c4d-0000-4000-8000-000000000005
P1=$(kind_pod burstable $U1)
P2=$(kind_pod guaranteed $U2)
P3=$(cgroupfs_pod besteffort $U3)
P4=$(kind_pod besteffort $U4)
P5=$(kubeadm_pod burstable $U5)

echo "== a node with four pods, three of them holding GPUs"
run_pod w0 slurm worker-0 $U1 "$P1"     # Kind, Burstable
run_pod w1 slurm worker-1 $U2 "$P2"     # Kind, Guaranteed
run_pod tr batch trainer $U3 "$P3"      # cgroupfs, BestEffort
run_pod fe web frontend $U4 "$P4"       # Kind, BestEffort, no GPU
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 \
	batch/trainer:nvidia.com/gpu:1 web/frontend:nvidia.com/gpu:0
check "the fake kubelet serves PodResources v1" start_kubelet
c1=$(runc_pid w0) c4=$(runc_pid fe)
check "the pods' containers run (runc)" test -n "$c1" -a -n "$c4"
# As the chart's DaemonSet runs it (values.yaml: privileged false, these
# capabilities; hostPID; the hostPath mounts).
caps=$(sed -n '/^capabilities:/,/^$/s/^  - \([A-Z_]*\).*/\1/p' charts/nvmirage/values.yaml | paste -sd, -)
podman run -d --name "$AGENT" --pid host --network host --cap-drop ALL --cap-add "$caps" \
	-v /sys/fs/bpf:/sys/fs/bpf -v /sys/kernel/btf:/sys/kernel/btf:ro \
	-v /sys/kernel/security:/sys/kernel/security:ro -v /sys/fs/cgroup:/host/sys/fs/cgroup \
	-v "$SOCKDIR:/var/lib/kubelet/pod-resources" -v "$PODLOGS:/var/log/pods:ro" \
	"$IMAGE" run --kubernetes --profile gb300 --root "$ROOT" \
	--kubelet-socket /var/lib/kubelet/pod-resources/kubelet.sock \
	--cgroup-root "/host$R" --pod-logs /var/log/pods \
	--poll-ms 500 --listen 127.0.0.1:$PORT > /dev/null 2>&1
podman logs -f "$AGENT" > "$LOG" 2>&1 &
logs_pid=$!
check "the agent starts from the image with the chart's capabilities ($caps)" \
	wait_for 20 grep -q 'ready:' "$LOG"
wait_for 5 has_targets 3
check_eq "the three GPU pods are targets" 3 "$(targets)"
check_has "log: the kubelet answered" "answers: 3 pods hold GPUs" "$(log)"
check_has "Kind layout, Burstable pod found" "pod slurm/worker-0 (uid $U1) holds 4 devices: target" "$(log)"
check_has "Kind layout, Guaranteed pod found" "pod slurm/worker-1 (uid $U2) holds 2 devices: target" "$(log)"
check_has "cgroupfs layout, BestEffort pod found" "pod batch/trainer (uid $U3) holds 1 devices: target" "$(log)"
check_lacks "the pod without GPUs is not" "web/frontend" "$(log)"
check_has "the agent says where it looks for pods" "pod cgroups found under /host$R" "$(log)"
check_eq "its patch service threads run SCHED_FIFO (the pod's cpu group has no real-time budget: moved to the host's)" \
	"$((2 * $(nproc)))" "$(status_j | $PY -c 'import json,sys; print(json.load(sys.stdin)["agent"]["realtime_threads"])')"

echo "== the tree inside containers"
wait_for 5 sh -c "[ \$(nsenter -t $c1 -m -p findmnt -n $ROOT | wc -l) = 1 ]"
check_eq "the GPU pod's container has the tree mounted at $ROOT" 1 "$(mounts_at $c1 $ROOT)"
check_has "read-only" "ro" "$(nsenter -t "$c1" -m -p findmnt -n -o OPTIONS "$ROOT")"
check_has "its root file system is read-only too" "Read-only file system" "$(in_pod w0 touch /probe)"
r=$(in_pod w0 /opt/nvm/reader literal)
check_has "a process in the container sees the 4 GPUs" "gpus=4" "$r"
check_has "and reads the version" "version=NVRM version:" "$r"
check_has "a static busybox there lists them too" "0019:06:00.0" "$(in_pod w0 /opt/nvm/busybox ls /proc/driver/nvidia/gpus)"
check_has "writing into the tree there fails" "Read-only file system" "$(in_pod w0 touch $ROOT/x)"
check "it runs in a PID namespace of its own" test "$(readlink /proc/$c1/ns/pid)" != "$(readlink /proc/self/ns/pid)"
check_eq "as its process 1, with a /proc of its own" sleep "$(in_pod w0 cat /proc/1/comm)"
check_has "the Guaranteed pod's container sees them" "gpus=4" "$(in_pod w1 /opt/nvm/reader literal)"
check_has "the cgroupfs pod's container sees them" "gpus=4" "$(in_pod tr /opt/nvm/reader literal)"
check_eq "the pod without GPUs got no tree" 0 "$(mounts_at $c4 $ROOT)"
check_has "and its container sees no GPUs" "gpus=0" "$(in_pod fe /opt/nvm/reader literal)"
check_has "the host (outside every pod) sees no GPUs" "gpus=0" "$(timeout 20 "$in_cgroup" "$O" "$reader" literal)"
sleep 1.2
check_eq "after more polls: still one mount (idempotent)" 1 "$(mounts_at $c1 $ROOT)"
check_eq "bound once per mount namespace" 1 "$(log | grep -c -F "in mount namespace $(readlink /proc/$c1/ns/mnt)")"

echo "== a restarted container"
runc_remove w0
run_pod w0 slurm worker-0 $U1 "$P1"
c1=$(runc_pid w0)
check "the new container gets the tree within 5 s" wait_for 5 sh -c "[ \$(nsenter -t $c1 -m -p findmnt -n $ROOT | wc -l) = 1 ]"
check_has "and sees the GPUs" "gpus=4" "$(in_pod w0 /opt/nvm/reader literal)"

echo "== pods come and go"
run_pod w2 slurm worker-2 $U5 "$P5"     # kubeadm systemd layout, Burstable
s=$(date +%s%N)
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 \
	batch/trainer:nvidia.com/gpu:1 web/frontend:nvidia.com/gpu:0 slurm/worker-2:nvidia.com/gpu:2
wait_for 5 sh -c "grep -q 'pod slurm/worker-2' $LOG"
ms=$((($(date +%s%N) - s) / 1000000))
check "a new GPU pod (kubeadm's systemd layout) is a target within 3 s (took $ms ms)" test $ms -lt 3000
check_eq "four targets" 4 "$(targets)"
check "its container gets the tree" wait_for 5 sh -c "[ \$(nsenter -t $(runc_pid w2) -m -p findmnt -n $ROOT | wc -l) = 1 ]"
check_has "and its processes see the GPUs" "gpus=4" "$(in_pod w2 /opt/nvm/reader literal)"
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 web/frontend:nvidia.com/gpu:0 \
	slurm/worker-2:nvidia.com/gpu:2
runc_remove tr
rmdir "$R/$P3"
wait_for 5 sh -c "grep -q 'pod batch/trainer.*no longer a target' $LOG"
check_has "a pod that ended is no longer a target" "pod batch/trainer" "$(log | grep 'no longer a target')"
check_eq "three targets" 3 "$(targets)"

echo "== a container whose first process reads the driver files at once"
# The kubelet's order: the pod is listed and its cgroup made, then its
# container starts; its first process (the reader, run by runc as the
# container's command) must find the tree in its brand-new mount
# namespace: bound there at its first redirect, not at the next walk.
U6=1a2b3c4d-0000-4000-8000-000000000006
P6=$(kind_pod besteffort $U6)
mkdir -p "$PODLOGS/slurm_worker-3_$U6" "$R/$P6"
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 web/frontend:nvidia.com/gpu:0 \
	slurm/worker-2:nvidia.com/gpu:2 slurm/worker-3:nvidia.com/gpu:1
check "the new pod is a target before its container starts" wait_for 5 has_targets 4
b0=$(status_j | $PY -c 'import json,sys; print(json.load(sys.stdin)["agent"]["tree_binds"])')
runc_start w3 "${R#"$cg2"}/$P6/cri-containerd-w3.scope" "$rootfs" \
	bind="$(pwd)/$out/helpers:/opt/nvm" hostname=worker-3 -- /opt/nvm/reader literal
ctrs="$ctrs w3"
wait_for 10 grep -q literals_intact "$CDIR/bundles/w3.log"
check_has "its first process sees the 4 GPUs" "gpus=4" "$(cat "$CDIR/bundles/w3.log")"
check "and nothing went into the node's own /dev while its runtime set it up" test ! -e "$ROOT"
check_eq "the kernel side asked for the tree in that namespace, once" $((b0 + 1)) \
	"$(status_j | $PY -c 'import json,sys; print(json.load(sys.stdin)["agent"]["tree_binds"])')"
runc_remove w3
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 web/frontend:nvidia.com/gpu:0 \
	slurm/worker-2:nvidia.com/gpu:2
rmdir "$R/$P6"
wait_for 5 has_targets 3

echo "== a runtime that takes its time: the tree once its container has its root, never before"
# tests/helpers/slowrt does what runc does, in its order, and stops 1.2 s
# at each step (the agent walks the pods every 0.5 s), opening a driver
# file there: in the pod's cgroup while still in the node's mount
# namespace, then in its own new namespace while that still has the node's
# root, then it pivots and runs the reader. Only the last is a container.
U7=1a2b3c4d-0000-4000-8000-000000000007
P7=$(kind_pod besteffort $U7)
mkdir -p "$PODLOGS/slurm_worker-4_$U7" "$R/$P7/cri-containerd-w4.scope" "$work/w4-root"
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 web/frontend:nvidia.com/gpu:0 \
	slurm/worker-2:nvidia.com/gpu:2 slurm/worker-4:nvidia.com/gpu:1
check "the slow runtime's pod is a target before it starts" wait_for 5 has_targets 4
b0=$(status_j | $PY -c 'import json,sys; print(json.load(sys.stdin)["agent"]["tree_binds"])')
l0=$(log | wc -l)
r=$(timeout 60 "$out/helpers/slowrt" "$R/$P7/cri-containerd-w4.scope" "$work/w4-root" 1200 \
	"$(pwd)/$out/helpers/reader" literal 2>&1)
check_has "in the node's namespace, in the pod's cgroup: no tree there" "node=No such file or directory" "$r"
check_has "in its new namespace before its root: none" "setup=No such file or directory" "$r"
check_has "nor after the agent's walk came by" "setup_later=No such file or directory" "$r"
check_has "in its root, its command sees the 4 GPUs" "gpus=4" "$r"
check "the node's /dev got nothing" test ! -e "$ROOT"
# (podman logs -f copies the agent's lines over as it reads them.)
wait_for 5 sh -c "tail -n +$((l0 + 1)) $LOG | grep -q 'tree bound read-only'"
check_lacks "the agent bound nothing into the node's namespace" \
	"mount namespace $(readlink /proc/self/ns/mnt)" "$(log | tail -n +$((l0 + 1)))"
check_eq "the tree was bound once, into the container's namespace" 1 \
	"$(log | tail -n +$((l0 + 1)) | grep -c 'tree bound read-only')"
check_eq "the kernel side's ask counted once" $((b0 + 1)) \
	"$(status_j | $PY -c 'import json,sys; print(json.load(sys.stdin)["agent"]["tree_binds"])')"
check_has "the walk's binds run at the service threads' priority (SCHED_FIFO 50)" \
	"walk binds at SCHED_FIFO 50" "$(log)"
pods_json slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 web/frontend:nvidia.com/gpu:0 \
	slurm/worker-2:nvidia.com/gpu:2
cgroup_trees_remove "${R#"$cg2"}/$P7"
rmdir "$work/w4-root"
wait_for 5 has_targets 3

echo "== health and metrics"
check_eq "/healthz answers 200" 200 "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/healthz)"
check_eq "/readyz answers 200 (programs attached)" 200 "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$PORT/readyz)"
m=$(curl -s http://127.0.0.1:$PORT/metrics)
check_has "/metrics: targets" "nvmirage_targets 3" "$m"
check_has "/metrics: kubelet up" "nvmirage_kubelet_up 1" "$m"
check_has "/metrics: deadline misses counted" "# TYPE nvmirage_deadline_misses_total counter" "$m"
n=$(echo "$m" | sed -n 's/^nvmirage_redirects_total //p')
check "/metrics: redirects counted ($n)" test "${n:-0}" -gt 0
check_has "/metrics: unredirected lookups by cause" 'nvmirage_unredirected_total{cause="busy_no_cpu"}' "$m"
check_eq "/metrics is Prometheus text (every sample line parses)" 0 \
	"$(echo "$m" | grep -v '^#' | grep -c -v -E '^nvmirage_[a-z_]+(\{[a-z_]+="[a-z_]+"\})? [0-9]+$')"

echo "== 200 GPU pods on one node (time-slicing replicas), and bursts of 50"
# A node whose device plugin shares each GPU (replicas): hundreds of pods
# hold nvidia.com/gpu. Each is a pod cgroup in Kind's layout and a pod log
# directory; the pod without GPUs (web/frontend) stays no target.
base="slurm/worker-0:nvidia.com/gpu:4 slurm/worker-1:nvidia.com/gpu:2 web/frontend:nvidia.com/gpu:0 slurm/worker-2:nvidia.com/gpu:2"
ts_uid() { printf '2b3c4d5e-0000-4000-8000-%012d' "$1"; }
ts_pod() { # make the cgroup and log directory of replica pod $1
	mkdir -p "$R/$(kind_pod besteffort "$(ts_uid "$1")")" "$PODLOGS/ts_gpu-$1_$(ts_uid "$1")"
}
ts_gone() { rmdir "$R/$(kind_pod besteffort "$(ts_uid "$1")")"; }
ts_list() { for i in $(seq "$1" "$2"); do printf ' ts/gpu-%d:nvidia.com/gpu:1' "$i"; done; }
for i in $(seq 1 250); do ts_pod "$i"; done
s=$(date +%s%N)
# shellcheck disable=SC2046
pods_json $base $(ts_list 1 200)
wait_for 20 has_targets 203
ms=$((($(date +%s%N) - s) / 1000000))
check_eq "200 GPU pods listed at once: 203 targets" 203 "$(targets)"
check "all of them within 10 s (took $ms ms)" test "$ms" -lt 10000
check_lacks "the pod without GPUs is still none" "web/frontend" "$(status_j)"
check_has "and the first replica is one" "$(kind_pod besteffort "$(ts_uid 1)")" "$(status_j)"
check_has "and the last" "$(kind_pod besteffort "$(ts_uid 200)")" "$(status_j)"
s=$(date +%s%N)
# shellcheck disable=SC2046
pods_json $base $(ts_list 51 250)
for i in $(seq 1 50); do ts_gone "$i"; done
burst_done() { [ "$(log | grep -c 'pod ts/gpu-.*no longer a target')" -ge 50 ] && has_targets 203; }
wait_for 20 burst_done
ms=$((($(date +%s%N) - s) / 1000000))
check_eq "a burst: 50 pods end and 50 come, 203 targets again" 203 "$(targets)"
check "every one picked up or dropped within 10 s (took $ms ms)" test "$ms" -lt 10000
check_lacks "the ended ones are no targets" "$(kind_pod besteffort "$(ts_uid 50)")" "$(status_j)"
check_has "the new ones are" "$(kind_pod besteffort "$(ts_uid 250)")" "$(status_j)"
echo "note: the agent with 203 targets: $(grep VmRSS "/proc/$(podman inspect --format '{{.State.Pid}}' "$AGENT")/status")"
pods_json $base
for i in $(seq 51 250); do ts_gone "$i"; done
check "back to 3 targets" wait_for 20 has_targets 3

echo "== a pod made again under its name"
# The old pod's log directory stays until the kubelet removes it: the
# name has two UIDs there, and the one whose cgroup exists is the pod.
# (The old UID sorts first, so taking the first would take it.)
mkdir -p "$PODLOGS/ts_again_$(ts_uid 900)" "$PODLOGS/ts_again_$(ts_uid 901)" \
	"$R/$(kind_pod besteffort "$(ts_uid 901)")"
pods_json $base ts/again:nvidia.com/gpu:1
check "it is a target" wait_for 20 has_targets 4
check_has "by the UID whose cgroup exists" "$(kind_pod besteffort "$(ts_uid 901)")" "$(status_j)"
check_has "and the log names that UID" "pod ts/again (uid $(ts_uid 901)) holds" "$(log)"
pods_json $base
rmdir "$R/$(kind_pod besteffort "$(ts_uid 901)")"
check "back to 3 targets again" wait_for 20 has_targets 3

echo "== the kubelet goes away, and comes back"
kill "$fake_pid"; wait "$fake_pid" 2>/dev/null; fake_pid=
wait_for 5 sh -c "grep -q 'keeping the 3 current targets' $LOG"
check_has "logged, not fatal" "keeping the 3 current targets, retrying" "$(log)"
check "the agent still runs" test "$(podman inspect -f '{{.State.Running}}' "$AGENT")" = true
check_has "targets stay in force" "gpus=4" "$(in_pod w0 /opt/nvm/reader literal)"
check_has "/metrics: kubelet down" "nvmirage_kubelet_up 0" "$(curl -s http://127.0.0.1:$PORT/metrics)"
start_kubelet
wait_for 5 sh -c "[ \$(grep -c 'answers:' $LOG) = 2 ]"
check_eq "back: the agent says the kubelet answers again" 2 "$(log | grep -c 'answers:')"

echo "== stop"
podman stop -t 10 "$AGENT" > /dev/null
wait "$logs_pid" 2>/dev/null; logs_pid=
check_has "SIGTERM (podman stop): detached" "detached; counters" "$(log)"
check_has "the container sees no GPUs any more" "gpus=0" "$(in_pod w0 /opt/nvm/reader literal)"
check_node_clean
summary
