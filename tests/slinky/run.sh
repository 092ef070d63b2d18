#!/bin/sh
# A Slinky node, end to end, as the Slinky guide (../shared/seed) sets it
# up on Kind, as far as this machine can run it: Debian trixie's Slurm 24.11
# in containers (a root file system made with debootstrap, cached under
# build/containers), slurmctld in a pod without GPUs and slurmd in a pod
# that holds the node's 4 GPUs, both in Kind's pod cgroup layout, both run
# by runc with the host's network; slurmd as Slinky's NodeSet runs it (a
# dynamic node, -Z, configless from slurmctld), configured as the guide's
# step 5 (gres.conf AutoDetect=nvidia, GresTypes=gpu, no Gres on any node
# line of slurm.conf). Slurm 24.11 ignores autodetected GPUs that a dynamic
# node does not declare ("The following autodetected GPUs are being
# ignored"; untyped, "gpu:4" loses the type), so the node declares them in
# its --conf, as Slinky's own documentation has NodeSets do (extraConfMap
# Gres: ["gpu:GB200:4"]); what the node registers still comes from
# detection: the GPUs' device files and their CPU sockets, and it goes
# idle only when 4 GPUs of that type are found. The GPU device nodes come
# from the pod's spec,
# as a device plugin gives them; the driver files from nvmirage, which runs
# from its image as the chart runs it, against a fake kubelet that lists
# the pods. Then the guide's step 6: sinfo, and srun jobs. Needs root.
#
# CgroupPlugin: cgroup/v2 (Slinky's) refuses this hybrid host ("Hybrid mode
# is not supported"), so the cluster runs with CgroupPlugin=disabled,
# proctrack/linuxproc and task/none: job steps stay in slurmd's cgroup,
# the pod's, as they do under cgroup/v2 inside a pod's cgroup namespace.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
. tests/lib/containers.sh
setup_suite slinky "$out"
containers_init "$out"
PY=/usr/bin/python3
AGENT=nvmslinky-agent
ROOT=/dev/nvm
LOG=$LOGS/agent.log
work=$(mktemp -d)
R=$T/node
NODE=${R#"$cg2"}
PODLOGS=$work/pods
SOCKDIR=$work/pod-resources
STATE=$work/pods.json
UC=5a1e0000-0000-4000-8000-0000000000c0 # slurm-controller-0
UW=5a1e0000-0000-4000-8000-0000000000d0 # slurm-worker-slinky-0
PC=kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod$(echo $UC | tr - _).slice
PW=kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod$(echo $UW | tr - _).slice
fake_pid= logs_pid=
cleanup() {
	podman rm -f -t 0 "$AGENT" > /dev/null 2>&1
	[ -z "$logs_pid" ] || kill "$logs_pid" 2>/dev/null
	[ -z "$fake_pid" ] || kill "$fake_pid" 2>/dev/null
	runc_remove slinky-ctl slinky-worker
	cgroup_trees_remove "$NODE"
	remove_cgroups "$T" "$O"
	rm -rf "$work"
}
on_exit cleanup
wait_for() { n=$(($1 * 10)); shift; for _ in $(seq 1 $n); do "$@" && return 0; sleep 0.2; done; return 1; }

echo "== Debian trixie's Slurm, and the nvmirage image"
slurm=$(debian_rootfs trixie slurmctld,slurmd,slurm-client,munge)
check "a debootstrapped trixie root file system with slurmctld, slurmd and munge" test -x "$slurm/usr/sbin/slurmd"
v=$(chroot "$slurm" slurmd -V 2>&1)
check_has "its Slurm has AutoDetect=nvidia (24.11 or later)" "slurm-wlm 24.11" "$v"
check "the nvmirage image" nvmirage_image "$IMAGE"
# Debian's gpu/nvml plugin (contrib) of that Slurm release, for
# AutoDetect=nvml against nvmirage's NVML.
. tests/lib/apt.sh
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
sv=$(chroot "$slurm" dpkg-query -W -f '${Version}' slurmd)
aconf=$(private_apt "$(pwd)/$out/cache" trixie "$(dpkg --print-architecture)" "main contrib")
# Any build of the same Slurm release loads (Slurm checks the release).
pv=$(APT_CONFIG=$aconf apt-cache madison slurm-wlm-nvml-plugin |
	awk -v v="${sv%%-*}" '$3 ~ "^" v "-" {print $3; exit}')
check "apt-get download slurm-wlm-nvml-plugin=$pv (trixie contrib; slurmd is $sv)" \
	fetch_debs "$aconf" "$(pwd)/$out/cache/debs-trixie" "slurm-wlm-nvml-plugin=$pv"
rm -rf "$work/slurm-nvml"
dpkg-deb -x "$(pwd)/$out/cache/debs-trixie/slurm-wlm-nvml-plugin_${pv#*:}_"*.deb "$work/slurm-nvml"

# The cluster's configuration, as the slurm chart writes it for the guide's
# values (configless: slurmd fetches it from slurmctld).
mkdir -p "$work/slurm" "$work/munge-etc" "$work/munge-run" "$PODLOGS" "$SOCKDIR"
cat > "$work/slurm/slurm.conf" <<EOF
ClusterName=slinky
SlurmctldHost=slurm-controller-0(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SrunPortRange=16900-16999
SlurmctldParameters=enable_configless
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
GresTypes=gpu
MaxNodeCount=8
TreeWidth=65533
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
PartitionName=all Nodes=ALL Default=YES State=UP MaxTime=INFINITE
EOF
echo "AutoDetect=nvidia" > "$work/slurm/gres.conf"
echo "CgroupPlugin=disabled" > "$work/slurm/cgroup.conf"
# Node-local configurations for `slurmd -G` (what slurmd detects, printed):
# the same node with AutoDetect=nvidia and with AutoDetect=nvml.
for d in nvidia nvml; do
	mkdir -p "$work/detect/$d"
	{ grep -v '^PartitionName' "$work/slurm/slurm.conf"
	  echo "PluginDir=/usr/lib/$triplet/slurm-wlm:/opt/slurm-nvml"
	  echo "NodeName=slinky-worker-0 CPUs=$(nproc) Gres=gpu:nvidia_gb300_nvl:4"; } > "$work/detect/$d/slurm.conf"
	echo "AutoDetect=$d" > "$work/detect/$d/gres.conf"
	cp "$work/slurm/cgroup.conf" "$work/detect/$d/"
done
printf '127.0.0.1 localhost slurm-controller-0 slinky-worker-0\n' > "$work/hosts"
head -c 1024 /dev/urandom > "$work/munge-etc/munge.key"
chmod 700 "$work/munge-etc"; chmod 400 "$work/munge-etc/munge.key"

# pod NAME UID: the kubelet's log directory for pod slurm/NAME.
pod_logs() { mkdir -p "$PODLOGS/slurm_$1_$2"; }
pod_logs slurm-controller-0 $UC
pod_logs slurm-worker-slinky-0 $UW
mkdir -p "$R/$PC" "$R/$PW"
common="bind=$work/slurm:/etc/slurm bind=$work/hosts:/etc/hosts rw=$work/munge-run:/run/munge bind=$(pwd)/$out/helpers:/opt/nvm"

# The kubelet's order: the pods are admitted (their devices allocated, so
# the PodResources API lists them) and their sandboxes made (the pod
# cgroups) before their containers start.
$PY - "$STATE" <<'PYEOF'
import json, sys
json.dump({"pods": [
    {"namespace": "slurm", "name": "slurm-controller-0", "containers": [{"name": "slurmctld", "devices": []}]},
    {"namespace": "slurm", "name": "slurm-worker-slinky-0", "containers": [{"name": "slurmd",
     "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["0", "1", "2", "3"]}]}]}]},
    open(sys.argv[1], "w"))
PYEOF
$PY tests/kube/fake_kubelet.py agent/kube/podresources.proto "$SOCKDIR/kubelet.sock" "$STATE" > "$LOGS/kubelet.log" 2>&1 &
fake_pid=$!

echo "== nvmirage, from its image, as the chart runs it"
caps=$(sed -n '/^capabilities:/,/^$/s/^  - \([A-Z_]*\).*/\1/p' charts/nvmirage/values.yaml | paste -sd, -)
podman run -d --name "$AGENT" --pid host --network host --cap-drop ALL --cap-add "$caps" \
	-v /sys/fs/bpf:/sys/fs/bpf -v /sys/kernel/btf:/sys/kernel/btf:ro \
	-v /sys/kernel/security:/sys/kernel/security:ro -v /sys/fs/cgroup:/host/sys/fs/cgroup \
	-v "$SOCKDIR:/var/lib/kubelet/pod-resources" -v "$PODLOGS:/var/log/pods:ro" \
	"$IMAGE" run --kubernetes --profile gb300 --root "$ROOT" \
	--kubelet-socket /var/lib/kubelet/pod-resources/kubelet.sock \
	--cgroup-root "/host$R" --pod-logs /var/log/pods --poll-ms 500 > /dev/null 2>&1
podman logs -f "$AGENT" > "$LOG" 2>&1 &
logs_pid=$!
check "the agent makes the slurmd pod its target" wait_for 20 grep -q 'pod slurm/slurm-worker-slinky-0 (uid' "$LOG"
check_lacks "and not the controller pod" "slurm/slurm-controller-0" "$(cat "$LOG")"

echo "== the pods' containers"
runc_start slinky-ctl "$NODE/$PC/cri-containerd-slurmctld.scope" "$slurm" $common privileged \
	bind="$work/munge-etc:/etc/munge" tmpfs=/var/spool/slurmctld tmpfs=/var/lib/munge \
	tmpfs=/var/log/munge hostname=slurm-controller-0 -- \
	sh -c 'munged -F & exec slurmctld -D'
check "slurmctld (with munged) runs in the controller pod" wait_for 10 sh -c "runc exec slinky-ctl scontrol ping 2>/dev/null | grep -q UP"
# The GPU pod's device nodes are in its spec, as the (mock) device plugin
# puts them there: /dev/nvidia0-3 and /dev/nvidiactl. slurmd starts as the
# container's first process and detects its GPUs at once: the tree is
# bound into its new mount namespace at its first lookup.
devs=
for m in 0 1 2 3; do devs="$devs device=/dev/nvidia$m:195:$m"; done
runc_start slinky-worker "$NODE/$PW/cri-containerd-slurmd.scope" "$slurm" $common privileged \
	$devs device=/dev/nvidiactl:195:255 tmpfs=/var/spool/slurmd tmpfs=/var/log/slurm \
	bind="$work/detect:/etc/detect" bind="$work/slurm-nvml/usr/lib/$triplet/slurm-wlm:/opt/slurm-nvml" \
	hostname=slinky-worker-0 -- \
	slurmd -D -Z -v --conf-server 127.0.0.1:16817 --conf "Features=gpu Gres=gpu:nvidia_gb300_nvl:4"

echo "== the guide's step 6"
ctl() { runc exec slinky-ctl "$@" 2>&1; }
wait_for 30 sh -c "runc exec slinky-ctl sinfo -h -N -o '%N %T %G' 2>/dev/null | grep -q 'slinky-worker-0 idle gpu'"
check_eq "slurmd detected 4 GB300 GPUs itself (AutoDetect=nvidia)" 4 \
	"$(grep -c 'Gres Name=gpu Type=nvidia_gb300_nvl Count=1 .*HAS_FILE' "$CDIR/bundles/slinky-worker.log")"
check_lacks "and ignored none" "being ignored" "$(cat "$CDIR/bundles/slinky-worker.log")"
check_eq "slurmd's first lookup in its new container had the tree bound there on demand" 1 \
	"$(podman exec "$AGENT" nvmirage status --root "$ROOT" -j | $PY -c 'import json,sys; print(json.load(sys.stdin)["agent"]["tree_binds"])')"
s=$(ctl sinfo -N -o '%N %T %G')
check_has "sinfo: the node is idle with 4 GB300 GPUs on socket 0" "slinky-worker-0 idle gpu:nvidia_gb300_nvl:4(S:0)" "$s"
check_has "scontrol: detected, not configured (a dynamic node, no Gres in slurm.conf)" \
	"Gres=gpu:nvidia_gb300_nvl:4(S:0)" "$(ctl scontrol show node slinky-worker-0)"
job='echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; ls /proc/driver/nvidia/gpus | tr "\n" " "; echo;
cat /proc/driver/nvidia/gpus/*/information | grep -c "^Model:.*NVIDIA GB300 NVL";
echo "LD_PRELOAD=${LD_PRELOAD:-none}"; /opt/nvm/busybox cat /proc/driver/nvidia/version | head -n 1;
/opt/nvm/reader raw'
r=$(ctl timeout 60 srun -N1 --gres=gpu:2 bash -c "$job")
check_has "srun --gres=gpu:2: CUDA_VISIBLE_DEVICES=0,1" "CUDA_VISIBLE_DEVICES=0,1" "$r"
check_has "the job lists the four GPUs" "0008:06:00.0 0009:06:00.0 0018:06:00.0 0019:06:00.0" "$r"
check_has "and reads their information files (4 models)" "$(printf '\n4\n')" "$r"
check_has "with no LD_PRELOAD in its environment" "LD_PRELOAD=none" "$r"
check_has "a static binary in the job (busybox cat) reads the driver version" "NVRM version: NVIDIA UNIX" "$r"
check_has "a raw syscall(SYS_openat) in the job reads it" "raw=NVRM version:" "$r"
# The seed's step-6 line as written, in the unmodified trixie container: no
# nvidia-smi in its image, no LD_LIBRARY_PATH; the agent delivers both.
# (Jobs here are not confined to their GPUs: CgroupPlugin=disabled, above.)
r=$(ctl timeout 60 srun -N1 --gres=gpu:2 bash -c 'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; nvidia-smi -L')
echo "$r" | sed 's/^/   /'
check_has "the guide's step-6 line as written: CUDA_VISIBLE_DEVICES=0,1" "CUDA_VISIBLE_DEVICES=0,1" "$r"
check_eq "and its nvidia-smi -L lists the GPUs" 4 "$(echo "$r" | grep -c '^GPU [0-3]: NVIDIA GB300 NVL (UUID: GPU-')"
check "the container's image has no nvidia-smi of its own" test ! -e "$slurm/usr/bin/nvidia-smi"

echo "== AutoDetect=nvml through nvmirage's NVML, against AutoDetect=nvidia"
detect() {
	runc exec slinky-worker slurmd -G -N slinky-worker-0 \
		-f "/etc/detect/$1/slurm.conf" > "$work/detect-$1.log" 2>&1
	grep 'Gres Name=gpu' "$work/detect-$1.log" | sed 's/^[^:]*: //'
}
by_nvidia=$(detect nvidia)
by_nvml=$(detect nvml)
echo "$by_nvidia" | sed 's/^/   nvidia: /'
echo "$by_nvml" | sed 's/^/   nvml:   /'
fields() { echo "$1" | grep -o "$2=[^ ]*" | tr '\n' ' '; }
check_has "AutoDetect=nvml: Slurm's gpu/nvml plugin found 4 GPUs" \
	"gpu/nvml: _get_system_gpu_list_nvml: 4 GPU system device(s) detected" "$(cat "$work/detect-nvml.log")"
check_eq "AutoDetect=nvidia found 4 GB300s" 4 "$(echo "$by_nvidia" | grep -c 'Type=nvidia_gb300_nvl ')"
check_eq "AutoDetect=nvml: AutoDetect=nvidia's types" "$(fields "$by_nvidia" Type)" "$(fields "$by_nvml" Type)"
check_eq "its device files" "$(fields "$by_nvidia" File)" "$(fields "$by_nvml" File)"
check_eq "and its CPU affinity" "$(fields "$by_nvidia" Cores)" "$(fields "$by_nvml" Cores)"
check_eq "links from the profile: every link to an NVSwitch, none between GPUs" \
	"Links=-1,0,0,0 Links=0,-1,0,0 Links=0,0,-1,0 Links=0,0,0,-1 " "$(fields "$by_nvml" Links)"

r=$(ctl sh -c "$job")
check_has "the same commands in the controller pod (no GPU) see no GPUs" "ls: cannot access '/proc/driver/nvidia/gpus'" "$r"
check_has "and no driver" "raw=No such file or directory" "$r"
r=$(ctl timeout 60 srun -N1 --gres=gpu:4 sh -c 'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"')
check_has "srun --gres=gpu:4 gets all four" "CUDA_VISIBLE_DEVICES=0,1,2,3" "$r"

echo "== Slurm's GPU energy accounting on nvmirage's NVML"
# A site that accounts GPU energy: AcctGatherEnergyType=acct_gather_energy/gpu,
# which asks Slurm's gpu plugin for each GPU's power: NVML's with
# AutoDetect=nvml (slurmd's dynamic linker finds nvmirage's library where
# the container toolkit would put it). slurmctld asks the node every
# 5 s, and each ask has slurmd poll the GPUs. scontrol reconfigure: 24.11's
# daemons restart in place, and configless slurmd fetches the new files.
# Slurm's gpu/nvml counts the GPUs through NVML but reads no power (its
# energy read returns no data, in 24.11 as in later releases), so a real
# NVIDIA node reports 0 W here too; nvmirage's node must say the same.
echo "AutoDetect=nvml" > "$work/slurm/gres.conf"
cat >> "$work/slurm/slurm.conf" <<EOF
PluginDir=/usr/lib/$triplet/slurm-wlm:/opt/slurm-nvml
AcctGatherEnergyType=acct_gather_energy/gpu
AcctGatherNodeFreq=5
DebugFlags=Energy
EOF
wlog=$CDIR/bundles/slinky-worker.log
before=$(wc -l < "$wlog")
ctl scontrol reconfigure > /dev/null
since() { tail -n +"$((before + 1))" "$wlog"; }
polled() { since | grep -q 'gpu-thread: gpu 3 current_watts'; }
check "slurmd's energy plugin polls the GPUs" wait_for 30 polled
check_has "through Slurm's gpu/nvml, which found the 4 GPUs in nvmirage's NVML" \
	"gpu/nvml: _get_system_gpu_list_nvml: 4 GPU system device(s) detected" "$(since)"
check_eq "it polls each of the 4" "0 1 2 3" \
	"$(since | sed -n 's/.*gpu-thread: gpu \([0-9]*\) current_watts.*/\1/p' | sort -u | paste -sd ' ')"
check_has "and the node reports 0 W, as a real NVIDIA node does (gpu/nvml reads no power)" \
	"CurrentWatts=0 " "$(ctl scontrol show node slinky-worker-0)"

podman stop -t 10 "$AGENT" > /dev/null
wait "$logs_pid" 2>/dev/null; logs_pid=
check_has "SIGTERM (podman stop): the agent detached" "detached; counters" "$(cat "$LOG")"
check_node_clean
summary
