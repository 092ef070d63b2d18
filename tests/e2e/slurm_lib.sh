# A one-node Slurm cluster (Debian's 22.05: munge, slurmctld, slurmd started
# here, on loopback ports) in a directory of its own. Sourced by slurm.sh
# and slurm_devices.sh, which write slurm.conf's node-specific lines.

# slurm_begin: the directory, a munge key and munged.
slurm_begin() {
	S=$(mktemp -d /tmp/nvme-slurm.XXXXXX)
	chmod 755 "$S"
	MUNGE_SOCK=$S/munge/munge.socket.2
	export SLURM_CONF=$S/slurm.conf
	slurm_cleanup=slurm_stop
	mkdir -p "$S/munge" "$S/state" "$S/spool"
	chown munge:munge "$S/munge"; chmod 755 "$S/munge"
	runuser -u munge -- mungekey --create --keyfile="$S/munge/munge.key" >/dev/null 2>&1 ||
		dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 2>/dev/null
	chown munge:munge "$S/munge/munge.key"; chmod 600 "$S/munge/munge.key"
	runuser -u munge -- munged --socket="$MUNGE_SOCK" --key-file="$S/munge/munge.key" \
		--pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" \
		--seed-file="$S/munge/munged.seed"
	check "munged starts" wait_for 10 test -S "$MUNGE_SOCK"
}

# slurm_conf LINES: slurm.conf with the common settings, then LINES.
slurm_conf() {
	cat > "$S/slurm.conf" <<-CONF
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
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core
	MpiDefault=none
	JobAcctGatherType=jobacct_gather/none
	AccountingStorageType=accounting_storage/none
	ReturnToService=2
	GresTypes=gpu
	PartitionName=all Nodes=localhost Default=YES MaxTime=INFINITE State=UP
	$1
	CONF
}

slurm_stop() {
	for pf in "$S"/slurmd.pid "$S"/slurmctld.pid "$S"/munge/munged.pid; do
		[ -f "$pf" ] && kill "$(cat "$pf")" 2>/dev/null
	done
	sleep 1
	for pf in "$S"/slurmd.pid "$S"/slurmctld.pid "$S"/munge/munged.pid; do
		[ -f "$pf" ] && kill -9 "$(cat "$pf")" 2>/dev/null
	done
	rm -rf "$S"
	slurm_cleanup=
}

wait_for() { # SECONDS COMMAND...
	t=$1; shift
	for _ in $(seq 1 $((t * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	return 1
}

node_gres() { sinfo -h -N -o '%G %T' 2>/dev/null; }
