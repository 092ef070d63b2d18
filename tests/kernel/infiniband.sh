# InfiniBand beside the GPUs: gb300's 4 ConnectX-7 HCAs, one on each GPU's
# root complex, through the real readers in a target (rdma-core's ibstat,
# ibstatus, ibv_devices, ibv_devinfo -l; pciutils' lspci; hwloc's lstopo; a
# reader that walks sysfs as NCCL does; nvmirage's nvidia-smi topo -m),
# their device nodes under a device cgroup, the port-down fault, and
# nothing of it outside. Sourced by run.sh with the gb300 agent running
# (--device-nodes) on $T.

echo "== InfiniBand beside the GPUs"
check_has "the log says how libibverbs will find the HCAs" "InfiniBand: 4 HCAs;" "$(cat "$LOG")"
r=$(timeout 20 "$in_cgroup" "$T" ibstat 2>&1)
check_eq "ibstat: 4 CAs, mlx5_0 to mlx5_3" "mlx5_0 mlx5_1 mlx5_2 mlx5_3" \
	"$(echo "$r" | sed -n "s/^CA '\(.*\)'$/\1/p" | tr '\n' ' ' | sed 's/ $//')"
check_eq "each a ConnectX-7 (MT4129) on firmware 28.43.1000, port Active, LinkUp, rate 400" "4 4 4 4 4" \
	"$(for k in 'CA type: MT4129' 'Firmware version: 28.43.1000' 'State: Active' \
		'Physical state: LinkUp' 'Rate: 400'; do echo "$r" | grep -c "$k"; done | tr '\n' ' ' | sed 's/ $//')"
guids=$(echo "$r" | sed -n 's/.*Node GUID: 0x//p')
check_eq "4 different node GUIDs, with the profile's prefix" 4 "$(echo "$guids" | grep '^9b88c203' | sort -u | wc -l)"
check_eq "port GUID = node GUID (as on mlx5)" "$guids" "$(echo "$r" | sed -n 's/.*Port GUID: 0x//p')"
r=$(timeout 20 "$in_cgroup" "$T" ibstatus 2>&1)
check_eq "ibstatus: 4 ports at 400 Gb/sec (4X NDR), 4: ACTIVE" "4 4" \
	"$(echo "$r" | grep -c 'rate:.*400 Gb/sec (4X NDR)') $(echo "$r" | grep -c 'state:.*4: ACTIVE')"
check_has "and the default GID is fe80:: and the port GUID" \
	"default gid:	 fe80:0000:0000:0000:$(echo "$guids" | head -1 | sed 's/\(....\)\(....\)\(....\)\(....\)/\1:\2:\3:\4/')" "$r"
r=$(timeout 20 "$in_cgroup" "$T" ibv_devices 2>&1)
check_eq "ibv_devices (libibverbs, sysfs): the 4 with their GUIDs" "$(echo "$guids" | sort)" \
	"$(echo "$r" | awk '/mlx5_/ {print $2}' | sort)"
r=$(timeout 20 "$in_cgroup" "$T" ibv_devinfo -l 2>&1)
check_has "ibv_devinfo -l: 4 HCAs found" "4 HCAs found:" "$r"
r=$(timeout 20 "$in_cgroup" "$T" lspci -d 15b3: 2>&1)
check_eq "lspci: 4 Infiniband controllers, ConnectX-7" 4 \
	"$(echo "$r" | grep -c 'Infiniband controller: Mellanox Technologies MT2910 Family \[ConnectX-7\]')"
r=$(timeout 60 "$in_cgroup" "$T" lstopo-no-graphics --of console 2>&1)
check_eq "lstopo: OpenFabrics mlx5_N under each HCA's PCI device" 4 \
	"$(echo "$r" | grep -A1 'PCI 00[01][89]:07:00.0 (InfiniBand)' | grep -c 'OpenFabrics "mlx5_[0-3]"')"
r=$(timeout 20 "$in_cgroup" "$T" "$out/helpers/nccl_walk" 2>&1)
check_eq "NCCL's sysfs walk: each HCA on its GPU's root complex and NUMA node, pci_bus links agree" \
	"$(printf 'mlx5_0 0008:07:00.0 root=pci0008:00 numa=0\nmlx5_1 0009:07:00.0 root=pci0009:00 numa=0\nmlx5_2 0018:07:00.0 root=pci0018:00 numa=1\nmlx5_3 0019:07:00.0 root=pci0019:00 numa=1')" \
	"$(echo "$r" | sed -n 's/^\(mlx5_[0-9]* [^ ]* root=[^ ]*\) .* numa=\([0-9-]*\) pci_bus=same$/\1 numa=\2/p')"
check_has "with the ConnectX-7's class, ids and link" \
	"class=0x020700 vendor=0x15b3 device=0x1021 speed=32.0 GT/s PCIe width=16" "$r"
r=$(timeout 20 "$in_cgroup" "$T" nvidia-smi topo -m 2>&1)
check_eq "nvidia-smi topo -m: GPU0 to NIC0..3: PHB (its own root complex), NODE, SYS, SYS" \
	"PHB NODE SYS SYS" "$(echo "$r" | awk -F '\t' '/^GPU0/ {print $6, $7, $8, $9}')"
check_has "and the NIC legend" "$(printf '  NIC0: mlx5_0\n  NIC1: mlx5_1')" "$r"

echo "== InfiniBand: device nodes, a device cgroup, outside"
r=$(timeout 20 "$in_cgroup" "$T" stat -c '%n %F %t:%T %a' /dev/infiniband/uverbs1 /dev/infiniband/umad1 \
	/dev/infiniband/issm1 2>&1)
check_eq "uverbs1, umad1, issm1: char devices 231:193, 231:1, 231:65" "$(printf '%s\n' \
	"/dev/infiniband/uverbs1 character special file e7:c1 666" \
	"/dev/infiniband/umad1 character special file e7:1 600" \
	"/dev/infiniband/issm1 character special file e7:41 600")" "$r"
check "and rdma_cm, a misc device (10)" test "$(timeout 20 "$in_cgroup" "$T" stat -c %t /dev/infiniband/rdma_cm)" = a
r=$(timeout 20 "$in_cgroup" "$T" head -c 1 /dev/infiniband/uverbs0 2>&1)
check_has "open uverbs0: no driver behind it (ENXIO)" "No such device or address" "$r"
mkdir -p "$T/ibjob"
check_eq "a job cgroup whose device program denies 231:192" attached "$("$out/helpers/devdeny" "$T/ibjob" 231:192 2>&1)"
r=$(timeout 20 "$in_cgroup" "$T/ibjob" head -c 1 /dev/infiniband/uverbs0 2>&1)
check_has "there, open uverbs0: EPERM, as the device cgroup says" "Operation not permitted" "$r"
r=$(timeout 20 "$in_cgroup" "$T/ibjob" head -c 1 /dev/infiniband/uverbs1 2>&1)
check_has "and uverbs1: ENXIO, as before" "No such device or address" "$r"
rmdir "$T/ibjob"
r=$(timeout 20 "$in_cgroup" "$O" sh -c 'ls /sys/class/infiniband /dev/infiniband; ibstat; ibv_devices; lspci -d 15b3:' 2>&1)
check_has "sibling: no /sys/class/infiniband" "cannot access '/sys/class/infiniband'" "$r"
check_has "no /dev/infiniband" "cannot access '/dev/infiniband'" "$r"
check_lacks "no CA for ibstat" "CA 'mlx5_" "$r"
check_lacks "none for ibv_devices" "mlx5_" "$r"
check_lacks "no Mellanox function for lspci" "Mellanox" "$r"
check "and nothing on the node" test ! -e /sys/class/infiniband

echo "== InfiniBand: faults"
r=$("$nvm" fault --root "$ROOT" mlx5_1 port-down 2>&1); rc=$?
check_eq "fault mlx5_1 port-down: status 0" 0 $rc
r=$(timeout 20 "$in_cgroup" "$T" ibstat mlx5_1 2>&1)
check_has "ibstat mlx5_1: port Down, Disabled" "$(printf '\t\tState: Down\n\t\tPhysical state: Disabled')" "$r"
r=$(timeout 20 "$in_cgroup" "$T" ibstatus mlx5_1 2>&1)
check_has "ibstatus: 1: DOWN" "state:		 1: DOWN" "$r"
check_eq "the other 3 still Active" 3 "$(timeout 20 "$in_cgroup" "$T" ibstat | grep -c 'State: Active')"
check_has "status lists it" '"hca":"mlx5_1"' "$("$nvm" status --root "$ROOT" -j | tr -d ' ')"
r=$("$nvm" fault --root "$ROOT" 0009:07:00.0 clear 2>&1); rc=$?
check_eq "clear, by its bus id: status 0" 0 $rc
check_eq "4 Active again" 4 "$(timeout 20 "$in_cgroup" "$T" ibstat | grep -c 'State: Active')"
r=$("$nvm" fault --root "$ROOT" mlx5_0 lost 2>&1); rc=$?
check_eq "a GPU's mode on an HCA: status 2" 2 $rc
check_has "and says which it has" "unknown mode for an HCA (port-down, clear)" "$r"
r=$("$nvm" fault --root "$ROOT" mlx5_7 port-down 2>&1); rc=$?
check_eq "an HCA the profile does not have: status 2" 2 $rc
check_has "and says what it takes" "no GPU or HCA \"mlx5_7\"" "$r"
