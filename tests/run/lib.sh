# tests/run/lib.sh — sourced by every tests/run/*.sh (L1: real pipelines).
#
# Gives each test: a private temp dir $T under the build tree (removed on exit,
# with every process the test started, by pid), a DPDK runtime dir inside it
# (RUNTIME_DIRECTORY, so EAL and the telemetry socket write nothing elsewhere),
# unique EAL file prefixes, config templates from tests/run/conf/ filled in, and
# helpers that run lcpipe with a timeout and say what they expected and saw.
#
# Environment (set by tests/Makefile.am): top_srcdir, top_builddir, LCPIPE,
# PYTHON3, TSHARK, DPDK_TELEMETRY. LCP_TEST_KEEP=1 keeps $T for a post-mortem.

set -u

# a library that does not parse is read up to the error, and every check it
# defines after it would be "command not found": a suite that passes (see
# tests/unit/scripts_parse.sh)
bash -n "${BASH_SOURCE[0]}" || { echo "FAIL: ${BASH_SOURCE[0]} does not parse"; exit 99; }

TEST_NAME=$(basename "$0" .sh)
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${LCPIPE:=$top_builddir/framework/lcpipe}"
PYTHON3=${PYTHON3:-/usr/bin/python3}
[ -n "$PYTHON3" ] || PYTHON3=/usr/bin/python3
RUN_SRC=$top_srcdir/tests/run
RUN_BUILD=$top_builddir/tests/run
PLUGDIR=$RUN_BUILD/plugins/.libs # tests/run/plugins/*.la (check_LTLIBRARIES)
LCP_TIMEOUT=${LCP_TIMEOUT:-30}   # seconds any one lcpipe may take before it is a hang

FAILS=0
PIDS=""
N_RUN=0

mkdir -p "$RUN_BUILD" || exit 99
T=$(mktemp -d "$RUN_BUILD/$TEST_NAME.XXXXXX") || exit 99

# stop_pid PID: SIGTERM, then SIGKILL after 10 s; stop_leftovers, rt_dir,
# drop_dir (tests/stop_pid.sh)
. "$top_srcdir/tests/stop_pid.sh"

cleanup() {
	stop_leftovers
	drop_dir "$T"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

# DPDK's runtime files and telemetry socket (stop_pid.sh)
rt_dir "$T/rt" lcpipe-rt
# shellcheck disable=SC2034 # for the tests that poll the telemetry socket
RTD=$RUNTIME_DIRECTORY

if [ ! -x "$LCPIPE" ]; then
	echo "SKIP: $LCPIPE not built"
	exit 77
fi

say() { printf '%s\n' "$*"; }
step() { printf '\n== %s\n' "$*"; }

fail() {
	FAILS=$((FAILS + 1))
	printf 'FAIL: %s\n' "$*"
}

ok() { printf 'ok:   %s\n' "$*"; }

# the last lines of the last run's output, after a failure
show_run() {
	[ -n "${OUT:-}" ] && [ -f "$OUT" ] && { say "--- stdout ($OUT), last 25 lines:"; tail -n 25 "$OUT"; }
	[ -n "${ERR:-}" ] && [ -f "$ERR" ] && { say "--- stderr ($ERR), last 25 lines:"; tail -n 25 "$ERR"; }
	say "---"
}

finish() {
	if [ "$FAILS" -gt 0 ]; then
		say ""
		say "$TEST_NAME: $FAILS check(s) failed"
		exit 1
	fi
	say ""
	say "$TEST_NAME: all checks passed"
	exit 0
}

skip() {
	say "SKIP: $*"
	exit 77
}

# need_msg_hash: tests/kernel's msg_hash test plugin (a sink that hashes the
# payloads) is in HASHDIR, else a failure (make check builds it)
HASHDIR=$top_builddir/tests/kernel/plugins/.libs
need_msg_hash() {
	[ -e "$HASHDIR/msg_hash.so" ] || { fail "msg_hash.so not built (make check builds it)"; finish; }
}

# need_plugins P...: skip unless plugins/P is built, for every P
need_plugins() {
	local p
	for p in "$@"; do
		[ -f "$top_builddir/plugins/$p/.libs/$p.so" ] || skip "plugins/$p not built"
	done
}

# a new EAL file prefix, unique to this test process and run: sets PFX
new_prefix() {
	N_RUN=$((N_RUN + 1))
	PFX="lcpt-$TEST_NAME-$$-$N_RUN"
}

# The EAL arguments every test uses, for "lcpipe run CONF -- ..." (PFX must be set)
eal_base() {
	printf '%s\n' --no-huge --no-pci --no-shconf -m 256 "--file-prefix=$PFX"
}

# mkconf TEMPLATE OUT [KEY=VALUE]...: tests/run/conf/TEMPLATE with @PREFIX@ (a new
# EAL file prefix, also left in PFX), @TMP@, @PLUGDIR@ and every @KEY@ replaced.
mkconf() {
	local tmpl=$RUN_SRC/conf/$1 out=$2 kv k v
	local sedargs=()
	shift 2
	new_prefix
	sedargs+=(-e "s|@PREFIX@|$PFX|g" -e "s|@TMP@|$T|g" -e "s|@PLUGDIR@|$PLUGDIR|g")
	for kv in "$@"; do
		k=${kv%%=*}
		v=${kv#*=}
		v=${v//\\/\\\\}
		v=${v//&/\\&}
		v=${v//|/\\|}
		sedargs+=(-e "s|@$k@|$v|g")
	done
	sed "${sedargs[@]}" "$tmpl" >"$out" || { fail "mkconf: cannot fill $tmpl"; return 1; }
	if grep -n '@[A-Z_0-9]*@' "$out"; then
		fail "mkconf: $tmpl: placeholders left unfilled (above)"
		return 1
	fi
}

# _lcfiles TAG CONF ARGS...: the files of run TAG in OUT, ERR, REP (REP removed);
# says the command line
_lcfiles() {
	local tag=$1 conf=$2
	shift 2
	OUT=$T/$tag.out
	ERR=$T/$tag.err
	REP=$T/$tag.report.json
	rm -f "$REP"
	say "+ lcpipe run $(basename "$conf") --report $(basename "$REP") $*"
}

# _lcrc STATUS [PREFIX]: RC=STATUS of a finished lcpipe run; a failure (its
# message after PREFIX) when the timeout stopped it
_lcrc() {
	RC=$1
	[ "$RC" -eq 124 ] || [ "$RC" -eq 137 ] && fail "${2:-}lcpipe did not finish within ${LCP_TIMEOUT}s (hang?)"
	return 0
}

# lcrun TAG CONF [ARGS...]: "lcpipe run CONF --report REP ARGS..." in the foreground,
# bounded by LCP_TIMEOUT; sets RC, OUT, ERR, REP (REP removed first).
lcrun() {
	local tag=$1 conf=$2
	shift 2
	_lcfiles "$tag" "$conf" "$@"
	timeout -k 5 "$LCP_TIMEOUT" "$LCPIPE" run "$conf" --report "$REP" "$@" >"$OUT" 2>"$ERR" </dev/null
	_lcrc $? "$tag: "
}

# lcstart TAG CONF [ARGS...]: like lcrun but in the background; sets PID (of the
# timeout wrapper, which forwards SIGINT/SIGTERM to lcpipe), OUT, ERR, REP
lcstart() {
	local tag=$1 conf=$2
	shift 2
	_lcfiles "$tag" "$conf" "$@" "&"
	timeout -k 5 "$LCP_TIMEOUT" "$LCPIPE" run "$conf" --report "$REP" "$@" >"$OUT" 2>"$ERR" </dev/null &
	PID=$!
	PIDS="$PIDS $PID"
}

# lcwait: wait for the background lcpipe; sets RC
lcwait() {
	wait "$PID"
	_lcrc $?
}

# confrun_rc WANT TEMPLATE TAG SECONDS WHAT [KEY=VALUE]...: mkconf TEMPLATE into
# $T/TAG.json, run for SECONDS without the live line, expecting exit WANT
confrun_rc() {
	local want=$1 tmpl=$2 tag=$3 secs=$4 what=$5
	shift 5
	mkconf "$tmpl" "$T/$tag.json" "$@"
	lcrun "$tag" "$T/$tag.json" --duration "$secs" --no-live
	expect_rc "$want" "$what"
}

# confrun TEMPLATE TAG SECONDS WHAT [KEY=VALUE]...: confrun_rc expecting exit 0
confrun() {
	confrun_rc 0 "$@"
}

# genrun TEMPLATE TAG SECONDS WHAT SINK SINK_OPTS [KEY=VALUE]...: confrun of a
# config where gen feeds a sink (direct.json, pair-chain.json): gen unpaced
# (RATE=0), the sink stage's plugin SINK with options SINK_OPTS; KEY=VALUE sets
# the rest (the lcores, COUNT, SIZE, direct.json's RING)
genrun() {
	local tmpl=$1 tag=$2 secs=$3 what=$4 sink=$5 sink_opts=$6
	shift 6
	confrun "$tmpl" "$tag" "$secs" "$what" RATE=0 SINK="$sink" SINK_OPTS="$sink_opts" "$@"
}

# demo_run TAG CONF DURATION WHAT: CONF (a conf/ demo or one made from it) run to
# its end on lcores 0,1 with a new EAL prefix, expecting exit 0
demo_run() {
	new_prefix
	# shellcheck disable=SC2046
	lcrun "$1" "$2" --duration "$3" --no-live -- $(eal_base) -l 0,1
	expect_rc 0 "$4"
}

# wait_for FILE REGEX SECONDS: 0 once REGEX (grep -E) appears in FILE
wait_for() {
	local f=$1 re=$2 n=$(($3 * 20))
	while [ "$n" -gt 0 ]; do
		grep -Eq -- "$re" "$f" 2>/dev/null && return 0
		[ -n "${PID:-}" ] && ! kill -0 "$PID" 2>/dev/null && { grep -Eq -- "$re" "$f" 2>/dev/null; return $?; }
		sleep 0.05
		n=$((n - 1))
	done
	return 1
}

# expect_rc WANT WHAT: the last run exited WANT
expect_rc() {
	if [ "$RC" -eq "$1" ]; then
		ok "$2: exit status $RC"
	else
		fail "$2: exit status $RC, expected $1"
		show_run
	fi
}

# expect_grep FILE REGEX WHAT / expect_nogrep FILE REGEX WHAT
expect_grep() {
	if grep -Eq -- "$2" "$1"; then
		ok "$3: found /$2/"
	else
		fail "$3: /$2/ not found in $(basename "$1")"
		show_run
	fi
}
expect_nogrep() {
	if grep -En -- "$2" "$1"; then
		fail "$3: /$2/ found in $(basename "$1") (lines above)"
	else
		ok "$3: no /$2/"
	fi
}

# rcheck WHAT [-D K=V]... EXPR...: assertions on $REP (see rcheck.py)
rcheck() {
	local what=$1
	shift
	say "-- $what: report $(basename "$REP")"
	if [ ! -s "$REP" ]; then
		fail "$what: no report written ($REP)"
		show_run
		return 0
	fi
	if ! "$PYTHON3" "$RUN_SRC/rcheck.py" "$REP" "$@"; then
		fail "$what: report assertions (above)"
		show_run
	fi
}

# gencheck WHAT COUNT [-D K=V]... EXPR...: rcheck with N=COUNT and what every run
# of gen to its count must show besides EXPR: drained, gen sent all N, every pool
# object back, nothing leaked
gencheck() {
	local what=$1 n=$2
	shift 2
	rcheck "$what" -D N="$n" 'r["drained"] == True' 'ctr("gen", "packets") == N' "$@" \
		'in_use == 0' 'r["leaked_objects"] == 0'
}
