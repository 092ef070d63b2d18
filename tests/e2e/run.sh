#!/bin/sh
# End to end with programs nobody here wrote: pciutils, hwloc, and a Slurm
# cluster (munge, slurmctld, slurmd started by the test) whose srun jobs read
# the redirected files. Needs root.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
nvm=$(pwd)/$out/nvmirage
reader=$(pwd)/$out/helpers/reader
[ "$(id -u)" = 0 ] || { echo "e2e tests need root"; echo "0 passed, 1 failed"; exit 1; }
cg2=$(cgroup2_root)
T=$cg2/nvme-target
O=$cg2/nvme-other
ROOT=/run/nve
LOGS=/tmp/nvme-logs
rm -rf "$LOGS"; mkdir -p "$LOGS" "$T" "$O"
e2e_cleanup() {
	stop_agent
	[ -n "${slurm_cleanup:-}" ] && $slurm_cleanup
	for c in "$T" "$O"; do
		echo 1 > "$c/cgroup.kill" 2>/dev/null; sleep 0.2; rmdir "$c" 2>/dev/null
	done
}
trap e2e_cleanup EXIT
started=$(date +%s)

. tests/e2e/readers.sh
. tests/e2e/slurm.sh

echo "e2e stage took $(( $(date +%s) - started )) s"
summary
