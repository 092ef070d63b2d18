# nvtop (Debian trixie's 3.2, which needs trixie's C library) on nvmirage's
# NVML: in a debootstrapped trixie root, entered with chroot from a target
# cgroup, in a mount namespace of its own that has /proc, /sys, /dev, the
# tree (where the redirect points) and the library bound in; its snapshot
# mode (-s) prints what it reads as JSON. Sourced by run.sh.

echo "== nvtop (Debian trixie's, in a debootstrapped trixie root)"
. tests/lib/containers.sh
containers_init "$out"
nvroot=$(debian_rootfs trixie nvtop)
check "a trixie root file system with nvtop" test -x "$nvroot/usr/bin/nvtop"
# in_trixie PROFILE COMMAND...: COMMAND in the trixie root, in a target.
in_trixie() {
	prof=$1; shift
	timeout 60 "$nvm" -q exec --profile "$prof" --root /run/nvn -- \
		unshare -m --propagation private sh -c '
		r=$1 lib=$2; shift 2
		mkdir -p "$r/run/nvn" "$r/opt/nvmirage"
		mount --rbind /proc "$r/proc" && mount --rbind /sys "$r/sys" &&
		mount --rbind /dev "$r/dev" && mount --bind /run/nvn "$r/run/nvn" &&
		mount --bind "$lib" "$r/opt/nvmirage" &&
		exec chroot "$r" env LD_LIBRARY_PATH=/opt/nvmirage "$@"' sh "$nvroot" "$(dirname "$lib")" "$@" 2>&1
}
r=$(in_trixie gb300 nvtop -s); rc=$?
echo "$r" | head -n 30 > "$LOGS/nvtop.json"
check_eq "nvtop -s exits 0" 0 $rc
r=$(echo "$r" | /usr/bin/python3 -c '
import json, sys
for g in json.load(sys.stdin):
    print(g["device_name"], g["temp"], g["power_draw"], g["gpu_clock"], g["mem_clock"], g["gpu_util"], g["fan_speed"])
' 2>&1)
echo "$r" | sed 's/^/   nvtop: /'
check_eq "a GPU per profile entry, each named" 4 "$(echo "$r" | grep -c '^NVIDIA GB300 NVL ')"
# gb300: 31 to 39 C, 190 to 266 W, idle clocks 390 and 3996 MHz, 10 to 45 %
# busy, no fan (passively cooled).
check_eq "each within the profile's temperature, power, clocks and load; no fan" 4 "$(echo "$r" |
	awk '{t=$4+0; p=$5+0; u=$8+0} $4 ~ /C$/ && t>=31 && t<=39 && p>=190 && p<=266 && $6=="390MHz" && $7=="3996MHz" && u>=10 && u<=45 && $9=="None"' | wc -l)"
