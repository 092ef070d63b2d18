"""Prints the NUMA nodes (comma separated) an hwloc XML topology (stdin)
gives as the locality of the PCI device with the given bus id: the nodeset
of its nearest ancestor that has one. "missing" if there is no such device."""
import sys
import xml.etree.ElementTree as ET

bus = sys.argv[1].lower()
root = ET.parse(sys.stdin).getroot()
parent = {c: p for p in root.iter() for c in p}


def nodes(mask):
    bits = int(mask.replace(",", "").replace("0x", ""), 16)
    return [str(i) for i in range(bits.bit_length()) if bits >> i & 1]


for obj in root.iter("object"):
    if obj.get("type") == "PCIDev" and obj.get("pci_busid", "").lower() == bus:
        node = obj
        while node in parent:
            node = parent[node]
            if node.get("nodeset"):
                print(",".join(nodes(node.get("nodeset"))))
                sys.exit(0)
print("missing")
