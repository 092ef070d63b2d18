#!/bin/sh
# The mock NVML: exported names, every function against gb300 and h100 in a
# target cgroup, DRIVER_NOT_LOADED outside, and `nvmirage smi` byte for byte.
set -u
out=${1:-build}
. tests/lib/check.sh
. tests/lib/agent.sh
setup_suite n "$out"
lib=$(pwd)/$out/libnvidia-ml.so.1
check_nvml=$(pwd)/$out/helpers/check_nvml
on_exit 'remove_cgroups "$T" "$O"'

echo "== exported symbols"
check_eq "soname is libnvidia-ml.so.1" "libnvidia-ml.so.1" \
	"$(objdump -p "$lib" | sed -n 's/^ *SONAME *//p')"
nm -D --defined-only "$lib" | awk '{print $3}' | sort > "$LOGS/exported"
exported=$(cat "$LOGS/exported")
missing=$(grep -v '^#' tests/nvml/symbols.txt | sort | comm -23 - "$LOGS/exported")
check_eq "every name in tests/nvml/symbols.txt is exported" "" "$missing"
check_eq "only nvml* names are exported" "" "$(printf '%s\n' "$exported" | grep -v '^nvml')"

for p in gb300 h100; do
	echo "== $p: every function against the profile, in a target cgroup"
	r=$(timeout 60 "$nvm" -q exec --profile $p --root /run/nvn -- "$check_nvml" "$lib" profiles/$p.yaml)
	echo "$r" | grep FAIL
	n=$(echo "$r" | sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p')
	check "$p: all $n NVML checks pass" test -n "$n" -a "${n:-0}" -gt 100
done
echo "== outside the targets"
r=$(timeout 30 "$in_cgroup" "$O" "$check_nvml" "$lib" --outside)
check_eq "nvmlInit gives DRIVER_NOT_LOADED outside" "3 passed, 0 failed" "$(echo "$r" | tail -1)"
r=$(timeout 30 "$in_cgroup" "$O" "$check_nvml" "$lib" profiles/gb300.yaml | tail -1)
check_lacks "the profile checks fail outside (the check can fail)" " 0 failed" "$r"

echo "== nvmirage smi"
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi -L)
check_eq "smi -L, byte for byte" "$(cat tests/nvml/gb300-L.txt)" "$r"
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi \
	--query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version --format=csv)
check_eq "smi --query-gpu --format=csv, byte for byte" "$(cat tests/nvml/gb300-query.csv)" "$r"
r=$(timeout 60 "$nvm" -q exec --profile gb300 --root /run/nvn -- "$nvm" smi \
	--query-gpu=index,name,uuid,pci.bus_id,memory.total,driver_version --format=csv,noheader)
check_eq "smi csv,noheader" "$(tail -n +2 tests/nvml/gb300-query.csv)" "$r"
r=$(timeout 30 "$in_cgroup" "$O" "$nvm" smi -L); rc=$?
check_eq "smi outside exits 9, as nvidia-smi does without a driver" 9 $rc
check_has "with nvidia-smi's message" "couldn't communicate with the NVIDIA driver" "$r"
summary
