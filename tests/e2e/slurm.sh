# A one-node Slurm cluster (Debian's 22.05: munge, slurmctld, slurmd started
# here, on loopback ports) whose slurmd runs in a target cgroup with the gb300
# profile's device nodes. srun jobs are children of slurmstepd, not of this
# test, and have no LD_PRELOAD. Sourced by run.sh.

S=$(mktemp -d /tmp/nvme-slurm.XXXXXX)
chmod 755 "$S"
MUNGE_SOCK=$S/munge/munge.socket.2
export SLURM_CONF=$S/slurm.conf

slurm_stop() {
	for pf in "$S"/slurmd.pid "$S"/slurmctld.pid "$S"/munge/munged.pid; do
		[ -f "$pf" ] && kill "$(cat "$pf")" 2>/dev/null
	done
	sleep 1
	for pf in "$S"/slurmd.pid "$S"/slurmctld.pid "$S"/munge/munged.pid; do
		[ -f "$pf" ] && kill -9 "$(cat "$pf")" 2>/dev/null
	done
	rm -rf "$S"
}
slurm_cleanup=slurm_stop

wait_for() { # SECONDS COMMAND...
	t=$1; shift
	for _ in $(seq 1 $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	return 1
}

echo "== Slurm"
mkdir -p "$S/munge" "$S/state" "$S/spool"
chown munge:munge "$S/munge"; chmod 755 "$S/munge"
runuser -u munge -- mungekey --create --keyfile="$S/munge/munge.key" >/dev/null 2>&1 ||
	dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 2>/dev/null
chown munge:munge "$S/munge/munge.key"; chmod 600 "$S/munge/munge.key"
runuser -u munge -- munged --socket="$MUNGE_SOCK" --key-file="$S/munge/munge.key" \
	--pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" \
	--seed-file="$S/munge/munged.seed"
check "munged starts" wait_for 10 test -S "$MUNGE_SOCK"

cat > "$S/slurm.conf" <<CONF
ClusterName=nvmirage
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:4 State=UNKNOWN
PartitionName=all Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
echo "Name=gpu File=/dev/nvidia[0-3]" > "$S/gres.conf"

check "agent starts for slurmd's cgroup (with device nodes)" \
	start_agent "$LOGS/slurm-agent.log" --profile gb300 --device-nodes --cgroup "$T" --root "$ROOT"
/usr/sbin/slurmctld -f "$S/slurm.conf"
check "slurmctld starts" wait_for 20 scontrol ping
"$in_cgroup" "$T" /usr/sbin/slurmd -N localhost -f "$S/slurm.conf"
node_gres() { sinfo -h -N -o '%G %T' 2>/dev/null; }
registered() { node_gres | grep -q 'gpu:4 idle'; }
check "slurmd (in the target cgroup) registers gpu:4 from /dev/nvidia[0-3]" wait_for 40 registered
echo "   sinfo: $(node_gres)"

job='echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; ls /proc/driver/nvidia/gpus; cat /proc/driver/nvidia/gpus/*/information; echo "preload=$(tr "\0" "\n" < /proc/$$/environ | grep -c ^LD_PRELOAD=)"; cat /proc/$$/cgroup | grep ^0::'
r=$(timeout 60 srun -N1 --gres=gpu:2 sh -c "$job" 2>&1)
check_has "srun --gres=gpu:2 gets CUDA_VISIBLE_DEVICES=0,1" "CUDA_VISIBLE_DEVICES=0,1" "$r"
check_eq "the job lists the profile's 4 GPUs" "0008:06:00.0 0009:06:00.0 0018:06:00.0 0019:06:00.0" \
	"$(echo "$r" | grep -E '^[0-9a-f]{4}:' | tr '\n' ' ' | sed 's/ $//')"
check_eq "and reads their 4 information files" 4 "$(echo "$r" | grep -c 'Model: 		 NVIDIA GB300 NVL')"
check_has "the job's environment has no LD_PRELOAD (from /proc/<pid>/environ)" "preload=0" "$r"
check_has "the job runs in the target cgroup, below slurmd" "0::/${T#"$cg2"/}" "$r"
r=$(timeout 30 "$in_cgroup" "$O" sh -c "$job" 2>&1)
check_has "the same command outside the target sees no GPUs" "No such file or directory" "$r"

bb=$(command -v busybox)
r=$(timeout 60 srun -N1 "$bb" cat /proc/driver/nvidia/version 2>&1)
check_has "static busybox in an srun job reads the version" "570.124.06" "$r"
r=$(timeout 60 srun -N1 "$reader" raw 2>&1)
check_has "raw syscall(SYS_openat) in an srun job" "raw=NVRM version:" "$r"
# srun may say on stderr that the job waits for the previous one's node.
r=$(timeout 60 srun -N1 /usr/bin/python3 -c 'import os; print(len(os.listdir("/proc/driver/nvidia/gpus")))' 2>"$S/python.err")
check_eq "python in an srun job lists 4 GPUs" 4 "$r"
if [ "$r" != 4 ]; then
	sed 's/^/   srun: /' "$S/python.err"
	agent_notes "$LOGS/slurm-agent.log"
fi

echo "== Slurm: the agent stops, then comes back"
stop_agent
s0=$(date +%s)
r=$(timeout 60 srun -N1 sh -c 'ls /proc/driver/nvidia/gpus 2>&1; echo done' 2>&1)
check_has "with the agent stopped, a job sees the host again" "No such file or directory" "$r"
check_has "and finishes" "done" "$r"
check "nothing hung ($(( $(date +%s) - s0 )) s)" test $(( $(date +%s) - s0 )) -lt 30
check "the agent starts again" \
	start_agent "$LOGS/slurm-agent2.log" --profile gb300 --device-nodes --cgroup "$T" --root "$ROOT"
r=$(timeout 60 srun -N1 sh -c 'ls /proc/driver/nvidia/gpus | wc -l' 2>>"$LOGS/srun.err")
check_eq "jobs see the profile again" 4 "$r"
stop_agent
slurm_stop
slurm_cleanup=
