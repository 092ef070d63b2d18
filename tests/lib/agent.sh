# Starting and stopping agents and running commands in cgroups, for the
# kernel and end-to-end tests, benchmarks.

# setup_suite NAME BUILD-DIR: the binaries, root, the cgroup2 mount, and a
# target T and a sibling O cgroup named after the suite.
setup_suite() {
	nvm=$(pwd)/$2/nvmirage
	reader=$(pwd)/$2/helpers/reader
	if [ "$(id -u)" != 0 ]; then
		echo "$1 tests need root"; echo "0 passed, 1 failed"; exit 1
	fi
	cg2=$(cgroup2_root)
	T=$cg2/nvm$1-target
	O=$cg2/nvm$1-other
	LOGS=/tmp/nvm$1-logs
	mkdir -p "$LOGS" "$T" "$O"
}

# on_exit CMD: runs CMD when the script ends, also when it is killed by a
# signal or its output pipe closes, so no agent outlives its test.
on_exit() {
	trap "$1" EXIT
	trap "exit 130" INT
	trap "exit 143" TERM HUP
	trap "exit 141" PIPE
}

# remove_cgroups DIR...: kills what is left in each, then removes it.
remove_cgroups() {
	for c in "$@"; do
		[ -d "$c" ] || continue
		echo 1 > "$c/cgroup.kill" 2>/dev/null; sleep 0.1; rmdir "$c" 2>/dev/null
	done
}

cgroup2_root() {
	findmnt -n -t cgroup2 -o TARGET | head -n 1
}

# $in_cgroup DIR CMD...: runs CMD as a process of cgroup DIR (a script, so
# that timeout can run it).
in_cgroup=$(pwd)/tests/lib/in-cgroup

# start_agent LOG ARGS...: `nvmirage run ARGS` in the background; waits until
# it says it is ready. Sets agent_pid.
start_agent() {
	log=$1; shift
	# A new file: a killed agent's keeper still writes to the old one.
	rm -f "$log"
	"$nvm" run "$@" > "$log" 2>&1 &
	agent_pid=$!
	for _ in $(seq 1 200); do
		grep -q 'ready:' "$log" 2>/dev/null && return 0
		kill -0 "$agent_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "agent did not become ready:"; cat "$log"
	return 1
}

stop_agent() {
	[ -n "${agent_pid:-}" ] || return 0
	kill -TERM "$agent_pid" 2>/dev/null
	wait "$agent_pid" 2>/dev/null
	agent_pid=
}

# status_field ROOT SECTION KEY: one counter of a running agent.
status_field() {
	"$nvm" status --root "$1" -j | python3 -c "import json,sys; print(json.load(sys.stdin)['$2']['$3'])"
}

# fifo_threads PID: how many threads of PID run SCHED_FIFO (policy 1, field
# 41 of /proc/PID/task/TID/stat; the name field has no spaces here).
fifo_threads() {
	cat /proc/"$1"/task/*/stat 2>/dev/null | awk '$41 == 1' | wc -l
}

# agent_notes LOG: the agent's warnings so far (deadlines passed, slow
# answers, refusals), indented, to say why a check that just failed did.
agent_notes() {
	grep -E 'warn|error' "$1" 2>/dev/null | tail -n 8 | sed 's/^/   agent: /'
}

# start_readers N PREFIX CMD...: N copies of CMD at once, in the background,
# each one's output (and errors) in PREFIX1..PREFIXN; readers_pids lists
# them. wait_readers waits for them all.
start_readers() {
	n=$1 prefix=$2
	shift 2
	readers_pids=
	i=1
	while [ "$i" -le "$n" ]; do
		"$@" > "$prefix$i" 2>&1 &
		readers_pids="$readers_pids $!"
		i=$((i + 1))
	done
}
wait_readers() { wait $readers_pids; }

# run_readers N PREFIX CMD...: start_readers and wait_readers.
run_readers() { start_readers "$@"; wait_readers; }

# sum_key KEY FILE...: the sum of the values of KEY=V lines in the files.
sum_key() {
	key=$1; shift
	cat "$@" | sed -n "s/^$key=\([0-9]*\).*/\1/p" | awk '{s += $1} END {print s + 0}'
}

# good_reads [FILE...]: "READS MISSED" summed over the "good=G of N" lines
# of the files (or of standard input).
good_reads() {
	cat "$@" | sed -n 's/^good=\([0-9]*\) of \([0-9]*\)$/\1 \2/p' |
		awk '{g += $1; n += $2} END {print n + 0, n - g}'
}
