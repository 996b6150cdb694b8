#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/installcheck/run.sh PREFIX — the installed SDK works for a third party.
#
# As a plugin author would, with nothing but what `make install` put under PREFIX:
#  1. lcpipe.pc is found with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig; its plugindir is
#     the installed plugin directory and its abi_major/abi_minor match lcp/plugin.h;
#     no libtool archive (.la) was installed, for the library or the plugins;
#  2. doc/examples/sink_count (copied to a temporary directory under the current
#     directory, since distcheck's source tree is read-only) builds with its own
#     plain Makefile and -Werror, and exports lcp_plugin_descriptor only;
#  3. PREFIX/bin/lcpipe lists it (LCP_PLUGIN_PATH) next to the installed plugins,
#     describes it, and validates pipeline.json (plugin_path ".");
#  4. `lcpipe run` of gen (count N) -> sink_count reports exactly N frames and
#     N*size bytes counted and no mempool object in use; with max_size below the
#     frame size, exactly N frames under drop_too_big and none counted;
#  5. packaging: the man pages lcpipe(1) and lcpipe.json(5) are installed and
#     render without a groff warning, the docs and the example are in the doc
#     directory, lcpipe@.service is installed with this prefix's paths in it and
#     `systemd-analyze verify` finds nothing wrong with an instance of it.
# Exit 0 pass, 1 fail, 77 skip (a prerequisite is missing). Leaves nothing behind.
#
# Environment: LCP_BINDIR, LCP_LIBDIR, LCP_INCLUDEDIR, LCP_MANDIR, LCP_DOCDIR,
# LCP_UNITDIR, LCP_PLUGINDIR (default PREFIX/bin, /lib, /include, /share/man, /share/doc/lcpipe,
# /lib/systemd/system, LIBDIR/lcpipe: the Makefile passes $(bindir) ...; LCP_UNITDIR=no: none), top_srcdir (default: two levels
# up from this script), PYTHON3, LCP_INSTALLCHECK_N (frames, default 20000).
set -eu

prefix=${1:?usage: run.sh PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$here/../..}
bindir=${LCP_BINDIR:-$prefix/bin}
libdir=${LCP_LIBDIR:-$prefix/lib}
includedir=${LCP_INCLUDEDIR:-$prefix/include}
mandir=${LCP_MANDIR:-$prefix/share/man}
docdir=${LCP_DOCDIR:-$prefix/share/doc/lcpipe}
unitdir=${LCP_UNITDIR:-$prefix/lib/systemd/system}
example=$top_srcdir/doc/examples/sink_count
n=${LCP_INSTALLCHECK_N:-20000}
size=64
lcpipe=$bindir/lcpipe

CHECK_NAME=installcheck
# say, skip, fail, $py
# shellcheck source=../check_lib.sh
. "$here/../check_lib.sh"

# ---- prerequisites ----
for tool in pkg-config make "${CC:-cc}" nm "$py"; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not found"
done
[ -x "$lcpipe" ] || skip "$lcpipe is not installed"
[ -f "$libdir/pkgconfig/lcpipe.pc" ] || skip "$libdir/pkgconfig/lcpipe.pc is not installed"
[ -f "$example/sink_count.c" ] || skip "$example not found (set top_srcdir)"

work=$(mktemp -d "$(pwd)/installcheck.XXXXXX")
cleanup() {
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- 1. pkg-config ----
PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
pkg-config --exists lcpipe || fail "pkg-config does not find lcpipe with PKG_CONFIG_PATH=$PKG_CONFIG_PATH"
plugindir=$(pkg-config --variable=plugindir lcpipe)
want_plugindir=${LCP_PLUGINDIR:-$libdir/lcpipe}
[ "$plugindir" = "$want_plugindir" ] || fail "lcpipe.pc plugindir is $plugindir, expected $want_plugindir"
[ -f "$plugindir/gen.so" ] || fail "$plugindir/gen.so is not installed"
hdr=$includedir/lcp/plugin.h
[ -f "$hdr" ] || fail "$hdr is not installed"
for v in major minor; do
	pc=$(pkg-config --variable=abi_$v lcpipe)
	uc=$(echo "$v" | tr a-z A-Z)
	h=$(sed -n "s/^#define LCP_ABI_$uc \\([0-9]*\\).*/\\1/p" "$hdr")
	[ -n "$pc" ] && [ "$pc" = "$h" ] || fail "lcpipe.pc abi_$v=$pc but lcp/plugin.h says LCP_ABI_$uc $h"
done
say "ok: lcpipe.pc (plugindir $plugindir, ABI $(pkg-config --variable=abi_major lcpipe).$(pkg-config --variable=abi_minor lcpipe))"
las=$(find "$libdir" -name '*.la' 2>/dev/null)
[ -z "$las" ] || fail "libtool archives installed (none belong in the installed tree): $las"
say "ok: no .la installed under $libdir"

# ---- 2. build the example as its README says: its own Makefile ----
cp "$example/sink_count.c" "$example/Makefile" "$example/pipeline.json" "$work/"
chmod u+w "$work"/*
make -C "$work" CFLAGS="-O2 -g -Wall -Wextra -Werror" >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log"; fail "the example does not build against the installed SDK"; }
syms=$(nm -D --defined-only "$work/sink_count.so" | awk '{print $3}' | sort | tr '\n' ' ')
[ "$syms" = "lcp_plugin_descriptor " ] ||
	fail "sink_count.so exports \"$syms\", expected only lcp_plugin_descriptor"
say "ok: built sink_count.so against the installed SDK; it exports lcp_plugin_descriptor only"

# ---- 3. the installed lcpipe finds, describes and validates it ----
LCP_PLUGIN_PATH=$work "$lcpipe" list-plugins >"$work/list.txt" 2>&1 ||
	{ cat "$work/list.txt"; fail "lcpipe list-plugins exited non-zero"; }
grep -q "^sink_count  *stage .* $work/sink_count.so\$" "$work/list.txt" ||
	{ cat "$work/list.txt"; fail "list-plugins does not show sink_count from $work"; }
grep -q "^gen  *stage .* $plugindir/gen.so\$" "$work/list.txt" ||
	{ cat "$work/list.txt"; fail "list-plugins does not show gen from the installed $plugindir"; }
if grep -q ': refused: ' "$work/list.txt"; then
	cat "$work/list.txt"
	fail "list-plugins refuses a file"
fi
LCP_PLUGIN_PATH=$work "$lcpipe" describe sink_count >"$work/describe.md" ||
	fail "lcpipe describe sink_count exited non-zero"
grep -q '`max_size`' "$work/describe.md" || fail "describe sink_count does not show max_size"
"$lcpipe" check "$work/pipeline.json" >/dev/null || fail "lcpipe check pipeline.json exited non-zero"
say "ok: lcpipe list-plugins, describe sink_count, check pipeline.json"

# ---- 4. run it ----
# conf NAME SINK_OPTIONS_JSON: pipeline.json with gen count n, a private EAL file prefix
conf() {
	"$py" - "$work/pipeline.json" "$work/$1.json" "$n" "$size" "$2" "lcp-ic-$$-$1" <<'EOF'
import json, sys
src, dst, n, size, sink_opts, file_prefix = sys.argv[1:]
c = json.load(open(src))
st = {s["plugin"]: s for s in c["stages"]}
st["gen"]["options"].update(count=int(n), size=int(size))
st["sink_count"]["options"] = json.loads(sink_opts)
c["eal"] = [a for a in c["eal"] if not a.startswith("--file-prefix")] + ["--file-prefix=" + file_prefix]
json.dump(c, open(dst, "w"), indent=1)
EOF
}
# run NAME: lcpipe run NAME.json (config next to the .so: plugin_path "." finds it)
run() {
	rc=0
	RUNTIME_DIRECTORY=$work/run-$1 "$lcpipe" run "$work/$1.json" --duration 2 --no-live \
		--report "$work/$1.report.json" >"$work/$1.out" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		cat "$work/$1.out"
		fail "lcpipe run $1.json exited $rc"
	fi
}
# expect NAME PKTS BYTES DROPS: the report's sink_count counters, stage drops, mempools
expect() {
	"$py" - "$work/$1.report.json" "$2" "$3" "$4" <<'EOF' || { cat "$work/$1.out"; fail "$1: wrong report"; }
import json, sys
path, pkts, nbytes, drops = sys.argv[1], *map(int, sys.argv[2:])
r = json.load(open(path))
st = [s for s in r["stages"].values() if s["plugin"] == "sink_count"]
assert len(st) == 1, "one sink_count stage in the report"
c = st[0]["counters"]
got = (c["pkts"], c["bytes"], c["drop_too_big"], st[0]["drops"], st[0]["in"])
want = (pkts, nbytes, drops, drops, pkts + drops)
assert got == want, f"(pkts, bytes, drop_too_big, drops, in): got {got}, expected {want}"
in_use = [(m["name"], m["in_use"]) for m in r["mempools"] if m["in_use"]]
assert not in_use, f"mbufs still in use after the run: {in_use}"
print(f"{path}: pkts {c['pkts']}, bytes {c['bytes']}, drop_too_big {c['drop_too_big']}, mempools empty")
EOF
}

conf count '{"every": 5000}'
run count
expect count "$n" $((n * size)) 0
grep -q "^\[sink_count:count\] total $n frames, $((n * size)) bytes, 0 refused\$" "$work/count.out" ||
	{ cat "$work/count.out"; fail "no closing log line from sink_count's stop()"; }
say "ok: gen -> sink_count: $n frames counted"

conf drop "{\"max_size\": $((size - 1))}"
run drop
expect drop 0 0 "$n"
say "ok: max_size $((size - 1)): $n frames refused, freed and counted under drop_too_big"

# ---- 5. packaging: man pages, docs, the systemd unit ----
for m in man1/lcpipe.1 man5/lcpipe.json.5; do
	[ -f "$mandir/$m" ] || fail "$mandir/$m is not installed"
	if command -v groff >/dev/null 2>&1; then
		w=$(groff -man -Tutf8 -ww -z "$mandir/$m" 2>&1)
		[ -z "$w" ] || fail "$mandir/$m: groff warns: $w"
	fi
done
grep -q 'engine.metrics_listen\|metrics_listen' "$mandir/man5/lcpipe.json.5" || fail "lcpipe.json(5) lacks the engine options"
say "ok: lcpipe(1) and lcpipe.json(5) installed in $mandir"
for d in architecture.md plugins.md writing-a-plugin.md metrics-endpoint.md examples/sink_count/sink_count.c; do
	[ -f "$docdir/$d" ] || fail "$docdir/$d is not installed"
done
say "ok: the docs and the plugin example installed in $docdir"
if [ "$unitdir" != no ]; then
	unit=$unitdir/lcpipe@.service
	[ -f "$unit" ] || fail "$unit is not installed"
	grep -q "^ExecStart=$bindir/lcpipe run " "$unit" || fail "$unit does not run $bindir/lcpipe: $(grep ExecStart "$unit")"
	if command -v systemd-analyze >/dev/null 2>&1; then
		cp "$unit" "$work/lcpipe@installcheck.service"
		systemd-analyze verify --man=no "$work/lcpipe@installcheck.service" >"$work/verify.log" 2>&1 ||
			{ cat "$work/verify.log"; fail "systemd-analyze verify finds fault with lcpipe@.service"; }
		[ ! -s "$work/verify.log" ] || { cat "$work/verify.log"; fail "systemd-analyze verify warns about lcpipe@.service"; }
		say "ok: $unit installed; systemd-analyze verify passes"
	else
		say "ok: $unit installed (systemd-analyze not found: not verified)"
	fi
fi
say "PASS"
