#!/bin/sh
# The Helm chart, checked without Helm (not installable here): it parses,
# its values validate against its schema, bad values are rejected.
set -u
out=${1:-build}
python3 tests/chart/check_chart.py charts/nvmirage > "$out/chart.log" 2>&1
rc=$?
cat "$out/chart.log"
p=$(grep -c '^ok:' "$out/chart.log")
f=$(grep -c '^FAIL:' "$out/chart.log")
[ $rc = 0 ] || [ "$f" -gt 0 ] || f=1 # a crash is a failure
echo "$p passed, $f failed"
[ "$f" = 0 ]
