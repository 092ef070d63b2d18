#!/bin/sh
# Regenerates vmlinux/<arch>/vmlinux.h from a kernel's BTF.
#   vmlinux/gen.sh x86                       # from the running kernel
#   vmlinux/gen.sh arm64 path/to/btf-blob    # from a BTF blob cut from an image
# The headers are committed so that a build needs no BTF of its own.
set -eu
arch=${1:?usage: gen.sh ARCH [BTF-FILE]}
btf=${2:-/sys/kernel/btf/vmlinux}
out=$(dirname "$0")/$arch/vmlinux.h
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(wc -l < "$out") lines) from $btf"
