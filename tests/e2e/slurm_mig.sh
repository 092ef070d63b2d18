# Slurm on a MIG node: slurmd in a target with profiles/a100-mig.yaml (GPU 0
# split as 3g.20gb + 2g.10gb + 1g.5gb x2, GPUs 1-7 whole) finds the MIG
# devices itself (AutoDetect=nvml: Debian's gpu/nvml plugin asks NVML for
# them and reads /proc/driver/nvidia-caps/mig-minors for their nodes), and
# a job given one instance under ConstrainDevices sees that one alone.
# Sourced by run.sh after slurm_devices.sh (which fetched the plugin).

echo "== Slurm on a MIG node: AutoDetect=nvml, ConstrainDevices=yes"
slurm_begin
slurm_conf "ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
PluginDir=/usr/lib/$triplet/slurm-wlm:$plugins
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:nvidia_a100_3g.20gb:1,gpu:nvidia_a100_2g.10gb:1,gpu:nvidia_a100_1g.5gb:2,gpu:nvidia_a100-sxm4-40gb:7 State=UNKNOWN"
echo "AutoDetect=nvml" > "$S/gres.conf"
cat > "$S/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainDevices=yes
CONF
check "agent starts for slurmd's cgroup (a100-mig, device nodes)" \
	start_agent "$LOGS/slurm-mig-agent.log" --profile a100-mig --device-nodes --cgroup "$T" --root "$ROOT"
r=$(timeout 60 "$in_cgroup" "$T" env -u LD_LIBRARY_PATH /usr/sbin/slurmd -N localhost -f "$S/slurm.conf" -G 2>&1)
echo "$r" | grep 'Gres Name' | sed 's/^/   slurmd -G: /'
mig_gres() { echo "$r" | sed -n 's/.*Gres Name=gpu Type=\(nvidia_a100_[^ ]*\) Count=1 .* File=\([^ ]*\) .*/\1 \2/p' | sort; }
check_eq "slurmd -G: Slurm's plugin names the 4 MIG devices from NVML and finds their caps nodes in mig-minors" "$(printf '%s\n' \
	"nvidia_a100_1g.5gb /dev/nvidia0,/dev/nvidia-caps/nvidia-cap84,/dev/nvidia-caps/nvidia-cap85" \
	"nvidia_a100_1g.5gb /dev/nvidia0,/dev/nvidia-caps/nvidia-cap93,/dev/nvidia-caps/nvidia-cap94" \
	"nvidia_a100_2g.10gb /dev/nvidia0,/dev/nvidia-caps/nvidia-cap30,/dev/nvidia-caps/nvidia-cap31" \
	"nvidia_a100_3g.20gb /dev/nvidia0,/dev/nvidia-caps/nvidia-cap21,/dev/nvidia-caps/nvidia-cap22")" "$(mig_gres)"
check_eq "and GPUs 1-7 whole" 7 "$(echo "$r" | grep -c 'Type=nvidia_a100-sxm4-40gb Count=1 .* File=/dev/nvidia[1-7] ')"
/usr/sbin/slurmctld -f "$S/slurm.conf"
check "slurmctld starts" wait_for 20 scontrol ping
"$in_cgroup" "$T" env -u LD_LIBRARY_PATH /usr/sbin/slurmd -N localhost -f "$S/slurm.conf"
# In whatever order slurmctld lists them.
gres_set() { tr ', ' '\n\n' | LC_ALL=C sort | paste -sd' '; }
want_gres=$(echo "gpu:nvidia_a100_3g.20gb:1(S:0),gpu:nvidia_a100_2g.10gb:1(S:0),gpu:nvidia_a100_1g.5gb:2(S:0),gpu:nvidia_a100-sxm4-40gb:7(S:0) idle" | gres_set)
registered() { test "$(node_gres | gres_set)" = "$want_gres"; }
check "slurmd registers the MIG gres and the whole GPUs" wait_for 40 registered
echo "   sinfo: $(node_gres)"

# The node's view (slurmd's cgroup, nothing denied): every MIG device's UUID.
all=$(timeout 30 "$in_cgroup" "$T" "$nvm" smi -L)
uuid_of() { echo "$all" | grep "MIG $1 " | sed -n "${2:-1}s/.*(UUID: \(MIG-[^)]*\)).*/\1/p"; }
caps=$(sed -n 's/.*nvidia-uvm-tools (\([0-9]*\)), nvidia-caps.*(\([0-9]*\): the first.*/\2/p' "$LOGS/slurm-mig-agent.log")
job='echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
for m in 21 22 30 31 84 85 93 94; do echo "cap$m=$(head -c 1 /dev/nvidia-caps/nvidia-cap$m 2>&1 | sed "s/.*: //")"; done
for m in 0 1; do echo "nvidia$m=$(head -c 1 /dev/nvidia$m 2>&1 | sed "s/.*: //")"; done
nvidia-smi -L
env -u LD_LIBRARY_PATH '"$smi_bin"' -L 2>&1 | sed "s/^/nvidia-smi: /"'
opened() { echo "$1" | sed -n 's/^cap\([0-9]*\)=No such device or address$/\1/p' | paste -sd' '; }
gpu0=$(echo "$all" | grep '^GPU 0: ')

r=$(timeout 60 srun -N1 --gres=gpu:nvidia_a100_2g.10gb:1 sh -c "$job" 2>&1)
echo "$r" | sed 's/^/   2g.10gb job: /'
check_eq "2g.10gb job: CUDA_VISIBLE_DEVICES is its MIG device's UUID, as Slurm sets it for MIG" \
	"CUDA_VISIBLE_DEVICES=$(uuid_of 2g.10gb)" "$(echo "$r" | grep '^CUDA_VISIBLE_DEVICES=')"
check_eq "its two caps nodes open (ENXIO: no driver), the other 6 denied (EPERM)" "30 31 6" \
	"$(opened "$r") $(echo "$r" | grep -c '^cap[0-9]*=Operation not permitted$')"
check_eq "its GPU's node opens, GPU 1's is denied" "$(printf 'nvidia0=No such device or address\nnvidia1=Operation not permitted')" \
	"$(echo "$r" | grep '^nvidia[01]=')"
want="$gpu0
  MIG 2g.10gb     Device  0: (UUID: $(uuid_of 2g.10gb))"
check_eq "nvidia-smi -L (the delivered one): GPU 0 and that one MIG device" "$want" "$(echo "$r" | grep -E '^(GPU|  MIG) ')"
check_eq "NVIDIA's nvidia-smi -L: the same" "$(echo "$want" | sed 's/^/nvidia-smi: /')" "$(echo "$r" | grep '^nvidia-smi: ')"

r=$(timeout 60 srun -N1 --gres=gpu:nvidia_a100_1g.5gb:2 sh -c "$job" 2>&1)
echo "$r" | sed 's/^/   1g.5gb x2 job: /'
check_eq "1g.5gb x2 job: both UUIDs in CUDA_VISIBLE_DEVICES" \
	"CUDA_VISIBLE_DEVICES=$(uuid_of 1g.5gb 1),$(uuid_of 1g.5gb 2)" "$(echo "$r" | grep '^CUDA_VISIBLE_DEVICES=')"
check_eq "their 4 caps nodes open" "84 85 93 94" "$(opened "$r")"
check_eq "nvidia-smi -L: GPU 0 and those two, as MIG devices 0 and 1" "$gpu0
  MIG 1g.5gb      Device  0: (UUID: $(uuid_of 1g.5gb 1))
  MIG 1g.5gb      Device  1: (UUID: $(uuid_of 1g.5gb 2))" "$(echo "$r" | grep -E '^(GPU|  MIG) ')"
stop_agent
slurm_stop
