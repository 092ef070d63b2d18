#!/bin/sh
# End to end with programs nobody here wrote: pciutils, hwloc, and a Slurm
# cluster (munge, slurmctld, slurmd started by the test) whose srun jobs read
# the redirected files. Needs root.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
setup_suite e "$out"
ROOT=/run/nve
e2e_cleanup() {
	stop_agent
	[ -n "${slurm_cleanup:-}" ] && $slurm_cleanup
	remove_cgroups "$T" "$O"
}
on_exit e2e_cleanup
started=$(date +%s)

. tests/e2e/readers.sh
. tests/e2e/slurm_lib.sh
. tests/e2e/slurm.sh
. tests/e2e/slurm_devices.sh
. tests/e2e/slurm_mig.sh
. tests/e2e/slurm_faults.sh

echo "e2e stage took $(( $(date +%s) - started )) s"
check_node_clean
summary
