#!/usr/bin/env python3
"""Writes a 16-GPU profile (as HGX-class nodes with 16 GPU partitions
have) from profiles/h100.yaml: its 8 GPUs and 8 more on the same two root
complexes, each with its own bus id, UUID, serial and minor.
usage: sixteen.py PROFILE OUT"""
import re
import sys

src, out = sys.argv[1], sys.argv[2]
text = open(src).read()
buses = ["0000:19:00.0", "0000:2B:00.0", "0000:3B:00.0", "0000:5E:00.0",
         "0000:9B:00.0", "0000:AC:00.0", "0000:BB:00.0", "0000:DC:00.0"]
more = "".join(
    '  - index: %d\n    uuid: "GPU-344e1aa0-d0ea-ba06-729f-5261a1d9%04x"\n'
    '    serial: "16500040969%02d"\n    minor_number: %d\n    pci: {bus_id: "%s"}\n'
    % (8 + i, 0x4f00 + i, 8 + i, 8 + i, b) for i, b in enumerate(buses))
text = text.replace("num_devices: 8", "num_devices: 16")
# the new devices after the last of the 8
last = text.index('pci: {bus_id: "0000:DB:00.0"}\n') + len('pci: {bus_id: "0000:DB:00.0"}\n')
text = text[:last] + more + text[last:]
# each root complex takes the four new GPUs beside its own
text = text.replace('"0000:5D:00.0"]}', '"0000:5D:00.0", "%s"]}' % '", "'.join(buses[:4]))
text = text.replace('"0000:DB:00.0"]}', '"0000:DB:00.0", "%s"]}' % '", "'.join(buses[4:]))
if text.count("  - index:") != 16 or len(re.findall(r'"0000:[0-9A-F]{2}:00\.0"', text)) < 32:
    sys.exit("sixteen.py: %s does not look like the 8-GPU h100 profile" % src)
open(out, "w").write("# 16 GPUs: profiles/h100.yaml with 8 more (tests/nvml/sixteen.py)\n" + text)
