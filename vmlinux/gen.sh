#!/bin/sh
# Regenerates vmlinux/<arch>/vmlinux.h from a kernel's BTF.
#   vmlinux/gen.sh x86                          # from the running kernel
#   vmlinux/gen.sh arm64 path/to/vmlinuz-arm64  # from a kernel Image: its BTF
#                                               # is cut out of it first
#   vmlinux/gen.sh ARCH path/to/btf-blob        # from raw BTF
# The headers are committed so that a build needs no BTF of its own.
set -eu
arch=${1:?usage: gen.sh ARCH [IMAGE-OR-BTF]}
btf=${2:-/sys/kernel/btf/vmlinux}
out=$(dirname "$0")/$arch/vmlinux.h
mkdir -p "$(dirname "$out")"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# An uncompressed kernel Image carries its BTF as one blob: the header
# (magic 0xeB9F, version 1, flags 0, hdr_len 24, then type_off, type_len,
# str_off, str_len) says how long it is. The largest such blob is vmlinux's.
python3 - "$btf" "$tmp" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
if data[:2] == b"\x9f\xeb" and len(data) == 24 + sum(struct.unpack_from("<4I", data, 8)[2:]):
    open(sys.argv[2], "wb").write(data)
    sys.exit(0)
best = None
at = data.find(b"\x9f\xeb\x01\x00\x18\x00\x00\x00")
while at >= 0:
    type_off, type_len, str_off, str_len = struct.unpack_from("<4I", data, at + 8)
    size = 24 + max(type_off + type_len, str_off + str_len)
    if type_off == 0 and str_off == type_len and at + size <= len(data):
        if not best or size > best[1]:
            best = (at, size)
    at = data.find(b"\x9f\xeb\x01\x00\x18\x00\x00\x00", at + 1)
if not best:
    sys.exit("no BTF blob in " + sys.argv[1])
open(sys.argv[2], "wb").write(data[best[0]:best[0] + best[1]])
print("BTF blob of %d bytes at offset %d" % (best[1], best[0]), file=sys.stderr)
PY
bpftool btf dump file "$tmp" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(wc -l < "$out") lines) from $btf"
