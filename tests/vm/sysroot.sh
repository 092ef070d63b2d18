#!/bin/sh
# The arm64 libraries `make ARCH=arm64` links against: Debian 12's arm64
# packages of every library nvmirage uses (and of what they load), fetched
# with apt-get download and unpacked into BUILD/sysroot. C library and
# kernel headers come from the cross compiler's own packages
# (gcc-aarch64-linux-gnu). The build is dynamic: GnuTLS, which
# libmicrohttpd needs, loads p11-kit, and Debian has no static p11-kit.
#   tests/vm/sysroot.sh BUILD
set -eu
out=$1
root=$out/sysroot
[ -e "$root/.done" ] && exit 0
. tests/lib/apt.sh
mkdir -p "$out/cache"
conf=$(private_apt "$out/cache" bookworm arm64)
dev="libbpf-dev libelf-dev zlib1g-dev libyaml-dev libjson-c-dev libprotobuf-c-dev
     libnghttp2-dev libmicrohttpd-dev libgnutls28-dev nettle-dev libgmp-dev
     libtasn1-6-dev libidn2-dev libunistring-dev libp11-kit-dev libzstd-dev"
run="libbpf1 libelf1 zlib1g libyaml-0-2 libjson-c5 libprotobuf-c1 libnghttp2-14
     libmicrohttpd12 libgnutls30 libnettle8 libhogweed6 libgmp10 libtasn1-6
     libidn2-0 libunistring2 libp11-kit0 libffi8 libzstd1"
# shellcheck disable=SC2086
fetch_debs "$conf" "$out/cache/debs-arm64" $dev $run
rm -rf "$root"
mkdir -p "$root"
for deb in "$out"/cache/debs-arm64/*.deb; do
	dpkg-deb -x "$deb" "$root"
done
# Absolute symlinks (libz.so -> /lib/aarch64-linux-gnu/libz.so.1) would
# lead the linker into the host's own /lib: make them point inside.
find "$root" -type l | while read -r l; do
	t=$(readlink "$l")
	case $t in /*) ln -sfn "$(cd "$root" && pwd)$t" "$l" ;; esac
done
touch "$root/.done"
echo "arm64 sysroot: $(ls "$out"/cache/debs-arm64/*.deb | wc -l) packages in $root"
