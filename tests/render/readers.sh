#!/bin/sh
# Real readers on a rendered tree, before any BPF: lspci (pointed at the
# tree's sys/bus/pci) and hwloc (with the tree as its file system root).
set -u
out=${1:-build}
. tests/lib/check.sh
nvm=$out/nvmirage
root=/tmp/nvrd$$
trap 'rm -rf "$root"' EXIT

for p in gb300 h100; do
	rm -rf "$root"
	check "$p: render" "$nvm" -q render --profile $p --root "$root"
	want=$(grep -c 'bus_id:' profiles/$p.yaml)
	dev=$(sed -n 's/.*device_id: 0x\(....\)10DE.*/\1/p' profiles/$p.yaml | head -1 | tr A-F a-f)
	got=$(lspci -A linux-sysfs -O sysfs.path="$root/sys/bus/pci" -D -n -d 10de: | grep -c "0302: 10de:$dev")
	check_eq "$p: lspci lists the profile's $want GPUs as 10de:$dev" "$want" "$got"
	bus=$(sed -n 's/.*bus_id: "\([^"]*\)".*/\1/p' profiles/$p.yaml | tr A-F a-f)
	list=$(lspci -A linux-sysfs -O sysfs.path="$root/sys/bus/pci" -D -d 10de: | cut -d' ' -f1 | sort | tr '\n' ' ')
	check_eq "$p: lspci lists exactly the profile's bus ids" "$(echo "$bus" | sort | tr '\n' ' ')" "$list"
	# NUMA nodes: every GPU's NUMANode as its root complex says.
	numa=$(lspci -A linux-sysfs -O sysfs.path="$root/sys/bus/pci" -vmm -D -d 10de: | grep -c '^NUMANode:')
	check_eq "$p: lspci -vmm shows a NUMA node for each GPU" "$want" "$numa"
	xml=$(HWLOC_FSROOT="$root" lstopo-no-graphics --of xml 2>/dev/null)
	n=$(printf '%s\n' "$xml" | grep -c "pci_type=\"0302 \[10de:$dev\]")
	check_eq "$p: hwloc finds the $want GPUs as PCI devices" "$want" "$n"
done
# gb300's GPUs 2 and 3 are on NUMA node 1.
rm -rf "$root"
"$nvm" -q render --profile gb300 --root "$root"
node=$(lspci -A linux-sysfs -O sysfs.path="$root/sys/bus/pci" -vmm -D -s 0018:06:00.0 | sed -n 's/^NUMANode:\t//p')
check_eq "gb300: 0018:06:00.0 is on NUMA node 1" "1" "$node"
summary
