#!/bin/sh
# make test: every stage, then one closing count over all of them.
# Stages print "N passed, N failed" (shell tests) or cmocka's summary.
set -u
out=${1:-build}
log=$(mktemp)
status=0
for stage in "tests/run-unit.sh $out" "tests/kernel/run.sh $out" "tests/vm/run.sh $out" "tests/nvml/run.sh $out" "tests/faults/run.sh $out" "tests/e2e/run.sh $out" "tests/kube/run.sh $out" "tests/slinky/run.sh $out" "tests/chart/run.sh $out"; do
	[ -e "${stage%% *}" ] || continue
	echo "### $stage"
	{ sh $stage 2>&1; echo $? > "$log.rc"; } | tee -a "$log"
	if [ "$(cat "$log.rc")" != 0 ]; then
		echo "### $stage: exit status $(cat "$log.rc")"
		status=1
	fi
done
passed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1/p; s/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | awk '{s+=$1} END {print s+0}')
failed=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\2/p; s/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
crashed=$(grep -c -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log")
rm -f "$log" "$log.rc"
failed=$((failed + crashed))
echo
echo "all stages: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && [ $status -eq 0 ]
