#!/bin/sh
# The agent's layers, lowest first: a file may include its own layer's
# headers and those of the layers below, never one above.
set -u
. tests/lib/check.sh
layers="lib profile render engine daemon kube smi cli"
rank() { n=0; for l in $layers; do [ "$l" = "$1" ] && { echo $n; return; }; n=$((n + 1)); done; echo -1; }
up=
for f in $(find agent -name '*.[ch]' | sort); do
	own=$(echo "$f" | cut -d/ -f2)
	r=$(rank "$own")
	for inc in $(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$f" | sort -u); do
		[ "$(rank "$inc")" -le "$r" ] || up="$up $f->$inc"
	done
done
check_eq "agent/: no include points up a layer ($layers)" "" "$up"
folders=$(find agent -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | tr '\n' ' ')
check_eq "agent/ has exactly those folders" "$(echo $layers | tr ' ' '\n' | sort | tr '\n' ' ')" "$folders"
check_eq "and no source file outside them" "" "$(find agent -maxdepth 1 -type f | tr '\n' ' ')"
summary
