#!/usr/bin/python3
"""nvmirage's nvml.h against NVIDIA's: every function nvmirage declares has
NVIDIA's prototype, every struct NVIDIA's size and field offsets, every
constant NVIDIA's value; and every function the library exports is
declared. Reads both headers with clang's AST (JSON), compiles one program
against each header to print sizes, offsets and values, and compares.

    against_nvidia.py OURS_H THEIRS_H LIB WORKDIR

Prints "ok: ..." and "FAIL: ..." lines; exit status 1 on any FAIL.
"""
import json
import os
import re
import subprocess
import sys

# Names nvmirage declares that NVIDIA's header (CUDA 12.4's) is too old to
# have; anything else missing there is a failure.
NEWER_THAN_HEADER = {"NVML_DEVICE_ARCH_BLACKWELL"}
# Names NVIDIA's header never declares: the internal export table that
# nvidia-smi asks the library for (nvml/export_table.c).
INTERNAL = {"nvmlInternalGetExportTable"}

ours_h, theirs_h, lib, work = sys.argv[1:5]
failures = 0


def ok(msg):
    print("ok: " + msg)


def fail(msg):
    global failures
    failures += 1
    print("FAIL: " + msg)


def ast(header):
    # NVML_NO_UNVERSIONED_FUNC_DEFS: NVIDIA's header then declares nvmlInit,
    # nvmlDeviceGetCount, ... as functions of their own, as nvmirage
    # exports them, instead of macros for the _v2 names.
    out = subprocess.run(["clang", "-x", "c", "-DNVML_NO_UNVERSIONED_FUNC_DEFS",
                          "-Xclang", "-ast-dump=json", "-fsyntax-only", header],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["inner"]


def decls(nodes, kind):
    return {n["name"]: n for n in nodes if n.get("kind") == kind and n.get("name")
            and not n.get("isImplicit") and "loc" in n}


def enum_constants(nodes):
    names = []
    for n in nodes:
        if n.get("kind") == "EnumDecl":
            names += [c["name"] for c in n.get("inner", []) if c.get("kind") == "EnumConstantDecl"]
    return names


def macros(header):
    out = subprocess.run(["clang", "-x", "c", "-dM", "-E", header], check=True,
                         capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        m = re.match(r"#define ((?:NVML|nvml)\w*) ", line)
        if m and not m.group(1).endswith("_H"):
            names.append(m.group(1))
    return names


def records(nodes):
    """tag -> (struct or union, [field names]), for the named records of a header."""
    out = {}
    for n in nodes:
        if n.get("kind") == "RecordDecl" and n.get("name") and n.get("completeDefinition"):
            out[n["name"]] = (n.get("tagUsed", "struct"),
                              [f["name"] for f in n.get("inner", []) if f.get("kind") == "FieldDecl"])
    return out


def run_against(header, body, name):
    """Compiles body with header included, runs it, returns its lines."""
    src = os.path.join(work, name + ".c")
    exe = os.path.join(work, name)
    with open(src, "w") as f:
        f.write('#define NVML_NO_UNVERSIONED_FUNC_DEFS\n#include "%s"\n'
                "#include <stddef.h>\n#include <stdio.h>\n" % os.path.abspath(header))
        f.write("#define SHOW(x) _Generic((x), char *: show_s, const char *: show_s, "
                "default: show_i)(#x, (x))\n")
        f.write('static void show_s(const char *n, const char *v) { printf("%s \\"%s\\"\\n", n, v); }\n')
        f.write('static void show_i(const char *n, long long v) { printf("%s %lld\\n", n, v); }\n')
        f.write("int main(void)\n{\n" + body + "\treturn 0;\n}\n")
    r = subprocess.run(["cc", "-std=gnu11", "-w", src, "-o", exe], capture_output=True, text=True)
    if r.returncode:
        fail("compiling against %s: %s" % (header, r.stderr.strip()[:2000]))
        return None
    return subprocess.run([exe], check=True, capture_output=True, text=True).stdout.splitlines()


def compare(what, body, name):
    mine = run_against(ours_h, body, name + "-ours")
    theirs = run_against(theirs_h, body, name + "-nvidia")
    if mine is None or theirs is None:
        return
    diffs = [(a, b) for a, b in zip(mine, theirs) if a != b]
    for a, b in diffs:
        fail("%s: %s is %s here, %s in NVIDIA's" % ((what,) + tuple(a.rsplit(" ", 1)) +
                                                     (b.rsplit(" ", 1)[1],)))
    if not diffs and len(mine) == len(theirs):
        ok("%s: all %d match NVIDIA's" % (what, len(mine)))


ours, theirs = ast(ours_h), ast(theirs_h)

# Functions: same prototype (clang's spelling of the type, typedef names
# and all), and declared for every name the library exports.
our_fns, their_fns = decls(ours, "FunctionDecl"), decls(theirs, "FunctionDecl")
bad = 0
for name, fn in sorted(our_fns.items()):
    if name not in their_fns:
        if name not in NEWER_THAN_HEADER | INTERNAL:
            fail("function %s: NVIDIA's header does not declare it" % name)
            bad += 1
        continue
    a, b = fn["type"]["qualType"], their_fns[name]["type"]["qualType"]
    if a != b:
        fail("function %s: nvmirage declares %s, NVIDIA %s" % (name, a, b))
        bad += 1
if not bad:
    ok("all %d function prototypes match NVIDIA's" % len(our_fns))
exported = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True,
                          text=True).stdout.split()
exported = {w for w in exported if w.startswith("nvml")}
undeclared = sorted(exported - set(our_fns))
if undeclared:
    fail("exported but not declared in nvml.h: " + ", ".join(undeclared))
else:
    ok("every one of the %d exported functions is declared in nvml.h" % len(exported))
unexported = sorted(set(our_fns) - exported)
if unexported:
    fail("declared but not exported: " + ", ".join(unexported))

# Structs: size and every field's offset.
our_recs, their_recs = records(ours), records(theirs)
body = ""
for tag, (kind, fields) in sorted(our_recs.items()):
    if tag not in their_recs:
        fail("%s %s: NVIDIA's header does not define it" % (kind, tag))
        continue
    if their_recs[tag][0] != kind:
        fail("%s %s: NVIDIA's is a %s" % (kind, tag, their_recs[tag][0]))
        continue
    missing = [f for f in fields if f not in their_recs[tag][1]]
    if missing:
        fail("%s %s: NVIDIA's has no field %s" % (kind, tag, ", ".join(missing)))
        continue
    body += '\tprintf("sizeof(%s %s) %%zu\\n", sizeof(%s %s));\n' % (kind, tag, kind, tag)
    for f in fields:
        body += ('\tprintf("offsetof(%s %s, %s) %%zu\\n", offsetof(%s %s, %s));\n'
                 % (kind, tag, f, kind, tag, f))
compare("struct sizes and field offsets", body, "layout")

# Typedefs: the same size (an enum where NVIDIA has an enum, ...).
body = ""
for name, td in sorted(decls(ours, "TypedefDecl").items()):
    if name not in decls(theirs, "TypedefDecl"):
        fail("typedef %s: NVIDIA's header does not define it" % name)
        continue
    if "(*)" not in td["type"]["qualType"]:
        body += '\tprintf("sizeof(%s) %%zu\\n", sizeof(%s));\n' % (name, name)
compare("typedef sizes", body, "typedefs")

# Constants: enum values and macros.
their_names = set(enum_constants(theirs)) | set(macros(theirs_h))
body, absent = "", []
for name in enum_constants(ours) + macros(ours_h):
    if name in their_names:
        body += "\tSHOW(%s);\n" % name
    else:
        absent.append(name)
compare("constants", body, "constants")
unexpected = sorted(set(absent) - NEWER_THAN_HEADER)
if unexpected:
    fail("constants NVIDIA's header does not define: " + ", ".join(unexpected))
else:
    ok("only %s is newer than NVIDIA's header" % ", ".join(sorted(absent)))

sys.exit(1 if failures else 0)
