#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tests/unit/layout.py — the source layout doc/architecture.md promises
("Where each piece lives"), checked on the source tree:

  * no C file (.c, .h) in framework/, plugins/ or stack/ has more than 900 lines;
  * no plugin includes another plugin's files: a quoted #include in
    plugins/<name>/ names a file of plugins/<name>/, plugins/common/, the SDK
    (framework/include) or the stack's API (stack/include);
  * framework/ has no include cycle between its modules: a module is a .c file
    with its header of the same name (ab/, whose files share ab_priv.h, is one
    module), and module A depends on B when a file of A includes a header of B;
  * stack/ includes nothing of DPDK (its tests run without EAL).

Each finding is one line naming the file (and line); exit 1 if there is any.
Run from anywhere: top_srcdir (set by make check) or this file's ../.. is the
tree."""
import os
import re
import sys

MAX_LINES = 900
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
INC_ANY = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]')

top = os.environ.get("top_srcdir") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
top = os.path.abspath(top)
bad = []


def c_files(area):
    for root, dirs, files in os.walk(os.path.join(top, area)):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(root, f)


def rel(p):
    return os.path.relpath(p, top)


def includes(path, pattern=INC):
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = pattern.match(line)
            if m:
                yield n, m.group(1)


# 1. size
for area in ("framework", "plugins", "stack"):
    for p in c_files(area):
        with open(p, "rb") as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES:
            bad.append(f"{rel(p)}: {n} lines, more than {MAX_LINES}: split it by role")

# 2. plugins include only their own files, common/ and the APIs
plugins = os.path.join(top, "plugins")
allowed_dirs = [os.path.join(plugins, "common"), os.path.join(top, "framework", "include"),
                os.path.join(top, "stack", "include")]
for name in sorted(os.listdir(plugins)):
    d = os.path.join(plugins, name)
    if not os.path.isdir(d) or name == "common":
        continue
    for p in c_files(os.path.join("plugins", name)):
        for n, inc in includes(p):
            hits = [os.path.join(x, inc) for x in [os.path.dirname(p)] + allowed_dirs]
            found = [h for h in hits if os.path.isfile(h)]
            if not found:
                bad.append(f"{rel(p)}:{n}: #include \"{inc}\" is not in plugins/{name}/, "
                           "plugins/common/ or an API folder")
            elif os.path.commonpath([os.path.realpath(found[0]), d]) != d and \
                    not any(os.path.realpath(found[0]).startswith(os.path.realpath(a) + os.sep)
                            for a in allowed_dirs):
                bad.append(f"{rel(p)}:{n}: #include \"{inc}\" reaches outside plugins/{name}/")

# 3. framework modules without include cycles
fw = os.path.join(top, "framework")


def module(path):
    r = rel(path)
    if r.startswith("framework/ab/"):
        return "ab"
    if r.startswith("framework/include/"):
        return None  # the SDK: headers only, below every module
    base = os.path.splitext(os.path.basename(path))[0]
    return base[:-5] if base.endswith("_priv") else base


deps = {}
for p in c_files("framework"):
    a = module(p)
    if a is None:
        continue
    for n, inc in includes(p):
        target = None
        for base in (os.path.dirname(p), fw, os.path.join(fw, "include")):
            if os.path.isfile(os.path.join(base, inc)):
                target = os.path.join(base, inc)
                break
        b = module(target) if target else None
        if b is not None and b != a:
            deps.setdefault(a, {}).setdefault(b, f"{rel(p)}:{n}")


def cycle_from(start):
    path, seen = [start], {start}

    def walk(m):
        for b in sorted(deps.get(m, {})):
            if b == start:
                return path + [b]
            if b not in seen:
                seen.add(b)
                path.append(b)
                r = walk(b)
                if r:
                    return r
                path.pop()
        return None

    return walk(start)


reported = set()
for m in sorted(deps):
    c = cycle_from(m)
    if c and frozenset(c) not in reported:
        reported.add(frozenset(c))
        how = ", ".join(f"{x} -> {y} ({deps[x][y]})" for x, y in zip(c, c[1:]))
        bad.append(f"framework: include cycle {' -> '.join(c)}: {how}")

# 4. the stack stays free of DPDK
for p in c_files("stack"):
    for n, inc in includes(p, INC_ANY):
        if inc.startswith("rte_") or inc.startswith("lcp/"):
            bad.append(f"{rel(p)}:{n}: #include <{inc}>: stack/ stays free of DPDK and liblcp")

for b in bad:
    print(b)
print(f"layout: {len(bad)} finding(s) in {top}")
sys.exit(1 if bad else 0)
