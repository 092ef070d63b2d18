#!/usr/bin/python3
"""Every line of OURS (nvmirage's nvidia-smi -q) is a line of THEIRS
(NVIDIA's nvidia-smi -q on the same GPUs), in the same order and under the
same section path. Keys are compared without their padding (driver 580
pads to column 55, NVIDIA's 550 to 42) and case (550's "Gpu" is 580's
"GPU"); the timestamp is skipped. Prints each line of OURS not found, and
"N of M lines found"; exit 1 if any is missing.

    q_lines_in.py OURS THEIRS
"""
import re
import sys


def lines(path):
    """(section path, key, value) of each line, in order."""
    out, stack = [], []
    for raw in open(path, encoding="utf-8", errors="replace"):
        raw = raw.rstrip("\n")
        if not raw.strip() or raw.startswith("Timestamp"):
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // 4
        m = re.match(r"^ *(.*?) *: (.*)$", raw)
        key, value = (m.group(1), m.group(2)) if m else (raw.strip(), None)
        stack[depth:] = []
        out.append((tuple(stack), key.lower(), value))
        if value is None:
            stack.append(key.lower())
    return out


ours, theirs = lines(sys.argv[1]), lines(sys.argv[2])
at, missing = 0, 0
for line in ours:
    try:
        at = theirs.index(line, at) + 1
    except ValueError:
        missing += 1
        print("not in NVIDIA's, in order: %s" % " / ".join(line[0] + (line[1],)) +
              ("" if line[2] is None else " : " + line[2]))
print("%d of %d lines found" % (len(ours) - missing, len(ours)))
sys.exit(1 if missing else 0)
