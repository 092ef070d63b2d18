#!/bin/sh
# Installs, with apt, the Debian 12 packages nvmirage builds and tests with.
# Used by `make demo` (the build's packages) and `make test` (--test: the
# tests' too). Needs root when something is missing.
set -eu
build="make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libyaml-dev
       libjson-c-dev pkg-config libprotobuf-c-dev protobuf-c-compiler libnghttp2-dev
       libmicrohttpd-dev"
test="libcmocka-dev pciutils hwloc busybox-static python3 util-linux
      slurmctld slurmd slurm-client munge python3-grpcio python3-protobuf
      python3-grpc-tools python3-jsonschema python3-yaml python3-psutil python3-blessed curl
      qemu-system-x86 qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross cpio
      podman runc debootstrap golang-go
      infiniband-diags ibverbs-utils ibverbs-providers"
want=$build
[ "${1:-}" = --test ] && want="$build $test"
missing=
for p in $want; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
fi
