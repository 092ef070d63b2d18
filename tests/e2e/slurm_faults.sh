# What slurmd registers after a restart with each GPU fault in force:
# Slurm 22.05 with AutoDetect=nvml on nvmirage's NVML (slurm_devices.sh
# fetched the plugin), slurmd in a target cgroup. Whether Slurm keeps a GPU
# it cannot use is Slurm's choice; this records what it does (docs/faults.md
# says it too). Sourced by run.sh after slurm_devices.sh.

echo "== Slurm: what slurmd registers after a restart, with each fault in force"
slurm_begin
slurm_conf "ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
PluginDir=/usr/lib/$triplet/slurm-wlm:$plugins
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:nvidia_gb300_nvl:4 State=UNKNOWN"
echo "AutoDetect=nvml" > "$S/gres.conf"
check "agent starts for slurmd's cgroup" \
	start_agent "$LOGS/slurm-faults-agent.log" --profile gb300 --device-nodes --cgroup "$T" --root "$ROOT"
/usr/sbin/slurmctld -f "$S/slurm.conf"
check "slurmctld starts" wait_for 20 scontrol ping

# slurmd_start: when the slurmd slurmctld knows last started (seconds).
slurmd_start() {
	date -d "$(scontrol show node localhost | sed -n 's/.*SlurmdStartTime=\([^ ]*\).*/\1/p')" +%s 2>/dev/null || echo 0
}
# restart_slurmd: a fresh slurmd (in the target), until slurmctld has its
# registration: its start time is past the last one's, which it waits for.
restart_slurmd() {
	last=$(slurmd_start)
	pid=$(cat "$S/slurmd.pid" 2>/dev/null)
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	for _ in $(seq 1 50); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	rm -f "$S/slurmd.pid"
	while [ "$(date +%s)" -le "$last" ]; do sleep 0.1; done
	: > "$S/slurmd.log"
	"$in_cgroup" "$T" env "$slurmd_env" /usr/sbin/slurmd -N localhost -f "$S/slurm.conf"
	wait_for 30 sh -c '[ "$(date -d "$(scontrol show node localhost | sed -n "s/.*SlurmdStartTime=\([^ ]*\).*/\1/p")" +%s 2>/dev/null || echo 0)" -gt "$1" ]' _ "$last"
}
# node_view: the node's gres and state as slurmctld has it, once the new
# slurmd registered (its boot time is newer than the restart).
node_view() {
	scontrol show node localhost | sed -n 's/.*\(Gres=[^ ]*\).*/\1/p; s/.*\(State=[^ ]*\).*/\1/p; s/.*\(Reason=.*\)/\1/p' | tr '\n' ' ' | sed 's/ $//'
}
detected() { sed -n 's/.*_get_system_gpu_list_nvml: \([0-9]*\) GPU system device.*/\1/p' "$S/slurmd.log" | tail -n 1; }

"$in_cgroup" "$T" env "$slurmd_env" /usr/sbin/slurmd -N localhost -f "$S/slurm.conf"
registered() { node_gres | grep -q 'gpu:nvidia_gb300_nvl:4(S:0) idle'; }
check "and registers its 4 GPUs" wait_for 30 registered
for mode in lost fallen-off-bus excluded ecc; do
	# Healthy again first: a clean registration, the node resumed.
	"$nvm" fault --root "$ROOT" 1 clear > /dev/null 2>&1
	restart_slurmd
	scontrol update nodename=localhost state=resume > /dev/null 2>&1
	"$nvm" fault --root "$ROOT" 1 $mode > /dev/null 2>&1
	check "GPU 1 $mode: slurmd restarts and registers" restart_slurmd
	n=$(detected)
	echo "   $mode: slurmd's NVML detection counted ${n:-?} GPUs; $(grep -E 'error: (Failed|Creating|Discarding)' "$S/slurmd.log" | sed 's/^[^]]*] //' | sort -u | tr '\n' ';')"
	echo "   $mode: slurmctld: $(node_view)"
	eval "seen_$(echo $mode | tr - _)=\"\${n:-?}|\$(node_view)\""
done
# What Slurm 22.05 does, measured (docs/faults.md): a GPU it cannot open
# or does not see is one fewer than configured, and it drains the node.
drained="Gres=gpu:nvidia_gb300_nvl:3(S:0) State=IDLE+DRAIN+INVALID_REG Reason=gres/gpu count reported lower than configured (3 < 4)"
check_has "lost: NVML counts 4, hands out 3; slurmd registers 3 and the node drains" "4|$drained" "$seen_lost"
check_has "fallen-off-bus: the same" "4|$drained" "$seen_fallen_off_bus"
check_has "excluded: NVML lists 3; the node drains the same way" "3|$drained" "$seen_excluded"
check_eq "ecc: all 4 registered, the node idle (an ECC error leaves the GPU in service)" \
	"4|Gres=gpu:nvidia_gb300_nvl:4(S:0) State=IDLE" "$seen_ecc"
stop_agent
slurm_stop
