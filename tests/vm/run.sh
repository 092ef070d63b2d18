#!/bin/sh
# make vmtest: the engine's kernel tests inside QEMU guests (TCG), on
# Debian kernels other than this machine's. Each kernel comes from Debian's
# archive with apt-get download and is cached under BUILD/vm. The guest is
# a busybox-static initramfs carrying the agent, the test reader, the
# libraries they need and tests/vm/guest.sh; its console is the result.
set -u
out=${1:-build}
mode=${2:-test} # or bench (make vmbench): tests/vm/bench.sh instead of the tests
vm=$out/vm
cache=$vm/cache
limit=${NVM_VM_TIMEOUT:-600}
want=nvm.tests
if [ "$mode" = bench ]; then limit=${NVM_VM_TIMEOUT:-900} want=nvm.bench; fi
. tests/lib/check.sh
mkdir -p "$cache"
. tests/lib/apt.sh

# fetch_kernel META [APT_CONFIG]: the vmlinuz of the kernel package META
# depends on (linux-image-cloud-amd64 -> linux-image-6.1.0-N-cloud-amd64),
# fetched with apt-get download and cached, with the package's ib_core
# module beside it (uncompressed: busybox's insmod reads it whole), which
# the guest loads to test RDMA netlink against the profile's HCAs.
fetch_kernel() {
	conf=${2:-}
	depends() { env ${conf:+APT_CONFIG=$conf} apt-cache depends "$1" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}'; }
	pkg=$(depends "$1")
	if [ -z "$pkg" ] && [ -z "$conf" ]; then
		apt-get update -qq >/dev/null 2>&1
		pkg=$(depends "$1")
	fi
	[ -n "$pkg" ] || { echo "no package $1 in the apt sources" >&2; return 1; }
	if [ ! -s "$cache/$pkg.vmlinuz" ] || [ ! -s "$cache/$pkg.ib_core.ko" ]; then
		t=$(mktemp -d)
		(cd "$t" && env ${conf:+APT_CONFIG=$conf} apt-get download -q "$pkg" >/dev/null 2>&1) &&
			dpkg-deb -x "$t"/*.deb "$t/x" &&
			ko=$(find "$t/x/lib/modules" -name 'ib_core.ko*' | head -n 1) && [ -n "$ko" ] &&
			/usr/bin/python3 -c 'import lzma, sys
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(lzma.decompress(data) if sys.argv[1].endswith(".xz") else data)' \
				"$ko" "$cache/$pkg.ib_core.ko" &&
			cp "$t"/x/boot/vmlinuz-* "$cache/$pkg.vmlinuz.tmp" &&
			mv "$cache/$pkg.vmlinuz.tmp" "$cache/$pkg.vmlinuz"
		rm -rf "$t"
	fi
	[ -s "$cache/$pkg.vmlinuz" ] && echo "$cache/$pkg.vmlinuz"
}

# copy_with_libs FILE ROOT: FILE and the shared libraries it loads, at
# their own paths under ROOT.
copy_with_libs() {
	cp "$1" "$2/"
	for lib in $(ldd "$1" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
		mkdir -p "$2$(dirname "$lib")"
		cp -L "$lib" "$2$lib"
	done
}

# copy_with_libs_arm64 FILE ROOT: the same for an arm64 binary, whose
# libraries (its NEEDED entries, and theirs) come from the arm64 sysroot
# and the cross compiler's C library; all go to ROOT/lib.
copy_with_libs_arm64() {
	cp "$1" "$2/"
	mkdir -p "$2/lib"
	todo=$1
	while [ -n "$todo" ]; do
		next=
		for f in $todo; do
			for n in $(aarch64-linux-gnu-readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
				[ -e "$2/lib/$n" ] && continue
				for d in "$sysroot/usr/lib/aarch64-linux-gnu" "$sysroot/lib/aarch64-linux-gnu" /usr/aarch64-linux-gnu/lib; do
					if [ -e "$d/$n" ]; then cp -L "$d/$n" "$2/lib/$n"; next="$next $d/$n"; break; fi
				done
				[ -e "$2/lib/$n" ] || echo "note: arm64: no $n for $f" >&2
			done
		done
		todo=$next
	done
	cp -L /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 "$2/lib/"
}

# make_initramfs ARCH BUILD BUSYBOX: the guest's initramfs for ARCH, from the
# binaries in BUILD, as $vm/initrd-ARCH.gz.
make_initramfs() {
	arch=$1 from=$2 root=$vm/root-$1
	rm -rf "$root"
	mkdir -p "$root/bin" "$root/sys" "$root/proc" "$root/dev"
	cp "$3" "$root/bin/busybox"
	cp tests/vm/init "$root/init"
	cp tests/vm/guest.sh "$root/guest.sh"
	cp tests/vm/bench.sh "$root/bench.sh"
	cp tests/vm/figures.sh "$root/figures.sh"
	cp tests/vm/noise.sh "$root/noise.sh"
	cp tests/vm/timescale.sh "$root/timescale.sh"
	cp tests/lib/check.sh "$root/check.sh"
	cp profiles/gb300.yaml "$root/gb300.yaml"
	for f in nvmirage nvidia-smi libnvidia-ml.so.1 helpers/reader helpers/bench; do
		if [ "$arch" = arm64 ]; then copy_with_libs_arm64 "$from/$f" "$root"
		else copy_with_libs "$from/$f" "$root"; fi
	done
	chmod 755 "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$vm/initrd-$arch.gz"
}

# busybox_arm64: Debian's busybox-static for arm64, fetched once.
busybox_arm64() {
	bb=$cache/busybox-arm64
	if [ ! -s "$bb" ]; then
		fetch_debs "$(private_apt "$cache" bookworm arm64)" "$cache/debs-arm64" busybox-static || return 1
		t=$(mktemp -d)
		dpkg-deb -x "$cache"/debs-arm64/busybox-static_*.deb "$t" && cp "$t/bin/busybox" "$bb"
		rm -rf "$t"
	fi
	[ -s "$bb" ] && echo "$bb"
}

# crashed LOG: the first line of a kernel crash in a guest's console, if any.
crashed() { tr -d '\r' < "$1" | grep -m 1 -E 'Oops:|BUG:|Kernel panic|traps: PANIC' | sed 's/^\[[^]]*\] //'; }

# qemu_for ARCH INITRD: the emulator command line of a 2-CPU guest (TCG).
# arm64: -cpu max with the cheap pointer-authentication variant
# (kernel-facts: plain max costs 10 s more).
qemu_for() {
	case $1 in
	x86) echo "qemu-system-x86_64 -accel ${NVM_VM_ACCEL:-tcg} -cpu ${NVM_VM_CPU:-max,cx16=off} -initrd $2" ;;
	arm64) echo "qemu-system-aarch64 -M virt -accel tcg -cpu max,pauth-impdef=on -initrd $2" ;;
	esac
}

# with_module ARCH KO: the ARCH initramfs with KO appended as /ib_core.ko
# (a second archive, after padding the first to 512 bytes: the kernel
# unpacks both), as $vm/initrd-ARCH-ib.gz.
with_module() {
	base=$vm/initrd-$1.gz ext=$vm/initrd-$1-ib.gz t=$(mktemp -d)
	cp "$2" "$t/ib_core.ko"
	cp "$base" "$ext"
	pad=$(( (512 - $(stat -c %s "$ext") % 512) % 512 ))
	head -c "$pad" /dev/zero >> "$ext"
	(cd "$t" && echo ib_core.ko | cpio -o -H newc --quiet) | gzip -1 >> "$ext"
	rm -rf "$t"
	echo "$ext"
}

# boot NAME ARCH VMLINUZ: runs the guest, relays its results. The x86 guest CPU has
# no cmpxchg16b (cx16=off): with it, QEMU 7.2's TCG made the 6.12 kernel
# fault in SLUB's per-CPU cmpxchg16b in 2 to 5 of 8 boots with nothing of
# nvmirage's started (nvm.boot_only); without it, 0 of 10. A guest whose
# kernel crashed anyway is booted again, up to 3 times, each crash shown.
boot() {
	name=$1 arch=$2 kernel=$3 log="$vm/$1.$mode.console"
	# NVM_VM_ONLY=TEXT: only the guests whose name has TEXT (for working
	# on one kernel; the full stage boots them all).
	case $name in *"${NVM_VM_ONLY:-}"*) ;; *) echo "note: $name skipped (NVM_VM_ONLY)"; return ;; esac
	console=ttyS0; [ "$arch" = arm64 ] && console=ttyAMA0
	initrd=$vm/initrd-$arch.gz
	if [ -s "${kernel%.vmlinuz}.ib_core.ko" ]; then
		initrd=$(with_module "$arch" "${kernel%.vmlinuz}.ib_core.ko")
	else
		not_ok "$name: no ib_core module for the guest (the RDMA netlink checks need it)"
	fi
	echo "== $name ($(basename "$kernel" .vmlinuz))"
	start=$(date +%s)
	for attempt in 1 2 3; do
		# shellcheck disable=SC2046
		timeout "$limit" $(qemu_for "$arch" "$initrd") \
			-smp 2 -m 1024 -nographic -no-reboot -kernel "$kernel" \
			-append "console=$console lsm=lockdown,capability,landlock,yama,bpf panic=-1 oops=panic quiet $want nvm.hostcal=$hostcal ${NVM_VM_APPEND:-}" \
			< /dev/null > "$log" 2>&1
		rc=$?
		c=$(crashed "$log")
		[ -n "$c" ] || break
		echo "note: $name: the guest kernel crashed (attempt $attempt): $c"
	done
	tr -d '\r' < "$log" | grep -E '^(ok|FAIL|note|bench): ' | sed "s/^/$name: /"
	gp=$(tr -d '\r' < "$log" | grep -c '^ok: ')
	gf=$(tr -d '\r' < "$log" | grep -c '^FAIL: ')
	passed=$((passed + gp)) failed=$((failed + gf))
	if [ -n "$c" ]; then
		not_ok "$name: the guest kernel crashed 3 times (console: $log)"
		tr -d '\r' < "$log" | grep -A 12 -m 1 -E 'Oops:|BUG:' 
	elif [ $rc = 124 ]; then
		not_ok "$name: the guest did not power off within $limit s (console: $log)"
	elif ! tr -d '\r' < "$log" | grep -q '^== guest done'; then
		not_ok "$name: the guest did not finish its tests (qemu status $rc; console: $log)"
		tail -n 20 "$log"
	elif [ "$mode" = bench ]; then
		tr -d '\r' < "$log" | grep -q '^bench: done' || not_ok "$name: the benchmark did not finish (console: $log)"
	elif [ "$gp" = 0 ]; then
		not_ok "$name: the guest ran no test"
	fi
	echo "$name: $gp passed, $gf failed in the guest, $(( $(date +%s) - start )) s"
}

for tool in qemu-system-x86_64 qemu-system-aarch64 aarch64-linux-gnu-readelf cpio /bin/busybox; do
	command -v "$tool" > /dev/null || { not_ok "$tool is not installed (tests/deps.sh --test installs it)"; summary; exit 1; }
done
# The arm64 build (make ARCH=arm64, which the vmtest target runs first).
sysroot=$out/arm64/sysroot
[ -x "$out/arm64/nvmirage" ] || { not_ok "no arm64 build in $out/arm64 (make ARCH=arm64 OUT=$out/arm64)"; summary; exit 1; }
# The host's own speed at the work the agent does, measured now (its
# fastest round, the least disturbed): each guest measures the same and
# scales its time limits by the ratio.
hostcal=$("$out/helpers/bench" calibrate | sed -n 's/^fastest_ns=//p')
[ -n "$hostcal" ] || { not_ok "bench calibrate on the host"; summary; exit 1; }
echo "note: host calibration: $hostcal ns"
make_initramfs x86 "$out" /bin/busybox
if k=$(fetch_kernel linux-image-cloud-amd64); then
	boot "bookworm 6.1 cloud-amd64" x86 "$k"
else
	not_ok "fetch the bookworm cloud-amd64 kernel with apt-get download"
fi
if k=$(fetch_kernel linux-image-cloud-amd64 "$(private_apt "$cache" bookworm-backports amd64)"); then
	boot "bookworm-backports 6.12 cloud-amd64" x86 "$k"
else
	not_ok "fetch the bookworm-backports cloud-amd64 kernel with apt-get download"
fi
if ! bb=$(busybox_arm64); then
	not_ok "fetch busybox-static for arm64 with apt-get download"
elif ! make_initramfs arm64 "$out/arm64" "$bb"; then
	not_ok "make the arm64 initramfs"
else
	# 6.1 on arm64 loads fentry programs but cannot attach them (-524):
	# the agent must fall back to tp_btf by itself.
	for suite in bookworm bookworm-backports; do
		v=6.1; [ $suite = bookworm ] || v=6.12
		if k=$(fetch_kernel linux-image-cloud-arm64 "$(private_apt "$cache" $suite arm64)"); then
			boot "$suite $v cloud-arm64" arm64 "$k"
		else
			not_ok "fetch the $suite cloud-arm64 kernel with apt-get download"
		fi
	done
fi
summary
