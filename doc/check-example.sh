#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check-example.sh — `make check` for doc/writing-a-plugin.md, against the build tree
# (tests/installcheck/run.sh does the same against an installed lcpipe):
#  1. the example plugin, built by doc/Makefile.am with the project's own warnings
#     (.libs/sink_count.so), is listed, described and validated by the build-tree
#     lcpipe, and its validate hook refuses max_size 10 with the JSON path;
#  2. every refusal the guide lists (bad magic, ABI major, ABI minor, descriptor
#     size, kind, duplicate name, shadowing) happens, with the reason, and before
#     any code of the refused file runs: each variant has a constructor that
#     makes lcpipe exit 99 when loaded (shown to work on an accepted variant).
# Environment (doc/Makefile.am sets it): top_builddir, srcdir, CC, DPDK_CFLAGS,
# top_srcdir, PYTHON3.
set -eu
: "${top_builddir:?}" "${top_srcdir:?}" "${srcdir:?}" "${CC:?}"
py=${PYTHON3:-python3}
here=$(pwd)
lcpipe=$top_builddir/framework/lcpipe
example=$srcdir/examples/sink_count

fail() {
	echo "FAIL: $*" >&2
	exit 1
}
[ -x "$lcpipe" ] || fail "$lcpipe is not built"
[ -f .libs/sink_count.so ] || fail "doc/.libs/sink_count.so is not built (make check builds it)"
work=$(mktemp -d "$here/check-example.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

# ---- 1. the example, as built here ----
LCP_PLUGIN_PATH=$here/.libs
export LCP_PLUGIN_PATH
"$lcpipe" list-plugins >"$work/list.txt" || fail "lcpipe list-plugins exited $?"
grep -q '^sink_count  *stage  *1\.0\.0 ' "$work/list.txt" ||
	{ cat "$work/list.txt"; fail "list-plugins does not list sink_count as a stage plugin"; }
echo "ok: list-plugins lists sink_count"

"$lcpipe" describe sink_count --json >"$work/describe.json" || fail "describe sink_count exited $?"
"$py" - "$work/describe.json" <<'EOF' || fail "describe sink_count --json is not what the example declares"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["name"] == "sink_count" and d["kind"] == "stage", d
assert [o["name"] for o in d["options"]] == ["every", "max_size"], d["options"]
assert [(p["name"], p["direction"], p["unit"], p["required"]) for p in d["ports"]] == \
    [("in", "in", "pkt", True)], d["ports"]
assert d["counters"] == ["pkts", "bytes", "drop_too_big"], d["counters"]
EOF
echo "ok: describe sink_count --json"

"$lcpipe" check "$example/pipeline.json" || fail "lcpipe check pipeline.json exited $?"
sed 's/"every": 25000/"max_size": 10/' "$example/pipeline.json" >"$work/bad.json"
grep -q '"max_size": 10' "$work/bad.json" || fail "could not derive bad.json from pipeline.json"
rc=0
"$lcpipe" check "$work/bad.json" 2>"$work/bad.err" || rc=$?
cat "$work/bad.err"
[ $rc -eq 78 ] || fail "lcpipe check with max_size 10: exit $rc, expected 78"
grep -q '^error: stages\[1\]\.options: max_size 10 is shorter than an Ethernet header' "$work/bad.err" ||
	fail "the validate hook's message, with its JSON path, is missing"
echo "ok: validate refuses max_size 10 with exit 78"

# ---- 2. what the loader refuses, before the file's code runs ----
abi_major=$(sed -n 's/^#define LCP_ABI_MAJOR \([0-9]*\).*/\1/p' "$top_srcdir/framework/include/lcp/plugin.h")
abi_minor=$(sed -n 's/^#define LCP_ABI_MINOR \([0-9]*\).*/\1/p' "$top_srcdir/framework/include/lcp/plugin.h")
[ -n "$abi_major" ] && [ -n "$abi_minor" ] || fail "cannot read the ABI version from lcp/plugin.h"

# variant NAME FIELDS DIR: DIR/NAME.so, sink_count.c with its descriptor header
# fields overridden by FIELDS, named NAME, and a constructor that exits 99
variant() {
	cat >"$work/$1.c" <<EOF
#include <unistd.h>
#include <lcp/lcp.h>
__attribute__((constructor)) static void ran(void) { _exit(99); }
#undef LCP_PLUGIN_HEADER
#define LCP_PLUGIN_HEADER(kind_, name_) .magic = LCP_PLUGIN_MAGIC, .abi_major = LCP_ABI_MAJOR, \\
	.abi_minor = LCP_ABI_MINOR, .size = sizeof(struct lcp_plugin), .kind = (kind_), \\
	.name = "$1", $2
#include "sink_count.c"
EOF
	# shellcheck disable=SC2086 # DPDK_CFLAGS is a list of flags
	"$CC" -std=gnu11 -fPIC -shared -fvisibility=hidden -Wno-override-init \
		-I"$top_srcdir/framework/include" -I"$example" ${DPDK_CFLAGS:-} \
		-o "$work/$3/$1.so" "$work/$1.c" || fail "cannot build variant $1"
}
mkdir "$work/bad" "$work/dup" "$work/first" "$work/ctor"
variant bad_magic '.magic = 0x4c435030u' bad
variant abi_major '.abi_major = LCP_ABI_MAJOR + 1' bad
variant abi_minor '.abi_minor = LCP_ABI_MINOR + 1' bad
variant desc_size '.size = sizeof(struct lcp_plugin) - 8' bad
variant kind '.kind = 9' bad
variant ctor_ok '.kind = LCP_KIND_STAGE' ctor
cp .libs/sink_count.so "$work/dup/a.so"
cp .libs/sink_count.so "$work/dup/b.so"
cp .libs/sink_count.so "$work/first/sink_count.so"

# the probe can fail: an accepted variant is loaded, and its constructor runs
rc=0
LCP_PLUGIN_PATH=$work/ctor "$lcpipe" list-plugins >/dev/null 2>&1 || rc=$?
[ $rc -eq 99 ] || fail "list-plugins with an accepted variant exited $rc, expected 99 from its constructor"
echo "ok: an accepted variant's constructor runs when loaded (exit 99)"

rc=0
LCP_PLUGIN_PATH=$work/bad:$work/dup "$lcpipe" list-plugins >"$work/refused.txt" 2>&1 || rc=$?
cat "$work/refused.txt"
[ $rc -eq 0 ] || fail "lcpipe list-plugins exited $rc (99: a refused plugin's constructor ran)"
expect() {
	grep -qF "$1" "$work/refused.txt" || fail "no refusal \"$1\""
	echo "ok: refused: $1"
}
expect "bad_magic.so: refused: bad magic: expected 0x3150434c, found 0x4c435030"
expect "abi_major.so: refused: ABI major version: expected $abi_major, found $((abi_major + 1))"
expect "abi_minor.so: refused: ABI minor version: expected at most $abi_minor, found $((abi_minor + 1))"
expect "desc_size.so: refused: descriptor size: expected"
expect "kind.so: refused: kind: expected 1..4"
expect "a.so: refused: duplicate plugin name \"sink_count\""
expect "b.so: refused: duplicate plugin name \"sink_count\""

LCP_PLUGIN_PATH=$work/first:$here/.libs "$lcpipe" list-plugins >"$work/shadow.txt" 2>&1 ||
	fail "list-plugins with a shadowed plugin exited $?"
grep -q "^sink_count .*$work/first/sink_count.so\$" "$work/shadow.txt" ||
	{ cat "$work/shadow.txt"; fail "the first sink_count on the search path is not the one used"; }
grep -qF "$here/.libs/sink_count.so: refused: shadowed" "$work/shadow.txt" ||
	{ cat "$work/shadow.txt"; fail "the later sink_count is not reported as shadowed"; }
echo "ok: the first directory on the search path wins, the later file is shadowed"

# a stage that names a refused plugin: lcpipe check says why
sed 's/"plugin": "sink_count"/"plugin": "abi_major"/' "$example/pipeline.json" >"$work/refused.json"
rc=0
LCP_PLUGIN_PATH=$work/bad "$lcpipe" check "$work/refused.json" 2>"$work/refused.err" || rc=$?
cat "$work/refused.err"
[ $rc -eq 78 ] || fail "lcpipe check naming a refused plugin: exit $rc, expected 78"
grep -q "^error: stages\\[1\\]\\.plugin: \"abi_major\": .*ABI major version: expected $abi_major, found" \
	"$work/refused.err" || fail "lcpipe check does not say why abi_major was refused"
echo "ok: lcpipe check names the refused plugin and the reason"
