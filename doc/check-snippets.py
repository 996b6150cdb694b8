#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-snippets.py [GUIDE.md] -- the guide's code is the example's code.

In doc/writing-a-plugin.md a fenced code block that follows a line
    <!-- file: examples/sink_count/sink_count.c -->
is a piece of that file (path relative to doc/). For every file named that way,
its pieces, in the order the guide shows them and joined with one blank line,
must be the whole file, byte for byte. Every file under the example directories
must be shown. Exit 0 when all match, 1 (with a diff) when not.
"""
import difflib
import os
import re
import sys

MARK = re.compile(r"^<!-- file: (\S+) -->\s*$")
FENCE = re.compile(r"^(```+|~~~+)")


def pieces(guide):
    """{path: [text, ...]} in document order"""
    out = {}
    lines = open(guide, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        f = FENCE.match(lines[j]) if j < len(lines) else None
        if not f:
            sys.exit(f"{guide}:{i + 1}: a '<!-- file: -->' line must be followed by a code fence")
        body = []
        j += 1
        while j < len(lines) and not lines[j].startswith(f.group(1)):
            body.append(lines[j])
            j += 1
        if j == len(lines):
            sys.exit(f"{guide}:{i + 1}: unterminated code fence")
        out.setdefault(m.group(1), []).append("\n".join(body) + "\n")
        i = j + 1
    return out


def main():
    docdir = os.environ.get("srcdir") or os.path.dirname(os.path.abspath(__file__))
    guide = sys.argv[1] if len(sys.argv) > 1 else os.path.join(docdir, "writing-a-plugin.md")
    shown = pieces(guide)
    bad = 0
    for rel, parts in shown.items():
        path = os.path.join(docdir, rel)
        try:
            want = open(path, encoding="utf-8").read()
        except OSError as e:
            print(f"{guide}: names {rel}: {e}")
            bad += 1
            continue
        got = "\n".join(parts)
        if got != want:
            bad += 1
            print(f"{guide}: the {len(parts)} piece(s) of {rel} differ from the file:")
            sys.stdout.writelines(difflib.unified_diff(
                want.splitlines(True), got.splitlines(True), rel, f"{rel} as shown in the guide"))
        else:
            print(f"ok: {rel} is shown whole in {len(parts)} piece(s)")
    examples = os.path.join(docdir, "examples")
    for root, dirs, files in os.walk(examples):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # .deps, .libs of a build
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(root, name), docdir)
            if name.startswith(".") or name.endswith((".so", ".o", ".lo", ".dirstamp")):
                continue
            if rel not in shown:
                print(f"{guide}: does not show {rel}")
                bad += 1
    if not shown:
        print(f"{guide}: no '<!-- file: -->' blocks found")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
