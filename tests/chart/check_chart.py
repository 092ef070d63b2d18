"""Checks the Helm chart without Helm: Chart.yaml and values.yaml parse,
values.yaml (and each good example) validates against values.schema.json,
each bad example is rejected, and every .Values path the templates use
exists in values.yaml. Prints one ok:/FAIL: line per check."""
import json
import re
import sys
from pathlib import Path

import jsonschema
import yaml

chart = Path(sys.argv[1])
failed = 0


def check(ok, what):
    global failed
    print(("ok: " if ok else "FAIL: ") + what)
    failed += not ok


meta = yaml.safe_load((chart / "Chart.yaml").read_text())
check(meta.get("apiVersion") == "v2" and meta.get("name") == "nvmirage" and "version" in meta,
      "Chart.yaml parses: apiVersion v2, name nvmirage, a version")
values = yaml.safe_load((chart / "values.yaml").read_text())
schema = json.loads((chart / "values.schema.json").read_text())
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
errors = list(validator.iter_errors(values))
check(not errors, "values.yaml validates against values.schema.json" +
      "".join("\n  " + e.message for e in errors))


def merged(over):
    out = json.loads(json.dumps(values))
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k].update(v)
        else:
            out[k] = v
    return out


good = {
    "a custom profile": {"profile": {"name": "gb300", "custom": "version: 1\n"}},
    "h100 with 2 GPUs": {"profile": {"name": "h100", "gpus": 2}},
    "privileged": {"privileged": True},
    "two resource names": {"resourceNames": ["nvidia.com/gpu", "nvidia.com/mig-1g.10gb"]},
    "no driver user space": {"driverUserspace": False},
    "the node's nvidia-smi": {"nvidiaSmi": "/host/usr/bin/nvidia-smi"},
}
bad = {
    "an unknown profile name": {"profile": {"name": "v100"}},
    "privileged as a string": {"privileged": "yes"},
    "port 70000": {"listenPort": 70000},
    "no resource names": {"resourceNames": []},
    "a resource name without a domain": {"resourceNames": ["gpu"]},
    "a relative tree root": {"treeRoot": "dev/nvm"},
    "a tree root with ..": {"treeRoot": "/dev/../etc"},
    "65 GPUs": {"profile": {"name": "gb300", "gpus": 65}},
    "a misspelt key": {"privilegd": True},
    "poll every 10 ms": {"kubelet": {"pollMs": 10}},
    "driverUserspace as a string": {"driverUserspace": "no"},
    "a relative nvidia-smi": {"nvidiaSmi": "nvidia-smi"},
}
for name, over in good.items():
    check(validator.is_valid(merged(over)), "accepted: " + name)
for name, over in bad.items():
    check(not validator.is_valid(merged(over)), "rejected: " + name)


def has_path(tree, path):
    for part in path:
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


used = set()
for t in (chart / "templates").glob("*"):
    used |= set(re.findall(r"\.Values((?:\.[A-Za-z0-9_]+)+)", t.read_text()))
missing = [u for u in sorted(used) if not has_path(values, u.strip(".").split("."))]
check(len(used) > 10 and not missing,
      "all %d .Values paths of the templates are in values.yaml%s" % (len(used), " (missing: %s)" % missing if missing else ""))
ds = (chart / "templates" / "daemonset.yaml").read_text()
for need in ["hostPID: true", "/sys/fs/bpf", "/sys/kernel/btf", "/sys/kernel/security",
             "/sys/kernel/tracing", "/var/lib/kubelet/pod-resources", "path: /healthz",
             "path: /readyz", "checksum/config", "--kubernetes",
             "name: NODE_NAME\n              valueFrom:\n                fieldRef:\n                  fieldPath: spec.nodeName"]:
    check(need in ds, "the DaemonSet has " + need)
caps = (chart / "values.yaml").read_text().split("capabilities:")[1].split("\n\n")[0]
lines = [l for l in caps.splitlines() if l.strip().startswith("- ")]
check(lines and all("#" in l for l in lines), "every capability says why it is needed (%d)" % len(lines))
check(values["tolerations"] == [{"operator": "Exists"}], "tolerates every taint by default")
shipped = sorted(p.stem for p in (chart.parent.parent / "profiles").glob("*.yaml"))
check(sorted(schema["properties"]["profile"]["properties"]["name"]["enum"]) == shipped,
      "the schema's profile names are the shipped profiles (%s)" % ", ".join(shipped))
version = re.search(r'NVM_VERSION "([^"]+)"', (chart.parent.parent / "agent/lib/version.h").read_text()).group(1)
check(values["image"]["repository"] == "nvmirage" and values["image"]["tag"] == version,
      "the default image is the one `make image` builds (nvmirage:%s)" % version)
check(meta.get("appVersion") == version, "appVersion is nvmirage's version (%s)" % version)
sys.exit(1 if failed else 0)
