# Assertions for the shell tests. Each prints one line; a failure is counted
# (and the assertion returns false, for a caller that adds notes), and
# `summary` prints "N passed, N failed" and sets the exit status.
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok: $*"; }
not_ok() { failed=$((failed + 1)); echo "FAIL: $*"; return 1; }

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
	d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

# check_eq DESCRIPTION WANT GOT
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: want [$2] got [$3]"; fi
}

# check_has DESCRIPTION NEEDLE HAYSTACK
check_has() {
	case "$3" in *"$2"*) ok "$1" ;; *) not_ok "$1: [$2] not in [$3]" ;; esac
}

# check_lacks DESCRIPTION NEEDLE HAYSTACK
check_lacks() {
	case "$3" in *"$2"*) not_ok "$1: [$2] unexpectedly in output" ;; *) ok "$1" ;; esac
}

# check_node_clean: the node's own mount table (this shell's namespace)
# holds no mount of nvmirage's: no tree, nor a bind of one (their source
# is "nvmirage"). Every stage that runs an agent ends with it, its agents
# stopped: a tree left mounted on the node damages it.
check_node_clean() {
	left=$(awk '/ - [^ ]+ nvmirage / {print $5}' /proc/self/mountinfo | tr '\n' ' ')
	check_eq "the node's own mount table holds no mount of nvmirage's" "" "$left"
}

# check_late DESCRIPTION READER-OUTPUT AGENT-LOG: a reader found its paths
# still rewritten after its syscalls (literals_late=, then back) only where
# the agent logged a deadline that passed: the restore or fork repair was
# left to the agent to do when it next ran. Nothing late: a note.
check_late() {
	case "$2" in
	*literals_late=*)
		echo "$2" | grep -E '^literals_(late|back)' | sed "s/^/note: $1: /"
		check_has "$1: late only where a deadline passed" "deadline passed:" "$3" ||
			echo "$3" | grep -E 'warn|error' | tail -n 10 | sed "s/^/note: $1: agent: /" ;;
	*) echo "note: $1: no path late" ;;
	esac
}

summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
