# Time for GPU pods to become targets (sourced by run.sh): the fake kubelet
# (tests/kube/fake_kubelet.py, real gRPC) lists 10, 100, then 500 GPU pods
# at once, each a pod cgroup in Kind's layout with its pod log directory;
# the agent (--kubernetes, on this host, --poll-ms 500) makes each a
# target. Per pod: the time from the listing to the agent's "target" line
# (median, p99, last); then the agent's CPU time per poll with that many
# pods listed. Uses run.sh's start_agent, stop_agent, $cg2, $ROOT, $LOG.

if ! /usr/bin/python3 -c 'import grpc, grpc_tools' 2>/dev/null; then
	echo "(9) pods: not measured: python3-grpcio and python3-grpc-tools are missing (make test installs them)"
	return 0 2>/dev/null || exit 0
fi
PN=$cg2/nvmb-node
PW=$(mktemp -d)
mkdir -p "$PN" "$PW/logs"
echo '{"pods": []}' > "$PW/pods.json"
/usr/bin/python3 tests/kube/fake_kubelet.py agent/kube/podresources.proto "$PW/kubelet.sock" \
	"$PW/pods.json" > "$PW/kubelet.log" 2>&1 &
kpid=$!
for _ in $(seq 1 100); do [ -S "$PW/kubelet.sock" ] && break; sleep 0.1; done
pod_uid() { printf '3c4d5e6f-0000-4000-8000-%012d' "$1"; }
pod_dir() { echo "$PN/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod$(pod_uid "$1" | tr - _).slice"; }
echo "GPU pods becoming targets (fake kubelet, Kind's layout, --poll-ms 500, $(nproc) CPUs)"
for n in 10 100 500; do
	for i in $(seq 1 "$n"); do mkdir -p "$(pod_dir "$i")" "$PW/logs/bench_gpu-${i}_$(pod_uid "$i")"; done
	start_agent "$LOG" --profile gb300 --kubernetes --root "$ROOT" --kubelet-socket "$PW/kubelet.sock" \
		--cgroup-root "$PN" --pod-logs "$PW/logs" --poll-ms 500 --no-bind-tree || exit 1
	sleep 1
	t0=$(date +%H:%M:%S.%N)
	/usr/bin/python3 -c '
import json, sys
n = int(sys.argv[1])
pods = [{"namespace": "bench", "name": "gpu-%d" % i, "containers": [{"name": "main",
         "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["0"]}]}]} for i in range(1, n + 1)]
json.dump({"pods": pods}, open(sys.argv[2] + ".tmp", "w"))' "$n" "$PW/pods.json"
	mv "$PW/pods.json.tmp" "$PW/pods.json"
	for _ in $(seq 1 300); do
		[ "$(grep -c 'pod bench/gpu-.*: target' "$LOG")" -ge "$n" ] && break
		sleep 0.1
	done
	lat=$(/usr/bin/python3 -c '
import re, sys
def sec(t):
    h, m, s = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)
t0 = sec(sys.argv[1][:15])
ms = sorted((sec(l[:12]) - t0) * 1000 for l in open(sys.argv[2]) if re.search(r"pod bench/gpu-\d+ .*: target", l))
if not ms:
    print("none became a target")
else:
    print("%d of %s: median %.0f ms, p99 %.0f ms, last %.0f ms" % (len(ms), sys.argv[3], ms[len(ms) // 2], ms[int(len(ms) * 0.99)], ms[-1]))' "$t0" "$LOG" "$n")
	c0=$(awk '{print $14 + $15}' /proc/"$agent_pid"/stat)
	sleep 5
	c1=$(awk '{print $14 + $15}' /proc/"$agent_pid"/stat)
	rss=$(awk '/VmRSS/ {print $2}' /proc/"$agent_pid"/status)
	echo "  (9) $n pods listed at once: $lat; then $(awk -v t=$((c1 - c0)) -v h="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", 1000 * t / h / 10 }') ms of CPU per poll (10 polls), RSS $rss kB"
	stop_agent
	echo '{"pods": []}' > "$PW/pods.json"
	for i in $(seq 1 "$n"); do rmdir "$(pod_dir "$i")"; done
done
kill "$kpid" 2>/dev/null; wait "$kpid" 2>/dev/null
find "$PN" -depth -type d -exec rmdir {} + 2>/dev/null
rm -rf "$PW"
