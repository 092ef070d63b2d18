#!/bin/sh
# Runs every unit test, plain and under ASan+UBSan, then the checks of the
# rendered tree with real readers (lspci, hwloc), and of the agent's layers.
set -u
out=${1:-build}
export NVM_SRCDIR=$(pwd)
fail=0
for t in "$out"/unit/test_* "$out"/unit-asan/test_*; do
	echo "== $t"
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 "$t" || fail=1
done
sh tests/render/readers.sh "$out" || fail=1
sh tests/layers.sh || fail=1
exit $fail
