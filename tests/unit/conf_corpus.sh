#!/bin/sh
# conf_corpus.sh — `lcpipe check` against the config corpus.
#
# tests/conf-bad/NN-name.json   must exit 78 and print on stderr exactly the
#                               `error:` lines of NN-name.expect, in order, then
#                               "NN-name.json: N error(s)"; nothing else on stderr
#   NN-name.args                optional: EAL arguments given after "--", one a line
#   NN-name.xfail               optional: a known engine defect. The .expect holds
#                               the output we want; the file says why it differs
#                               today. Failing = XFAIL (ok), passing = XPASS (error:
#                               the defect is fixed, delete the .xfail)
# tests/conf-good/*.json        must exit 0 and print "NAME: ok (...)"
#   NN-name.warn                optional: the `warning:` lines it must print on
#                               stderr, exactly, in order; without one, none
#
# .expect placeholders, so the text does not depend on where the tree is built or
# on which plugins the build tree has grown:
#   @TESTPLUGINS@   $top_builddir/tests/plugins (the test-only plugins)
#   @BUILDPLUGINS@  $top_builddir/plugins
#   @PLUGINS@       the accepted plugin names, sorted, ", "-separated, as
#                   `lcpipe list-plugins` lists them on the same search path
# The search path is LCP_PLUGIN_PATH=tests/plugins/{good,open,hdr}/.libs, then the
# build tree's plugins. check runs in the corpus directory, so the file names in
# messages are relative (NN-name.json:3:5: ...).
#
# Usage: conf_corpus.sh              run everything (make check)
#        conf_corpus.sh --show F...  print F's error lines as an .expect would
#                                    hold them (for writing a new case; read them!)
set -u

: "${top_srcdir:?run from make check, or set top_srcdir and top_builddir}"
: "${top_builddir:?run from make check, or set top_srcdir and top_builddir}"
LCPIPE=${LCPIPE:-$top_builddir/framework/lcpipe}
bad_dir=$top_srcdir/tests/conf-bad
good_dir=$top_srcdir/tests/conf-good
tp=$top_builddir/tests/plugins
bp=$top_builddir/plugins
work=$top_builddir/tests/unit/scratch-conf-corpus
MIN_BAD=30

LCP_PLUGIN_PATH=$tp/good/.libs:$tp/open/.libs:$tp/hdr/.libs
export LCP_PLUGIN_PATH
unset LCP_TEST_MARKER LCP_LOG_LEVEL

rm -rf "$work" && mkdir -p "$work" || exit 99

for f in "$tp/good/.libs/test_src.so" "$tp/open/.libs/no_init.so" "$tp/hdr/.libs/abi_major.so"; do
	if [ ! -f "$f" ]; then
		echo "ERROR: $f missing: build the test plugins first (make -C tests check)"
		exit 99
	fi
done

plugins=$("$LCPIPE" list-plugins 2>/dev/null |
	awk 'NR == 1 { next } NF == 0 { exit } { printf "%s%s", sep, $1; sep = ", " }')
if [ -z "$plugins" ]; then
	echo "ERROR: \`lcpipe list-plugins\` lists no plugin"
	exit 99
fi

# escape for a sed regex / replacement delimited by |
sed_esc() {
	printf '%s\n' "$1" | sed -e 's/[]|\\/.*^$[]/\\&/g'
}
tp_re=$(sed_esc "$tp")
bp_re=$(sed_esc "$bp")
pl_re=$(sed_esc "$plugins")

normalize() {
	sed -e "s|$tp_re|@TESTPLUGINS@|g" -e "s|$bp_re|@BUILDPLUGINS@|g" -e "s|$pl_re|@PLUGINS@|g"
}

# run_check DIR FILE.json: stdout -> $work/F.out, stderr -> $work/F.err; sets rc
run_check() {
	_dir=$1
	_f=$2
	_b=${_f%.json}
	set -- check "$_f"
	if [ -f "$_dir/$_b.args" ]; then
		set -- "$@" --
		while IFS= read -r _a || [ -n "$_a" ]; do
			set -- "$@" "$_a"
		done <"$_dir/$_b.args"
	fi
	(cd "$_dir" && "$LCPIPE" "$@") >"$work/$_b.out" 2>"$work/$_b.err"
	rc=$?
}

if [ "${1:-}" = "--show" ]; then
	shift
	for f in "$@"; do
		d=$(cd "$(dirname "$f")" && pwd)
		run_check "$d" "$(basename "$f")"
		grep '^error: ' "$work/$(basename "${f%.json}").err" | normalize
		echo "(exit $rc)" >&2
	done
	exit 0
fi

n_pass=0 n_fail=0 n_xfail=0 n_bad=0 n_good=0
failed=""

fail() {
	echo "FAIL: $1"
	n_fail=$((n_fail + 1))
	failed="$failed $1"
}

# problems for one bad config, one per line, into $work/$b.problems
check_bad() {
	b=$1
	p=$work/$b.problems
	: >"$p"
	run_check "$bad_dir" "$b.json"
	[ "$rc" -eq 78 ] || echo "exit status $rc, expected 78" >>"$p"
	grep '^error: ' "$work/$b.err" | normalize >"$work/$b.got"
	if ! diff -u "$bad_dir/$b.expect" "$work/$b.got" >"$work/$b.diff"; then
		echo "error lines differ from $b.expect (- expected, + got):" >>"$p"
		cat "$work/$b.diff" >>"$p"
	fi
	n=$(wc -l <"$work/$b.got" | tr -d ' ')
	if [ "$n" -eq 1 ]; then want_last="$b.json: 1 error"; else want_last="$b.json: $n errors"; fi
	last=$(grep -v '^LCP-TEST-MARKER: ' "$work/$b.err" | tail -n 1)
	[ "$last" = "$want_last" ] || echo "last stderr line \"$last\", expected \"$want_last\"" >>"$p"
	# nothing else on stderr but the error lines, the count and test constructors
	grep -v -e '^error: ' -e '^LCP-TEST-MARKER: ' "$work/$b.err" | sed '$d' >"$work/$b.extra"
	if [ -s "$work/$b.extra" ]; then
		echo "unexpected stderr lines:" >>"$p"
		sed 's/^/  /' "$work/$b.extra" >>"$p"
	fi
	[ ! -s "$work/$b.out" ] || { echo "unexpected stdout:"; sed 's/^/  /' "$work/$b.out"; } >>"$p"
}

echo "lcpipe: $LCPIPE"
echo "plugins found (@PLUGINS@): $plugins"
echo

for j in "$bad_dir"/*.json; do
	[ -e "$j" ] || continue
	b=$(basename "$j" .json)
	n_bad=$((n_bad + 1))
	if [ ! -f "$bad_dir/$b.expect" ]; then
		fail "$b (no $b.expect)"
		continue
	fi
	check_bad "$b"
	if [ -f "$bad_dir/$b.xfail" ]; then
		if [ -s "$work/$b.problems" ]; then
			echo "XFAIL: $b (known engine defect: $(head -n 1 "$bad_dir/$b.xfail"))"
			sed 's/^/    /' "$work/$b.problems"
			n_xfail=$((n_xfail + 1))
		else
			fail "$b: XPASS: the engine now prints the wanted output; delete $b.xfail"
		fi
	elif [ -s "$work/$b.problems" ]; then
		fail "$b"
		sed 's/^/    /' "$work/$b.problems"
		echo "    (stderr: $work/$b.err; redo the expectation: $0 --show $j)"
	else
		echo "PASS: $b"
		n_pass=$((n_pass + 1))
	fi
done

# every side file belongs to a config
for s in "$bad_dir"/*.expect "$bad_dir"/*.args "$bad_dir"/*.xfail "$good_dir"/*.warn; do
	[ -e "$s" ] || continue
	b=$(basename "$s")
	b=${b%.*}
	[ -f "$(dirname "$s")/$b.json" ] || fail "$(basename "$s") has no $b.json"
done

if [ "$n_bad" -lt "$MIN_BAD" ]; then
	fail "only $n_bad configs in $bad_dir, expected at least $MIN_BAD"
fi

for j in "$good_dir"/*.json; do
	[ -e "$j" ] || continue
	b=$(basename "$j" .json)
	n_good=$((n_good + 1))
	run_check "$good_dir" "$b.json"
	first=$(head -n 1 "$work/$b.out")
	want_warn=$good_dir/$b.warn
	[ -f "$want_warn" ] || want_warn=/dev/null
	grep '^warning: ' "$work/$b.err" | normalize >"$work/$b.warn.got"
	case "$rc:$first" in
	"0:$b.json: ok ("*)
		if grep -q '^error: ' "$work/$b.err"; then
			fail "good/$b (exit 0 but error lines)"
			sed 's/^/    /' "$work/$b.err"
		elif ! diff -u "$want_warn" "$work/$b.warn.got" >"$work/$b.warn.diff"; then
			fail "good/$b (warning lines differ from $(basename "$want_warn"); - expected, + got)"
			sed 's/^/    /' "$work/$b.warn.diff"
		else
			echo "PASS: good/$b ($first)"
			n_pass=$((n_pass + 1))
		fi
		;;
	*)
		fail "good/$b (exit $rc, expected 0)"
		sed 's/^/    /' "$work/$b.err" "$work/$b.out"
		;;
	esac
done
[ "$n_good" -gt 0 ] || fail "no config in $good_dir"

echo
echo "conf corpus: $n_bad bad, $n_good good configs: $n_pass passed, $n_xfail xfail (known defects), $n_fail failed"
[ "$n_fail" -eq 0 ] || { echo "failed:$failed"; exit 1; }
exit 0
