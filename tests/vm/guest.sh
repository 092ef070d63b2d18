#!/bin/sh
# The kernel tests that run inside the QEMU guest (busybox sh, as /init's
# child): the engine on the guest's kernel, with real processes in real
# cgroups. The suite runs four times: with what the agent picks (in-kernel
# rewrite, no lockdown here; fentry entry points where they attach), with
# --entry tp_btf, with --strategy assisted, and after lockdown is raised to
# integrity (assisted, picked by the agent itself). Prints
# ok:/FAIL: lines and "N passed, N failed" like the host stages; the host
# script relays them.
#
# What a guest proves: each strategy and entry point loads, attaches and
# redirects on this kernel; lockdown switches the strategy; SIGKILL leaves
# nothing behind; memory ends as it was (fork children included). How
# many reads a load leaves unredirected is a figure of the machine's
# timing, meaningful on the host (its kernel tests and make bench), and
# for the guests in make vmbench. Every time limit here, the agent's and
# the tests', is scaled to this guest's speed (timescale.sh).
. /check.sh
# in_cgroup DIR CMD...: CMD as a process of cgroup DIR
in_cgroup() { d=$1; shift; sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$d" "$@"; }

. /timescale.sh
cg=/sys/fs/cgroup
# nvm.verbose on the kernel command line (NVM_VM_APPEND on the host): the
# agents log at debug level, with libbpf's messages and verifier logs.
verbose=; grep -q nvm.verbose /proc/cmdline && verbose=-v
T=$cg/nvm-target O=$cg/nvm-other
mkdir -p "$T" "$O"
echo "note: kernel $(uname -r), lockdown $(cat /sys/kernel/security/lockdown 2>/dev/null), lsm $(cat /sys/kernel/security/lsm 2>/dev/null)"

# stat_of NAME...: the running agent's counters NAME, summed.
stat_of() {
	/nvmirage status --root /run/nvm | awk -v want=" $* " 'index(want, " " $1 " ") {s += $2} END {print s + 0}'
}
# start_agent ARGS...: `nvmirage run` on the target with the guest's time
# scale and ARGS, in the background (agent=its pid); true once it is ready.
start_agent() {
	# A new file: a killed agent's keeper still writes to the old one.
	rm -f /tmp/agent.log
	/nvmirage $verbose run --profile /gb300.yaml --cgroup "$T" --root /run/nvm \
		--time-scale "$time_scale" "$@" > /tmp/agent.log 2>&1 &
	agent=$!
	# Attaching 20 fentry/fexit pairs takes about 20 s under TCG: a bound
	# well above that, not a timing check.
	for _ in $(seq 1 "$(scaled 200)"); do
		grep -q 'ready:' /tmp/agent.log && return 0
		kill -0 $agent 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# kill_while_looping NAME: the agent SIGKILLed while two readers loop (a
# writable copy of the path and a literal): both end with their paths
# intact; failures come with the readers' and the agent's words.
kill_while_looping() {
	start_agent || not_ok "$1: agent ready"
	in_cgroup "$T" /reader loop 3000 data > /tmp/r1 2>&1 & r1=$!
	in_cgroup "$T" /reader loop 3000 > /tmp/r2 2>&1 & r2=$!
	sleep 1
	kill -KILL $agent
	wait $agent 2>/dev/null
	( sleep "$(scaled 10)"; kill -KILL $r1 $r2 2>/dev/null ) & watchdog=$!
	wait $r1; s1=$?
	wait $r2; s2=$?
	kill $watchdog 2>/dev/null
	if ! check_eq "$1: both finish, intact" "0 0" "$s1 $s2"; then
		sed 's/^/note: reader: /' /tmp/r1 /tmp/r2
		grep -E 'keep|put back|deadline|warn' /tmp/agent.log | tail -n 20 | sed 's/^/note: agent: /'
	fi
}

# nvm.killstress=N on the kernel command line: only kill_while_looping, N
# times (to find what a rare failure there depends on).
stress=$(sed -n 's/.*nvm.killstress=\([0-9]*\).*/\1/p' /proc/cmdline)
if [ -n "$stress" ]; then
	for i in $(seq 1 "$stress"); do
		kill_while_looping "stress $i: agent SIGKILLed while readers loop"
		for _ in $(seq 1 "$(scaled 50)"); do grep -q 'removed its tree' /tmp/agent.log && break; sleep 0.2; done
	done
	summary
	exit
fi

# suite NAME STRATEGY ENTRY [RUN-OPTIONS...]: starts the agent, checks it
# chose STRATEGY and ENTRY, runs the readers in the target and in a
# sibling, stops it.
suite() {
	name=$1 want=$2 entry=$3
	shift 3
	echo "== $name"
	if start_agent "$@"; then ok "$name: agent ready"; else not_ok "$name: agent ready"; cat /tmp/agent.log; return; fi
	check_has "$name: the agent chose $want" "strategy: $want rewrite" "$(cat /tmp/agent.log)"
	check_has "$name: the agent scales its limits to this guest" "time scale $time_scale (--time-scale)" "$(cat /tmp/agent.log)"
	echo "note: $name: $(grep -o 'attached [^;]*' /tmp/agent.log); started in $(awk '
		function t(s) { split(s, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] }
		NR == 1 { first = t($1) } /ready:/ { printf "%.1f s", t($1) - first; exit }' /tmp/agent.log)"
	case $entry in
	fentry) check_has "$name: entry points fentry" "attached fentry/fexit on " "$(cat /tmp/agent.log)" ;;
	*) check_has "$name: entry points tp_btf" "attached tp_btf/sys_enter, tp_btf/sys_exit" "$(cat /tmp/agent.log)" ;;
	esac
	if [ "$entry" = tp_btf ] && [ $# = 0 ]; then
		check_has "$name: the agent says why not fentry" "entry points: tp_btf sys_enter/sys_exit (auto; fentry on the syscall functions loads, but attach fails" "$(cat /tmp/agent.log)"
	fi

	ik0=$(stat_of ik_rewritten) f0=$(stat_of ik_write_faults)
	r=$(in_cgroup "$T" /reader literal)
	check_has "$name: target lists the profile's 4 GPUs" "gpus=4" "$r"
	check_has "$name: target reads the profile's driver version" "version=NVRM version: NVIDIA UNIX" "$r"
	check_has "$name: target: literals intact" "literals_intact=yes" "$r" ||
		/nvmirage status --root /run/nvm 2>&1 | sed "s/^/note: $name: status: /"
	ik1=$(stat_of ik_rewritten) f1=$(stat_of ik_write_faults)
	if [ "$want" = in-kernel ]; then
		# String literals sit in a read-only page: the kernel's write
		# fails (-EFAULT) and the agent rewrites them instead.
		if [ "$f1" -gt "$f0" ]; then ok "$name: literals: the in-kernel write failed $((f1 - f0)) times, the agent redirected them"
		else not_ok "$name: literals: no in-kernel write failed ($f0 -> $f1)"; fi
	fi
	r=$(in_cgroup "$T" /reader buffers 0008:06:00.0)
	check_has "$name: heap and stack buffers: stat" "stat=file" "$r"
	check_has "$name: readlink of a driver link" "readlink=../../../../devices/pci0008:00/0008:06:00.0" "$r"
	check_has "$name: buffers hold their original bytes" "buffers_intact=yes" "$r"
	ik2=$(stat_of ik_rewritten)
	if [ "$want" = in-kernel ]; then
		if [ "$ik2" -gt "$ik1" ]; then ok "$name: buffers: $((ik2 - ik1)) paths rewritten in the kernel"
		else not_ok "$name: buffers: none rewritten in the kernel ($ik1 -> $ik2)"; fi
	else
		check_eq "$name: nothing rewritten in the kernel" 0 "$ik2"
	fi
	# busybox is a static binary: no library of ours could be in it.
	r=$(in_cgroup "$T" cat /proc/driver/nvidia/version)
	check_has "$name: static busybox cat reads the driver version" "NVRM version: NVIDIA UNIX" "$r"
	r=$(in_cgroup "$T" ls /proc/driver/nvidia/gpus | wc -l)
	check_eq "$name: static busybox ls lists 4 GPUs" 4 "$r"
	r=$(in_cgroup "$O" /reader literal)
	check_has "$name: sibling cgroup sees no GPUs" "gpus=0" "$r"
	r=$(in_cgroup "$O" ls /proc/driver/nvidia/gpus 2>&1)
	check_has "$name: sibling: busybox ls finds nothing" "No such file" "$r"
	r=$(in_cgroup "$T" /reader raw)
	check_has "$name: raw syscall(SYS_openat) in the target" "raw=NVRM version" "$r"
	# The driver's user space: NVML where the dynamic linker looks, and
	# nvidia-smi in PATH, its execve redirected (busybox sh: stat, execve).
	r=$(in_cgroup "$T" /reader nvml)
	check_has "$name: dlopen(\"libnvidia-ml.so.1\") finds the tree's NVML: 4 GPUs" "nvml_gpus=4" "$r"
	g0=$(stat_of exec_gone)
	r=$(in_cgroup "$T" sh -c 'nvidia-smi -L')
	check_eq "$name: a shell runs nvidia-smi -L from its PATH: 4 GPUs" 4 "$(echo "$r" | grep -c '^GPU [0-3]: NVIDIA GB300 NVL')"
	g1=$(stat_of exec_gone)
	if [ "$g1" -gt "$g0" ]; then ok "$name: its execve was redirected (exec_gone $g0 -> $g1)"
	else not_ok "$name: its execve was not counted as redirected ($g0 -> $g1)"; fi
	r=$(in_cgroup "$O" /reader nvml)
	check_has "$name: sibling: no NVML" "nvml=libnvidia-ml.so.1: cannot open shared object file" "$r"
	r=$(in_cgroup "$O" sh -c 'nvidia-smi -L' 2>&1)
	check_has "$name: sibling: no nvidia-smi" "not found" "$r"
	# Concurrent readers, through a literal and through a writable global
	# copy ("data": the page the kernel side can write itself): whatever
	# the timing, every path ends as it began, in the parent and in every
	# fork child (a child that copied a patch is repaired before it runs).
	# How many reads went unredirected is make vmbench's figure.
	for where in literal data; do
		arg=; [ $where = data ] && arg=data
		ik0=$(stat_of ik_rewritten)
		r=$(in_cgroup "$T" /reader threads 4 50 $arg)
		check_has "$name: 4 threads x 50 opens ($where): paths intact" "good=" "$r"
		check_late "$name: threads ($where)" "$r" "$(cat /tmp/agent.log)"
		r=$(in_cgroup "$T" /reader tree 10 $arg)
		check_has "$name: threads, forks, exec ($where): none broken" "tree_broken=0" "$r" ||
			echo "$r" | grep -v -E '^(gpu|gpus|version)=' | sed "s/^/note: $name: tree: /"
		check_has "$name: threads, forks, exec ($where): paths intact in parent and children" "tree_reads=" "$r"
		check_late "$name: tree ($where)" "$r" "$(cat /tmp/agent.log)"
		rep0=$(stat_of fork_repairs) unw0=$(stat_of fork_unwaited) room0=$(stat_of room_made)
		miss0=$(stat_of fork_missed)
		r=$(in_cgroup "$T" /reader forks 100 $arg)
		check_has "$name: 100 forks while 2 threads open ($where): parent and every child intact" "forks_broken=0" "$r" ||
			echo "$r" | sed "s/^/note: $name: forks: /"
		check_late "$name: forks ($where)" "$r" "$(cat /tmp/agent.log)"
		echo "note: $name: forks ($where): $(($(stat_of fork_repairs) - rep0)) children repaired ($(($(stat_of room_made) - room0)) after other waits gave way, $(($(stat_of fork_unwaited) - unw0)) not waited for, $(($(stat_of fork_missed) - miss0)) missed), $(echo "$r" | sed -n 's/^forks_opens=//p') opens meanwhile"
		ik1=$(stat_of ik_rewritten)
		if [ "$want" = in-kernel ] && [ $where = data ]; then
			if [ "$ik1" -gt "$ik0" ]; then ok "$name: data: $((ik1 - ik0)) paths rewritten in the kernel"
			else not_ok "$name: data: none rewritten in the kernel"; fi
		fi
	done
	/nvmirage status --root /run/nvm
	grep -E 'deadline passed|slow answer|ready:' /tmp/agent.log | sed "s/^/note: $name: /"

	kill -TERM $agent
	wait $agent
	check_has "$name: SIGTERM: detached" "detached; counters" "$(cat /tmp/agent.log)"
	r=$(in_cgroup "$T" /reader literal)
	check_has "$name: after the agent, the target sees no GPUs" "gpus=0" "$r"
	[ "$failed" = 0 ] || cat /tmp/agent.log
}

p=$(/nvmirage probe 2>&1)
echo "$p"
check_has "probe: BTF found" "btf" "$p"
check_has "probe: no lockdown on this kernel" "lockdown               none" "$p"
check_has "probe: tp_btf loads and attaches" "tp_btf                 yes" "$p"
check_has "probe: bpf_probe_write_user loads without lockdown" "bpf_probe_write_user   yes" "$p"
check_has "probe: in-kernel available" "in-kernel              yes" "$p"
check_has "probe: chosen strategy" "chosen: in-kernel" "$p"
# fentry attaches on x86 6.1 and on 6.12 (kernel-facts: not on arm64 6.1).
fentry=fentry
case "$(uname -m) $(uname -r)" in aarch64\ 6.1.*) fentry=tp_btf ;; esac
check_has "probe: entry points $fentry" "chosen entry: $fentry" "$p"
if [ $fentry = tp_btf ]; then
	check_has "probe: says fentry loads but does not attach" "fentry                 no   loads, but attach fails" "$p"
fi

suite "default" in-kernel $fentry
# The agent killed while readers loop (in-kernel and through the agent):
# none hangs, and afterwards the target sees the host's files again.
kill_while_looping "agent SIGKILLed while readers loop"
check_has "and the writable copy's reader counted its reads" "good=" "$(cat /tmp/r1)"
r=$(in_cgroup "$T" /reader literal)
check_has "after SIGKILL, the target sees no GPUs" "gpus=0" "$r"
# The agent killed while a syscall holds a path the kernel rewrote (a stack
# buffer; the open blocks on a FIFO in the tree until a writer comes), the
# syscall returning before the keeper has acted: the keeper holds the
# in-kernel rewrite's programs (stopped here, so it cannot let them go),
# the agent's end changes nothing in the kernel, and the syscall's own exit
# program puts the bytes back as it returns. With the programs gone with
# the agent, the path would stay rewritten until the keeper's look (on
# fentry, a syscall inside the trampoline when it is replaced returns past
# its fexit program).
start_agent || { not_ok "agent ready for the exit-programs check"; cat /tmp/agent.log; }
mkfifo /run/nvm/proc/driver/nvidia/nvm-fifo
in_cgroup "$T" /reader blocked /proc/driver/nvidia/nvm-fifo /tmp/go > /tmp/blocked 2>&1 &
rb=$!
for _ in $(seq 1 "$(scaled 50)"); do [ "$(stat_of ik_rewritten)" = 1 ] && break; sleep 0.1; done
check_eq "agent SIGKILLed while an open holds a rewritten path, its keeper stopped" "1" "$(stat_of ik_rewritten)"
keeper=$(for p in /proc/[0-9]*; do [ "$(cat "$p/comm" 2>/dev/null)" = nvmirage-keep ] && echo "${p#/proc/}"; done)
kill -STOP $keeper
kill -KILL $agent
wait $agent 2>/dev/null
echo hello > /run/nvm/proc/driver/nvidia/nvm-fifo
for _ in $(seq 1 "$(scaled 50)"); do grep -q after_open= /tmp/blocked && break; sleep 0.1; done
check_has "the open returns with its bytes put back by its exit program" "after_open=intact" "$(cat /tmp/blocked)" ||
	for p in $(cat "$T/cgroup.procs"); do
		echo "note: exit-programs check: pid $p $(cat /proc/$p/comm) $(cat /proc/$p/wchan) stack: $(tr '\n' ' ' < /proc/$p/stack)"
	done
kill -CONT $keeper
for _ in $(seq 1 "$(scaled 50)"); do grep -q 'removed its tree' /tmp/agent.log && break; sleep 0.2; done
check_has "then the keeper lets the exit programs go and removes the tree" "removed its tree at /run/nvm" "$(cat /tmp/agent.log)"
check_lacks "with nothing left to put back" "put back the original bytes" "$(cat /tmp/agent.log)"
touch /tmp/go
wait $rb
check_has "and the reader's path holds its original bytes" "buffer_intact=yes" "$(cat /tmp/blocked)"
rm -f /tmp/go
# The same, the syscall still blocked when the keeper looks: the keeper
# puts the bytes back from the kernel's record of the patch.
start_agent || not_ok "agent ready for the keeper check"
mkfifo /run/nvm/proc/driver/nvidia/nvm-fifo
in_cgroup "$T" /reader blocked /proc/driver/nvidia/nvm-fifo > /tmp/blocked 2>&1 &
rb=$!
for _ in $(seq 1 "$(scaled 50)"); do [ "$(stat_of ik_rewritten)" = 1 ] && break; sleep 0.1; done
check_eq "agent SIGKILLed while an open holds a path rewritten in the kernel" "1" "$(stat_of ik_rewritten)"
# The writer waits in the FIFO's directory: the keeper unmounts the tree
# once the agent is gone, and a working directory inside it outlives that.
(cd /run/nvm/proc/driver/nvidia && for _ in $(seq 1 "$(scaled 100)"); do [ -e /tmp/go ] && break; sleep 0.1; done &&
	echo hello > nvm-fifo) & wb=$!
kill -KILL $agent
wait $agent 2>/dev/null
for _ in $(seq 1 "$(scaled 50)"); do grep -q 'removed its tree' /tmp/agent.log && break; sleep 0.2; done
check_has "its keeper puts the bytes back" "put back the original bytes of 1 rewritten path it left" "$(cat /tmp/agent.log)"
check_has "then removes the tree the agent left mounted" "removed its tree at /run/nvm" "$(cat /tmp/agent.log)"
grep -q 'removed its tree' /tmp/agent.log ||
	grep -E 'keep|tree|put back|unmount|warn|error' /tmp/agent.log | tail -n 8 | sed 's/^/note: agent: /' 
touch /tmp/go
wait $wb
( sleep "$(scaled 10)"; kill -KILL $rb 2>/dev/null ) & watchdog=$!
wait $rb
kill $watchdog 2>/dev/null
check_has "and the reader's path holds its original bytes" "buffer_intact=yes" "$(cat /tmp/blocked)"
rm -rf /run/nvm.sock

suite "forced tp_btf" in-kernel tp_btf --entry tp_btf
suite "forced assisted" assisted $fentry --strategy assisted

# RDMA netlink: with ib_core loaded, libibverbs would take its (empty)
# device list from netlink; where BPF LSM attaches the agent fails a
# target's NETLINK_RDMA socket, elsewhere it says why not.
r=$(in_cgroup "$O" /reader rdma-netlink)
check_eq "rdma netlink: no ib_core yet, no socket" "rdma_netlink=Protocol not supported" "$r"
if insmod /ib_core.ko 2>/tmp/insmod; then
	check "ib_core loads" test -d /sys/module/ib_core
	check_eq "and gives the socket" "rdma_netlink=ok" "$(in_cgroup "$O" /reader rdma-netlink)"
	lsm=no
	/nvmirage probe | grep -q '^  lsm  *yes' && lsm=yes
	# BPF LSM attaches where trampolines do (kernel-facts).
	check_eq "probe: BPF LSM attaches where fentry does" "$([ $fentry = fentry ] && echo yes || echo no)" "$lsm"
	if start_agent; then
		if [ $lsm = yes ]; then
			check_has "rdma netlink: the agent fails a target's socket" "a target's socket(AF_NETLINK, NETLINK_RDMA) fails with EPROTONOSUPPORT" "$(cat /tmp/agent.log)"
			check_eq "a target's NETLINK_RDMA socket: refused" "rdma_netlink=Protocol not supported" "$(in_cgroup "$T" /reader rdma-netlink)"
			check "counted (rdma_netlink_refused)" test "$(stat_of rdma_netlink_refused)" -ge 1
		else
			check_has "rdma netlink: the agent says it cannot fail the socket here" "this kernel has ib_core and no BPF LSM" "$(cat /tmp/agent.log)"
			check_eq "a target's NETLINK_RDMA socket: as the kernel gives it" "rdma_netlink=ok" "$(in_cgroup "$T" /reader rdma-netlink)"
		fi
		check_eq "a sibling's: as the kernel gives it" "rdma_netlink=ok" "$(in_cgroup "$O" /reader rdma-netlink)"
		kill -TERM $agent
		wait $agent
	else
		not_ok "rdma netlink: agent ready"
		cat /tmp/agent.log
	fi
	check_eq "after the agent, a target's socket as the kernel gives it" "rdma_netlink=ok" "$(in_cgroup "$T" /reader rdma-netlink)"
else
	not_ok "insmod ib_core: $(cat /tmp/insmod)"
fi

# Raising lockdown cannot be undone: this run comes last.
echo integrity > /sys/kernel/security/lockdown
p=$(/nvmirage probe 2>&1)
check_has "lockdown integrity: probe sees it" "lockdown               integrity" "$p"
check_has "lockdown integrity: bpf_probe_write_user refused" "bpf_probe_write_user   no   load refused" "$p"
check_has "lockdown integrity: probe chooses assisted" "chosen: assisted" "$p"
r=$(/nvmirage run --profile /gb300.yaml --cgroup "$T" --root /run/nvm --strategy in-kernel 2>&1); rc=$?
check_eq "lockdown integrity: --strategy in-kernel exits 2" 2 "$rc"
check_has "lockdown integrity: and says why" "--strategy in-kernel: not available on this kernel: bpf_probe_write_user load refused (Invalid argument): lockdown is \"integrity\"" "$r"
suite "lockdown integrity" assisted $fentry
check_node_clean
summary
