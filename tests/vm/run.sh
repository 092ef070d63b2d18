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
limit=${NVM_VM_TIMEOUT:-240}
want=nvm.tests
if [ "$mode" = bench ]; then limit=${NVM_VM_TIMEOUT:-900} want=nvm.bench; fi
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
mkdir -p "$cache"

# private_apt SUITE: an apt configuration of its own for Debian's SUITE
# (lists, state and cache under BUILD/vm), so that the machine's sources
# and architectures stay untouched. Prints the file for APT_CONFIG.
private_apt() {
	d=$(pwd)/$cache/apt-$1
	mkdir -p "$d/state/lists/partial" "$d/cache/archives/partial"
	touch "$d/state/status"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $1 main" > "$d/sources.list"
	cat > "$d/apt.conf" <<-CONF
	Dir::State "$d/state";
	Dir::State::status "$d/state/status";
	Dir::Cache "$d/cache";
	Dir::Etc::SourceList "$d/sources.list";
	Dir::Etc::SourceParts "/nonexistent";
	APT::Architecture "amd64";
	APT::Architectures { "amd64"; };
	CONF
	[ -n "$(ls "$d/state/lists" | grep -v partial)" ] || APT_CONFIG=$d/apt.conf apt-get update -qq >/dev/null 2>&1
	echo "$d/apt.conf"
}

# fetch_kernel META [APT_CONFIG]: the vmlinuz of the kernel package META
# depends on (linux-image-cloud-amd64 -> linux-image-6.1.0-N-cloud-amd64),
# fetched with apt-get download and cached.
fetch_kernel() {
	conf=${2:-}
	depends() { env ${conf:+APT_CONFIG=$conf} apt-cache depends "$1" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}'; }
	pkg=$(depends "$1")
	if [ -z "$pkg" ] && [ -z "$conf" ]; then
		apt-get update -qq >/dev/null 2>&1
		pkg=$(depends "$1")
	fi
	[ -n "$pkg" ] || { echo "no package $1 in the apt sources" >&2; return 1; }
	if [ ! -s "$cache/$pkg.vmlinuz" ]; then
		t=$(mktemp -d)
		(cd "$t" && env ${conf:+APT_CONFIG=$conf} apt-get download -q "$pkg" >/dev/null 2>&1) &&
			dpkg-deb -x "$t"/*.deb "$t/x" &&
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

make_initramfs() {
	root=$vm/root
	rm -rf "$root"
	mkdir -p "$root/bin" "$root/sys" "$root/proc" "$root/dev"
	cp /bin/busybox "$root/bin/busybox"
	cp tests/vm/init "$root/init"
	cp tests/vm/guest.sh "$root/guest.sh"
	cp tests/vm/bench.sh "$root/bench.sh"
	cp profiles/gb300.yaml "$root/gb300.yaml"
	copy_with_libs "$out/nvmirage" "$root"
	copy_with_libs "$out/helpers/reader" "$root"
	copy_with_libs "$out/helpers/bench" "$root"
	chmod 755 "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$vm/initrd.gz"
}

# crashed LOG: the first line of a kernel crash in a guest's console, if any.
crashed() { tr -d '\r' < "$1" | grep -m 1 -E 'Oops:|BUG:|Kernel panic|traps: PANIC' | sed 's/^\[[^]]*\] //'; }

# boot NAME VMLINUZ: runs the guest, relays its results. The guest CPU has
# no cmpxchg16b (cx16=off): with it, QEMU 7.2's TCG made the 6.12 kernel
# fault in SLUB's per-CPU cmpxchg16b in 2 to 5 of 8 boots with nothing of
# nvmirage's started (nvm.boot_only); without it, 0 of 10. A guest whose
# kernel crashed anyway is booted again, up to 3 times, each crash shown.
boot() {
	name=$1 kernel=$2 log="$vm/$1.$mode.console"
	echo "== $name ($(basename "$kernel" .vmlinuz))"
	start=$(date +%s)
	for attempt in 1 2 3; do
		timeout "$limit" qemu-system-x86_64 -accel ${NVM_VM_ACCEL:-tcg} -cpu ${NVM_VM_CPU:-max,cx16=off} \
			-smp 2 -m 1024 -nographic -no-reboot -kernel "$kernel" -initrd "$vm/initrd.gz" \
			-append "console=ttyS0 lsm=lockdown,capability,landlock,yama,bpf panic=-1 oops=panic quiet $want ${NVM_VM_APPEND:-}" \
			< /dev/null > "$log" 2>&1
		rc=$?
		c=$(crashed "$log")
		[ -n "$c" ] || break
		echo "note: $name: the guest kernel crashed (attempt $attempt): $c"
	done
	tr -d '\r' < "$log" | grep -E '^(ok|FAIL|note|bench): ' | sed "s/^/$name: /"
	gp=$(tr -d '\r' < "$log" | grep -c '^ok: ')
	gf=$(tr -d '\r' < "$log" | grep -c '^FAIL: ')
	pass=$((pass + gp)) fail=$((fail + gf))
	if [ -n "$c" ]; then
		bad "$name: the guest kernel crashed 3 times (console: $log)"
		tr -d '\r' < "$log" | grep -A 12 -m 1 -E 'Oops:|BUG:' 
	elif [ $rc = 124 ]; then
		bad "$name: the guest did not power off within $limit s (console: $log)"
	elif ! tr -d '\r' < "$log" | grep -q '^== guest done'; then
		bad "$name: the guest did not finish its tests (qemu status $rc; console: $log)"
		tail -n 20 "$log"
	elif [ "$mode" = bench ]; then
		tr -d '\r' < "$log" | grep -q '^bench: done' || bad "$name: the benchmark did not finish (console: $log)"
	elif [ "$gp" = 0 ]; then
		bad "$name: the guest ran no test"
	fi
	echo "$name: $gp passed, $gf failed in the guest, $(( $(date +%s) - start )) s"
}

for tool in qemu-system-x86_64 cpio /bin/busybox; do
	command -v "$tool" > /dev/null || { bad "$tool is not installed (tests/deps.sh --test installs it)"; echo "$pass passed, $fail failed"; exit 1; }
done
make_initramfs
if k=$(fetch_kernel linux-image-cloud-amd64); then
	boot "bookworm 6.1 cloud-amd64" "$k"
else
	bad "fetch the bookworm cloud-amd64 kernel with apt-get download"
fi
if k=$(fetch_kernel linux-image-cloud-amd64 "$(private_apt bookworm-backports)"); then
	boot "bookworm-backports 6.12 cloud-amd64" "$k"
else
	bad "fetch the bookworm-backports cloud-amd64 kernel with apt-get download"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
