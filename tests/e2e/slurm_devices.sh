# Slurm confining jobs to their GPUs, as on a real node: slurmd in a target
# cgroup with the gb300 profile's device nodes finds the GPUs itself through
# nvmirage's NVML (AutoDetect=nvml: Debian's gpu/nvml plugin from contrib,
# through a private apt configuration, next to Debian's own plugins), and
# task/cgroup with ConstrainDevices=yes denies each job the GPUs it was not
# given. This machine mixes cgroup v1 and v2, which Slurm's cgroup/v2
# refuses ("Hybrid mode is not supported"): its cgroup/v1 plugin writes the
# job's devices.deny; the job stays in slurmd's cgroup v2 (the target).
# Sourced by run.sh.

echo "== Slurm: AutoDetect=nvml, ConstrainDevices=yes (cgroup/v1)"
. tests/lib/apt.sh
arch=$(dpkg --print-architecture)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine)
slurm_version=$(dpkg-query -W -f '${Version}' slurmd)
cache=$(pwd)/$out/cache
conf=$(private_apt "$cache" bookworm "$arch" "main contrib")
# Any build of the same Slurm release loads (Slurm checks the release).
plugin_deb=$(APT_CONFIG=$conf apt-cache madison slurm-wlm-nvml-plugin |
	awk -v v="${slurm_version%%-*}" '$3 ~ "^" v "-" {print $3; exit}')
check "Debian has slurm-wlm-nvml-plugin for Slurm ${slurm_version%%-*} ($plugin_deb)" test -n "$plugin_deb"
check "apt-get download slurm-wlm-nvml-plugin=$plugin_deb" \
	fetch_debs "$conf" "$cache/debs" "slurm-wlm-nvml-plugin=$plugin_deb"
rm -rf "$cache/slurm-nvml"
dpkg-deb -x "$cache"/debs/slurm-wlm-nvml-plugin_*.deb "$cache/slurm-nvml"
plugins=$cache/slurm-nvml/usr/lib/$triplet/slurm-wlm
check "it has gpu_nvml.so" test -f "$plugins/gpu_nvml.so"
nm -D --defined-only "$out/libnvidia-ml.so.1" | awk '{print $3}' | sort > "$LOGS/slurm-exported"
missing=$(nm -D --undefined-only "$plugins/gpu_nvml.so" | awk '$2 ~ /^nvml/ {print $2}' | sort |
	comm -23 - "$LOGS/slurm-exported" | tr '\n' ' ')
check_eq "nvmirage's NVML exports every nvml function the plugin calls" "" "$missing"

slurm_begin
slurm_conf "ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
PluginDir=/usr/lib/$triplet/slurm-wlm:$plugins
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:nvidia_gb300_nvl:4 State=UNKNOWN"
echo "AutoDetect=nvml" > "$S/gres.conf"
cat > "$S/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainDevices=yes
CONF

check "agent starts for slurmd's cgroup (with device nodes)" \
	start_agent "$LOGS/slurm-devices-agent.log" --profile gb300 --device-nodes --cgroup "$T" --root "$ROOT"
# slurmd and its slurmstepds load libnvidia-ml.so.1 from nvmirage's build.
# No LD_LIBRARY_PATH: slurmd's dynamic linker finds nvmirage's NVML where
# the container toolkit puts it (the agent's driver user space).
slurmd_env="-uLD_LIBRARY_PATH"
r=$(timeout 60 "$in_cgroup" "$T" env "$slurmd_env" /usr/sbin/slurmd -N localhost -f "$S/slurm.conf" -G 2>&1)
echo "$r" | grep 'Gres Name' | sed 's/^/   slurmd -G: /'
check_has "slurmd -G: Slurm's gpu/nvml plugin detects 4 GPUs" "4 GPU system device(s) detected" "$r"
check_eq "typed nvidia_gb300_nvl (the type AutoDetect=nvidia gives them)" 4 \
	"$(echo "$r" | grep -c 'Gres Name=gpu Type=nvidia_gb300_nvl ')"
check_eq "with their device files" "File=/dev/nvidia0 File=/dev/nvidia1 File=/dev/nvidia2 File=/dev/nvidia3" \
	"$(echo "$r" | grep -o 'File=[^ ]*' | tr '\n' ' ' | sed 's/ $//')"
check_eq "links: to NVSwitches, none between GPUs" "Links=-1,0,0,0 Links=0,-1,0,0 Links=0,0,-1,0 Links=0,0,0,-1" \
	"$(echo "$r" | grep -o 'Links=[^ ]*' | tr '\n' ' ' | sed 's/ $//')"
/usr/sbin/slurmctld -f "$S/slurm.conf"
check "slurmctld starts" wait_for 20 scontrol ping
"$in_cgroup" "$T" env "$slurmd_env" /usr/sbin/slurmd -N localhost -f "$S/slurm.conf"
registered() { node_gres | grep -q 'gpu:nvidia_gb300_nvl:4(S:0) idle'; }
check "slurmd registers gpu:nvidia_gb300_nvl:4(S:0) (AutoDetect=nvml)" wait_for 40 registered
echo "   sinfo: $(node_gres)"

# What a job sees: the GPU list in /proc, its environment, which nodes open
# (EPERM: the device cgroup; ENXIO: allowed, no driver behind it), and what
# NVML says to the nvidia-smi the agent delivers (found in PATH: no such
# file on this node) and to NVIDIA's (the nvml stage fetched it; it finds
# NVML where it looks, with no LD_LIBRARY_PATH).
smi_bin=$cache/nvidia-smi/usr/lib/nvidia/current/nvidia-smi
job='echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
echo "proc=$(ls /proc/driver/nvidia/gpus | wc -l)"
for m in 0 1 2 3; do echo "nvidia$m=$(head -c 1 /dev/nvidia$m 2>&1 | sed "s/.*: //")"; done
nvidia-smi -L
nvidia-smi --query-gpu=index,uuid --format=csv,noheader
env -u LD_LIBRARY_PATH '"$smi_bin"' -L 2>&1 | sed "s/^/nvidia-smi: /"
# The first job holds its GPUs until the second has run.
for _ in $(seq 1 300); do [ -z "${HOLD:-}" ] || [ -e "$HOLD" ] && break; sleep 0.2; done'
uuid() { echo "GPU-3a7f5c2e-1b4d-4e8a-9c6f-0d2b8e4a1f0$(($1 + 1))"; }

timeout 90 srun -N1 --gres=gpu:2 --export=ALL,HOLD="$S/release" sh -c "$job" > "$S/job1.out" 2>&1 &
job1=$!
held() { grep -q '^1, ' "$S/job1.out"; }
check "a first job holds 2 GPUs" wait_for 60 held
r=$(timeout 60 srun -N1 --gres=gpu:2 sh -c "$job" 2>&1)
touch "$S/release"
wait $job1
r1=$(cat "$S/job1.out")
for pair in "first:$r1" "second:$r"; do
	name=${pair%%:*}; out=${pair#*:}
	echo "$out" | sed "s/^/   $name job: /"
	check_has "$name job: CUDA_VISIBLE_DEVICES=0,1" "CUDA_VISIBLE_DEVICES=0,1" "$out"
	check_has "$name job: /proc lists all 4 GPUs, as on a real node" "proc=4" "$out"
	# The two nodes it may open, from what the kernel says, not from Slurm.
	mine=$(echo "$out" | sed -n 's/^nvidia\([0-3]\)=No such device or address$/\1/p' | tr '\n' ' ' | sed 's/ $//')
	denied=$(echo "$out" | grep -c '^nvidia[0-3]=Operation not permitted$')
	check_eq "$name job: 2 nodes open (ENXIO: no driver), 2 denied (EPERM)" "2 2" \
		"$(echo $mine | wc -w) $denied"
	want=""; n=0
	for m in $mine; do want="$want$(printf 'GPU %d: NVIDIA GB300 NVL (UUID: %s)' $n "$(uuid "$m")")
"; n=$((n + 1)); done
	check_eq "$name job: nvidia-smi -L (the delivered one) lists exactly those 2, as GPU 0 and 1" "2 ${want%
}" "$n $(echo "$out" | grep '^GPU ')"
	check_has "$name job: NVML numbers them 0 and 1" "1, $(uuid "${mine##* }")" \
		"$(echo "$out" | grep '^1, ')"
	check_eq "$name job: NVIDIA's nvidia-smi -L lists the same 2" "$(echo "${want%
}" | sed 's/^/nvidia-smi: /')" "$(echo "$out" | grep '^nvidia-smi: ')"
	eval "mine_$name=\"$mine\""
done
check "the two jobs got different GPUs ($mine_first / $mine_second)" test "$mine_first" != "$mine_second"
stop_agent

# Links between GPUs (tests/nvml/bridged.yaml: 0-1 x6, 2-3 x6, 1-2 x2, 4-5 x18).
check "agent starts with the bridged profile" start_agent "$LOGS/slurm-bridged-agent.log" \
	--profile tests/nvml/bridged.yaml --device-nodes --cgroup "$T" --root "$ROOT"
mkdir -p "$S/bridged"
sed 's/^NodeName=.*/NodeName=localhost CPUs='"$(nproc)"' Gres=gpu:8/' "$S/slurm.conf" > "$S/bridged/slurm.conf"
cp "$S/gres.conf" "$S/cgroup.conf" "$S/bridged/"
r=$(timeout 60 "$in_cgroup" "$T" env "$slurmd_env" /usr/sbin/slurmd -N localhost -f "$S/bridged/slurm.conf" -G 2>&1)
check_eq "slurmd -G: Links between GPUs as the profile wires them" "$(printf '%s\n' \
	Links=-1,6,0,0,0,0,0,0 Links=6,-1,2,0,0,0,0,0 Links=0,2,-1,6,0,0,0,0 Links=0,0,6,-1,0,0,0,0 \
	Links=0,0,0,0,-1,18,0,0 Links=0,0,0,0,18,-1,0,0 Links=0,0,0,0,0,0,-1,0 Links=0,0,0,0,0,0,0,-1)" \
	"$(echo "$r" | grep -o 'Links=[^ ]*')"
stop_agent
slurm_stop
