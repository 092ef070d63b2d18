# lspci and hwloc, run in a target cgroup and outside it, against gb300 and
# h100. Sourced by run.sh.

host_lspci=$(lspci -D | wc -l)
for p in gb300 h100; do
	echo "== $p: pciutils and hwloc"
	check "$p: agent starts" start_agent "$LOGS/$p.log" --profile $p --cgroup "$T" --root "$ROOT"
	want=$(grep -c 'bus_id:' profiles/$p.yaml)
	dev=$(sed -n 's/.*device_id: 0x\(....\)10DE.*/\1/p' profiles/$p.yaml | head -1 | tr A-F a-f)
	bus=$(sed -n 's/.*bus_id: "\([^"]*\)".*/\1/p' profiles/$p.yaml | tr A-F a-f | sort | tr '\n' ' ')
	r=$(timeout 30 "$in_cgroup" "$T" lspci -D -n -d 10de:)
	check_eq "$p: lspci -D -d 10de: lists exactly the profile's GPUs" "$bus" "$(echo "$r" | cut -d' ' -f1 | sort | tr '\n' ' ')"
	check_eq "$p: with device id 10de:$dev" "$want" "$(echo "$r" | grep -c "10de:$dev")"
	r=$(timeout 30 "$in_cgroup" "$T" lspci -vmm -D -d 10de:)
	check_eq "$p: lspci -vmm gives each GPU a NUMA node" "$want" "$(echo "$r" | grep -c '^NUMANode:')"
	numa=$(sed -n 's/.*numa_node: \([0-9]*\).*devices: \[\(.*\)\].*/\1 \2/p' profiles/$p.yaml | head -1)
	first=$(echo "$numa" | sed 's/^[0-9]* "\([^"]*\)".*/\1/' | tr A-F a-f)
	node=$(timeout 30 "$in_cgroup" "$T" lspci -vmm -D -s "$first" | sed -n 's/^NUMANode:\t//p')
	check_eq "$p: $first is on NUMA node ${numa%% *} as the profile says" "${numa%% *}" "$node"
	# One InfiniBand HCA per GPU in both profiles (docs/infiniband.md).
	hcas=$(timeout 30 "$in_cgroup" "$T" lspci -D -d 15b3: | wc -l)
	check_eq "$p: lspci -d 15b3: lists an HCA per GPU" "$want" "$hcas"
	r=$(timeout 30 "$in_cgroup" "$T" lspci -D | wc -l)
	check_eq "$p: plain lspci still lists the host's $host_lspci devices too" "$((host_lspci + want + hcas))" "$r"
	r=$(timeout 30 "$in_cgroup" "$O" lspci -D -d 10de: | wc -l)
	check_eq "$p: outside the targets lspci -d 10de: lists nothing" 0 "$r"
	xml=$(timeout 60 "$in_cgroup" "$T" lstopo-no-graphics --of xml 2>/dev/null)
	check_eq "$p: lstopo shows the $want GPUs as PCI devices 10de:$dev" "$want" \
		"$(printf '%s\n' "$xml" | grep -c "pci_type=\"0302 \[10de:$dev\]")"
	# Each GPU's locality includes the NUMA node its profile says, where
	# this machine has that node (hwloc cannot place a device on a node
	# the machine lacks).
	for b in $bus; do
		w=$(timeout 10 "$in_cgroup" "$T" cat /sys/bus/pci/devices/$b/numa_node)
		[ -d /sys/devices/system/node/node$w ] || { echo "note: $b is on NUMA node $w, which this machine does not have"; continue; }
		n=$(printf '%s\n' "$xml" | python3 tests/e2e/hwloc_numa.py "$b")
		check_has "$p: lstopo places $b under NUMA node $w (locality: nodes $n)" ",$w," ",$n,"
	done
	xml=$(timeout 60 "$in_cgroup" "$O" lstopo-no-graphics --of xml 2>/dev/null)
	check_eq "$p: outside, lstopo shows no NVIDIA device" 0 "$(printf '%s\n' "$xml" | grep -c '\[10de:')"
	stop_agent
done
