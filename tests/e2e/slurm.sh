# Slurm (slurm_lib.sh) whose slurmd runs in a target cgroup with the gb300
# profile's device nodes and its GPUs in gres.conf. srun jobs are children
# of slurmstepd, not of this test, and have no LD_PRELOAD. Sourced by run.sh.

echo "== Slurm"
slurm_begin
slurm_conf "ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:4 State=UNKNOWN"
echo "Name=gpu File=/dev/nvidia[0-3]" > "$S/gres.conf"

check "agent starts for slurmd's cgroup (with device nodes)" \
	start_agent "$LOGS/slurm-agent.log" --profile gb300 --device-nodes --cgroup "$T" --root "$ROOT"
/usr/sbin/slurmctld -f "$S/slurm.conf"
check "slurmctld starts" wait_for 20 scontrol ping
"$in_cgroup" "$T" /usr/sbin/slurmd -N localhost -f "$S/slurm.conf"
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
