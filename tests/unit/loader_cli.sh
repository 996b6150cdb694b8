#!/bin/sh
# loader_cli.sh — the plugin loader's refusals as a user meets them:
#   `lcpipe list-plugins`  lists every refused file with its exact reason
#   `lcpipe check`         names the refused file and the reason for a plugin a
#                          config asks for
#   `lcpipe describe NAME` the same for one plugin
# and in every case no file refused from its ELF header ran its constructor: the
# broken test plugins (tests/plugins/broken.c) append their id to $LCP_TEST_MARKER
# and print "LCP-TEST-MARKER: ..." on stderr when their code runs. The C-level
# twin of this test is unit/test_loader.
set -u

: "${top_srcdir:?run from make check, or set top_srcdir and top_builddir}"
: "${top_builddir:?run from make check, or set top_srcdir and top_builddir}"
abi_minor=$(sed -n 's/^#define LCP_ABI_MINOR \([0-9]*\).*/\1/p' "$top_srcdir/framework/include/lcp/plugin.h")
[ -n "$abi_minor" ] || { echo "FAIL: cannot read LCP_ABI_MINOR from lcp/plugin.h"; exit 1; }
abi_major=$(sed -n 's/^#define LCP_ABI_MAJOR \([0-9]*\).*/\1/p' "$top_srcdir/framework/include/lcp/plugin.h")
[ -n "$abi_major" ] || { echo "FAIL: cannot read LCP_ABI_MAJOR from lcp/plugin.h"; exit 1; }
LCPIPE=${LCPIPE:-$top_builddir/framework/lcpipe}
tp=$top_builddir/tests/plugins
work=$top_builddir/tests/unit/scratch-loader-cli
unset LCP_PLUGIN_PATH LCP_TEST_MARKER LCP_LOG_LEVEL
rm -rf "$work" && mkdir -p "$work" || exit 99

hdr=$tp/hdr/.libs dup=$tp/dup/.libs open=$tp/open/.libs good=$tp/good/.libs
notso=$tp/notso shadow=$tp/shadow/.libs
[ -f "$hdr/bad_magic.so" ] && [ -f "$notso/exec.so" ] || {
	echo "ERROR: test plugins missing under $tp (make -C tests check builds them)"
	exit 99
}
# sizeof(struct lcp_plugin) as the messages print it: the probe reads it from a file
desc_size=$(LCP_PLUGIN_PATH=$hdr "$LCPIPE" list-plugins | sed -n 's/.*bad_size.so: refused: descriptor size: expected \([0-9]*\),.*/\1/p')
[ -n "$desc_size" ] || { echo "FAIL: no bad_size.so refusal in list-plugins"; exit 1; }

. "$(dirname "$0")/t_fails.sh"
pass() {
	echo "PASS: $*"
}
# same FILE_EXPECTED FILE_GOT WHAT
same() {
	if cmp -s "$1" "$2"; then
		pass "$3"
	else
		fail "$3 (- expected, + got):"
		diff -u "$1" "$2" | sed 's/^/    /'
	fi
}

# ---- list-plugins over every directory ----
marker=$work/marker.list
LCP_TEST_MARKER=$marker LCP_PLUGIN_PATH=$hdr:$dup:$open:$good:$notso:$shadow \
	"$LCPIPE" list-plugins >"$work/list.out" 2>"$work/list.err"
rc=$?
[ $rc -eq 0 ] || fail "list-plugins exited $rc"

cat >"$work/refused.want" <<EOF
$hdr/abi_major.so: refused: ABI major version: expected $abi_major, found $((abi_major + 1))
$hdr/abi_minor.so: refused: ABI minor version: expected at most $abi_minor, found $((abi_minor + 1)) (plugin built for a newer lcpipe)
$hdr/bad_kind.so: refused: kind: expected 1..4 (stage, counters, pool, batch), found 9
$hdr/bad_magic.so: refused: bad magic: expected 0x3150434c, found 0xdeadbeef
$hdr/bad_name.so: refused: name: expected [a-z0-9_]{1,31}, found "Test-Bad.Name"
$hdr/bad_size.so: refused: descriptor size: expected $desc_size, found $((desc_size - 8))
$hdr/func.so: refused: no descriptor: lcp_plugin_descriptor is not a data object
$hdr/hidden.so: refused: no descriptor: symbol lcp_plugin_descriptor not exported
$hdr/no_name.so: refused: name: expected [a-z0-9_]{1,31}, found ""
$hdr/sym_size.so: refused: descriptor size: symbol is $((desc_size + 16)) bytes, descriptor says $desc_size
$hdr/tiny.so: refused: descriptor size: expected $desc_size bytes, found 4
$dup/dup_a.so: refused: duplicate plugin name "test_dup" (also declared by $dup/dup_b.so)
$dup/dup_b.so: refused: duplicate plugin name "test_dup" (also declared by $dup/dup_a.so)
$open/bad_counter.so: refused: stage ops: counter "drop_shutdown": expected [a-z0-9_] and not a built-in name (drop_shutdown)
$open/bad_forward.so: refused: stage ops: port "out": LCP_PORT_F_FORWARDS(0) must be on an output and name an input port of the same unit
$open/bad_hist.so: refused: stage ops: histogram "lat_seconds": bound 2 (20) is not above bound 1 (30)
$open/bad_opts.so: refused: option table row 1 ("mode"): enum without choices
$open/bad_port.so: refused: stage ops: port "weird": bad name, direction 1 or unit 7
$open/ctr_no_read.so: refused: counters ops: create, destroy, add and read are required
$open/dup_counter.so: refused: stage ops: counter "packets" declared twice
$open/no_init.so: refused: stage ops: init is NULL
$open/no_poll.so: refused: stage ops: no input port and no poll: it could never do anything
$open/no_ports.so: refused: stage ops: no port table
$open/no_process.so: refused: stage ops: has input ports but process is NULL
$open/no_version.so: refused: descriptor: version and summary are required
$open/null_ops.so: refused: ops: expected a stage ops table, found NULL
$open/undef.so: refused: dlopen failed: $open/undef.so: undefined symbol: lcp_test_no_such_function
$notso/archive.so: refused: not a shared object: no ELF header
$notso/dangling.so: refused: cannot open: No such file or directory
$notso/dir.so: refused: not a shared object: not a regular file
$notso/empty.so: refused: not a shared object: empty file
$notso/exec.so: refused: not a shared object: ELF type 2, expected ET_DYN (3)
$notso/object.so: refused: not a shared object: ELF type 1, expected ET_DYN (3)
$notso/pie.so: refused: dlopen failed: $notso/pie.so: cannot dynamically load position-independent executable
$notso/text.so: refused: not a shared object: no ELF header
$shadow/shadow_sink.so: refused: shadowed: plugin name "test_sink" already found earlier on the search path in $good/test_sink.so
EOF
# the refused block: after the first blank line, up to the next one
awk 'state == 1 && NF == 0 { exit } state == 1 { print } NF == 0 { state = 1 }' \
	"$work/list.out" >"$work/refused.got"
same "$work/refused.want" "$work/refused.got" "list-plugins: every refused file, exact reason, search order"

# accepted: ours, with kind, version, summary and file
for p in "test_counters counters 0.1 $good/test_counters.so" "test_opts stage 0.1 $good/test_opts.so" \
	"test_sink stage 0.1 $good/test_sink.so" "test_src stage 0.1 $good/test_src.so"; do
	set -- $p
	if awk -v n="$1" -v k="$2" -v v="$3" -v f="$4" \
		'$1 == n && $2 == k && $3 == v && $NF == f { ok = 1 } END { exit !ok }' "$work/list.out"; then
		pass "list-plugins lists $1 ($2 $3) from $4"
	else
		fail "list-plugins does not list $1 as \"$1 $2 $3 ... $4\""
	fi
done
if grep -Eq '^(test_dup|test_exec|test_undef|test_no_init|test_abi_major|test_bad_magic) ' "$work/list.out"; then
	fail "list-plugins lists a refused plugin as accepted"
fi
sp=$(grep '^search path:' "$work/list.out")
case $sp in
"search path: $hdr $dup $open $good $notso $shadow $top_builddir/plugins/"*)
	pass "list-plugins search path: LCP_PLUGIN_PATH in order, then the build tree" ;;
*) fail "list-plugins search path: $sp" ;;
esac

# constructors: list-plugins opens every plugin accepted at scan time, so the
# ones refused after dlopen ran (in search order); none refused from the header
printf '%s\n' bad_counter bad_forward bad_hist bad_opts bad_port ctr_no_read dup_counter no_init no_poll no_ports \
	no_process no_version null_ops \
	>"$work/marker.want"
touch "$marker"
same "$work/marker.want" "$marker" "list-plugins: only plugins refused after dlopen ran code"
sed -n 's/^LCP-TEST-MARKER: constructor of \(.*\) ran$/\1/p' "$work/list.err" >"$work/marker.stderr"
same "$work/marker.want" "$work/marker.stderr" "list-plugins: constructor messages on stderr match"

# ---- check: a config asking for refused plugins by name ----
cat >"$work/refused.json" <<'EOF'
{
  "eal": ["-l", "0,1"],
  "stages": [
    {"name": "a", "plugin": "test_bad_magic"},
    {"name": "b", "plugin": "test_dup"},
    {"name": "c", "plugin": "test_abi_minor"},
    {"name": "d", "plugin": "test_exec"},
    {"name": "e", "plugin": "test_undef"}
  ]
}
EOF
marker=$work/marker.check
LCP_TEST_MARKER=$marker LCP_PLUGIN_PATH=$hdr:$dup:$notso:$open:$good \
	"$LCPIPE" check "$work/refused.json" >"$work/check.out" 2>"$work/check.err"
rc=$?
[ $rc -eq 78 ] || fail "check of refused plugins exited $rc, expected 78"
cat >"$work/check.want" <<EOF
error: stages[0].plugin: "test_bad_magic": $hdr/bad_magic.so: refused: bad magic: expected 0x3150434c, found 0xdeadbeef
error: stages[1].plugin: "test_dup": $dup/dup_a.so: refused: duplicate plugin name "test_dup" (also declared by $dup/dup_b.so)
error: stages[2].plugin: "test_abi_minor": $hdr/abi_minor.so: refused: ABI minor version: expected at most $abi_minor, found $((abi_minor + 1)) (plugin built for a newer lcpipe)
error: stages[3].plugin: "test_exec": $notso/pie.so: refused: dlopen failed: $notso/pie.so: cannot dynamically load position-independent executable
error: stages[4].plugin: "test_undef": $open/undef.so: refused: dlopen failed: $open/undef.so: undefined symbol: lcp_test_no_such_function
$work/refused.json: 5 errors
EOF
same "$work/check.want" "$work/check.err" "check: refused plugins named with file and reason"
if [ -e "$marker" ] || grep -q '^LCP-TEST-MARKER' "$work/check.err"; then
	fail "check: a refused plugin ran code: $(cat "$marker" 2>/dev/null)"
else
	pass "check: no refused plugin ran code"
fi

# control: a plugin refused after dlopen did run its constructor under check too
cat >"$work/open.json" <<'EOF'
{"eal": ["-l", "0,1"], "stages": [{"name": "a", "plugin": "test_no_init"}]}
EOF
marker=$work/marker.open
LCP_TEST_MARKER=$marker LCP_PLUGIN_PATH=$open "$LCPIPE" check "$work/open.json" >/dev/null 2>"$work/open.err"
rc=$?
if [ $rc -eq 78 ] && [ "$(cat "$marker" 2>/dev/null)" = no_init ] &&
	grep -q "^error: stages\[0\].plugin: \"test_no_init\": $open/no_init.so: refused: stage ops: init is NULL\$" "$work/open.err"; then
	pass "check: control: test_no_init refused after its constructor ran (marker works)"
else
	fail "check: control: exit $rc, marker \"$(cat "$marker" 2>/dev/null)\""
	sed 's/^/    /' "$work/open.err"
fi

# ---- describe NAME of a refused plugin ----
marker=$work/marker.describe
LCP_TEST_MARKER=$marker LCP_PLUGIN_PATH=$hdr "$LCPIPE" describe test_abi_major \
	>"$work/describe.out" 2>"$work/describe.err"
rc=$?
first=$(head -n 1 "$work/describe.err")
if [ $rc -eq 1 ] &&
	[ "$first" = "lcpipe describe: $hdr/abi_major.so: refused: ABI major version: expected $abi_major, found $((abi_major + 1))" ] &&
	[ ! -e "$marker" ]; then
	pass "describe test_abi_major: refused, with file and reason, no code run"
else
	fail "describe test_abi_major: exit $rc, first stderr line \"$first\", marker \"$(cat "$marker" 2>/dev/null)\""
fi

t_fails_end loader_cli
echo "loader_cli: all passed"
exit 0
