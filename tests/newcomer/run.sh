#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/newcomer/run.sh — adding a plugin to the tree is one folder and one line.
#
# What doc/architecture.md ("Building the plugins") and plugins/Makefile.am promise
# a contributor, done as one would do it, in a copy of this checkout:
#  1. the copy (the files git tracks, as they are in the working tree, plus the
#     untracked ones it does not ignore) is bootstrapped, configured and built;
#  2. two plugins are added, each as one new folder and one appended line in
#     plugins/Makefile.am and nothing else: a sink (the guide's sink_count renamed
#     sink_hello) and a counters module (counters_atomic renamed counters_hello,
#     which uses a helper of plugins/common/);
#  3. a plain `make` picks them up (automake's rebuild rules regenerate
#     plugins/Makefile); configure.ac and every other file stay as they were;
#  4. the uninstalled lcpipe lists both from the build tree and describes the sink;
#  5. `lcpipe run` of gen (count N) -> sink_hello with "strategies": {"counters":
#     "counters_hello"} reports exactly N frames and N*size bytes counted through
#     the new module, and no mempool object in use;
#  6. `make install` (DESTDIR) puts both .so files in the plugin directory, without
#     a libtool archive.
# Exit 0 pass, 1 fail, 77 skip (not a git checkout, or a tool missing). Leaves
# nothing behind: the copy lives in a temporary directory removed on exit.
#
# Environment: top_srcdir (default: two levels up from this script), PYTHON3,
# LCP_NEWCOMER_CONFIGURE_FLAGS (default --enable-werror), LCP_NEWCOMER_JOBS
# (make -j, default 2), LCP_NEWCOMER_N (frames, default 20000), TMPDIR.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "${top_srcdir:-$here/../..}" && pwd)
flags=${LCP_NEWCOMER_CONFIGURE_FLAGS---enable-werror}
jobs=${LCP_NEWCOMER_JOBS:-2}
n=${LCP_NEWCOMER_N:-20000}
size=64
# the copy is a tree of its own: no flags, jobserver or -w from a calling make
unset MAKEFLAGS MFLAGS MAKELEVEL

CHECK_NAME=newcomer
# say, skip, fail, $py
# shellcheck source=../check_lib.sh
. "$here/../check_lib.sh"

for tool in git tar make autoreconf "$py"; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done
[ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ] ||
	skip "$top is not the top of a git checkout"

work=$(mktemp -d "${TMPDIR:-/tmp}/lcp-newcomer.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
src=$work/src
mkdir "$src"

# quiet CMD...: run CMD in the copy, its output in $work/log; shown on failure
quiet() {
	(cd "$src" && "$@") >"$work/log" 2>&1 || {
		tail -n 60 "$work/log"
		fail "in the copy: $* failed"
	}
}

# ---- 1. a built copy of this checkout ----
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	tar --null --ignore-failed-read -T - -cf -) | tar -x -C "$src"
quiet ./bootstrap
# shellcheck disable=SC2086 # the flags are words
quiet ./configure $flags
quiet make -j"$jobs"
# its state, to see below what adding the plugins changed
{ git -C "$src" init -q && git -C "$src" add -A &&
	git -C "$src" -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -q -m base; } ||
	fail "cannot record the copy's state"
say "ok: the copy bootstraps, configures ($flags) and builds"

# ---- 2. one folder and one line each ----
mkdir "$src/plugins/sink_hello" "$src/plugins/counters_hello"
sed 's/sink_count/sink_hello/g; s/SINK_COUNT/SINK_HELLO/g' "$top/doc/examples/sink_count/sink_count.c" \
	>"$src/plugins/sink_hello/sink_hello.c"
sed 's/counters_atomic/counters_hello/g' "$top/plugins/counters_atomic/counters_atomic.c" \
	>"$src/plugins/counters_hello/counters_hello.c"
echo 'lcpplugin_LTLIBRARIES += sink_hello/sink_hello.la' >>"$src/plugins/Makefile.am"
echo 'lcpplugin_LTLIBRARIES += counters_hello/counters_hello.la' >>"$src/plugins/Makefile.am"

# ---- 3. make, and nothing else to touch ----
quiet make -j"$jobs"
for p in sink_hello counters_hello; do
	[ -f "$src/plugins/$p/.libs/$p.so" ] || fail "make built no plugins/$p/.libs/$p.so"
done
changed=$(git -C "$src" status --porcelain | sort | tr '\n' ' ')
want=' M plugins/Makefile.am ?? plugins/counters_hello/ ?? plugins/sink_hello/ '
[ "$changed" = "$want" ] || fail "the tracked tree changed beyond the two folders and two lines: $changed"
added=$(git -C "$src" diff --numstat plugins/Makefile.am | cut -f1,2)
[ "$added" = "$(printf '2\t0')" ] || fail "plugins/Makefile.am: expected 2 lines added, 0 removed, got $added"
say "ok: make built sink_hello.so and counters_hello.so; only plugins/Makefile.am (+2 lines) and the two folders changed"

# ---- 4. the uninstalled lcpipe finds them in the build tree ----
lcpipe=$src/framework/lcpipe
(unset LCP_PLUGIN_PATH && "$lcpipe" list-plugins) >"$work/list.txt" 2>&1 ||
	{ cat "$work/list.txt"; fail "lcpipe list-plugins exited non-zero"; }
grep -q "^sink_hello  *stage .* $src/plugins/sink_hello/.libs/sink_hello.so\$" "$work/list.txt" ||
	{ cat "$work/list.txt"; fail "list-plugins does not show sink_hello from the build tree"; }
grep -q "^counters_hello  *counters .* $src/plugins/counters_hello/.libs/counters_hello.so\$" "$work/list.txt" ||
	{ cat "$work/list.txt"; fail "list-plugins does not show counters_hello from the build tree"; }
(unset LCP_PLUGIN_PATH && "$lcpipe" describe sink_hello) >"$work/describe.md" ||
	fail "lcpipe describe sink_hello exited non-zero"
grep -q '`max_size`' "$work/describe.md" || fail "describe sink_hello does not show max_size"
say "ok: lcpipe list-plugins shows both from the build tree; describe sink_hello"

# ---- 5. a run through both ----
cat >"$work/p.json" <<EOF
{
  "name": "newcomer: gen -> sink_hello, counters_hello",
  "eal": ["--no-huge", "--no-pci", "--no-shconf", "-m", "256", "-l", "0,1",
          "--file-prefix=lcp-newcomer-$$"],
  "strategies": {"counters": "counters_hello"},
  "stages": [
    {"name": "gen", "plugin": "gen", "lcore": 1, "options": {"size": $size, "count": $n}},
    {"name": "hello", "plugin": "sink_hello", "lcore": 1}
  ],
  "links": ["gen.out -> hello.in"]
}
EOF
rc=0
(unset LCP_PLUGIN_PATH && RUNTIME_DIRECTORY=$work/run "$lcpipe" run "$work/p.json" --duration 2 \
	--no-live --report "$work/p.report.json") >"$work/run.out" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$work/run.out"; fail "lcpipe run exited $rc"; }
"$py" - "$work/p.report.json" "$n" $((n * size)) <<'EOF' || { cat "$work/run.out"; fail "wrong report"; }
import json, sys
path, pkts, nbytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = json.load(open(path))
s = r["stages"]["hello"]
got = (s["plugin"], s["counters_strategy"], s["counters"]["pkts"], s["counters"]["bytes"], s["drops"])
want = ("sink_hello", "counters_hello", pkts, nbytes, 0)
assert got == want, f"(plugin, counters_strategy, pkts, bytes, drops): got {got}, expected {want}"
in_use = [(m["name"], m["in_use"]) for m in r["mempools"] if m["in_use"]]
assert not in_use, f"mbufs still in use after the run: {in_use}"
EOF
say "ok: gen -> sink_hello counted $n frames, $((n * size)) bytes through counters_hello"

# ---- 6. installed like the others ----
quiet make install DESTDIR="$work/dest"
plugindir=$(printf 'print-plugindir:\n\t@echo $(plugindir)\n' |
	make -s -C "$src/plugins" -f Makefile -f - print-plugindir)
case $plugindir in /*) ;; *) fail "plugins/Makefile: plugindir is \"$plugindir\"" ;; esac
for p in sink_hello counters_hello; do
	[ -f "$work/dest$plugindir/$p.so" ] || fail "make install put no $plugindir/$p.so"
	[ ! -e "$work/dest$plugindir/$p.la" ] || fail "make install put $plugindir/$p.la"
done
say "ok: make install put sink_hello.so and counters_hello.so in $plugindir, no .la"
say "PASS"
