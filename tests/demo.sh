#!/bin/sh
# make demo: on a fresh Debian 12 machine (as root), installs what is missing,
# builds, and shows the gb300 profile's GPUs to a command in a target cgroup
# while the same command outside sees the machine's real (empty) driver files.
set -eu
[ "$(id -u)" = 0 ] || { echo "make demo needs root (it loads BPF programs)"; exit 2; }
tests/deps.sh
make -s
cmd='ls /proc/driver/nvidia/gpus; cat /proc/driver/nvidia/gpus/*/information'
echo
echo "### outside nvmirage: sh -c '$cmd'"
sh -c "$cmd" 2>&1 || true
echo
echo "### nvmirage exec --profile gb300 -- sh -c '$cmd'"
build/nvmirage -q exec --profile gb300 -- sh -c "$cmd"
