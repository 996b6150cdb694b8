#!/bin/bash
# The live line and the exit summary. (a) stdout not a terminal: periodic stats
# lines every engine.stats_interval (0.2 s), no carriage returns; (b) on a
# terminal (script(1) gives one) the live line is rewritten in place ("\r...\e[K");
# (c) --live forces it without a terminal, (d) --no-live turns it off on one.
# Every run ends with the summary: stop reason, one row per stage (name, plugin,
# lcore), the mempool line; and --report writes JSON that parses and lists every
# stage of the config.
. "$(dirname "$0")/lib.sh"

STAGES="gen wa wb sink"

# outcheck FILE MODE: the stats lines in FILE are MODE (live|periodic) and the
# summary lists every stage
outcheck() {
	"$PYTHON3" - "$1" "$2" "$STAGES" <<'PY' || fail "$(basename "$1"): output checks (above)"
import re, sys
path, mode, stages = sys.argv[1], sys.argv[2], sys.argv[3].split()
raw = open(path, "rb").read().decode("utf-8", "replace")
bad = 0
def check(ok, what):
    global bad
    print("%s %s" % ("ok:  " if ok else "FAIL:", what))
    bad += not ok
stat = r"\[lcpipe\] +[0-9.]+s  delivered [0-9.]+ [kMG]?obj \([0-9.]+ [kMG]?obj/s\)  drops [0-9]+"
live = re.findall(r"\r" + stat + r"[^\r\n]*\x1b\[K", raw)       # rewritten in place
plain = re.findall(r"(?:^|\n)" + stat, raw)                     # a line of its own
if mode == "live":
    check(len(live) >= 2, "live line rewritten in place at least twice (\\r...\\e[K): %d" % len(live))
    check(len(plain) == 0, "no periodic stats lines in live mode: %d" % len(plain))
else:
    check(len(plain) >= 2, "periodic stats lines (0.2 s apart, run 1.5 s): %d" % len(plain))
    check(len(live) == 0 and "\x1b[K" not in raw, "no live-line control sequences: %d" % len(live))
text = raw.replace("\r", "")
check(re.search(r'lcpipe: ".*" ran [0-9.]+ s, stopped by duration, drained', text) is not None,
      "summary header: stopped by duration, drained")
check(re.search(r"^stage +plugin +lcore +in +out +drops$", text, re.M) is not None, "summary table header")
for s in stages:
    m = re.search(r"^%s +(\S+) +1 +([0-9]+) +([0-9]+) +([0-9]+)$" % s, text, re.M)
    check(m is not None, "summary row for stage %s%s" % (s, " (%s in %s out %s drops %s)" % m.groups() if m else ""))
check(re.search(r"^mempool lcp_pkt_s0: 0 of [0-9]+ in use$", text, re.M) is not None, "summary: mempool back to 0 in use")
if bad:
    print("--- %s:\n%r" % (path, raw[-2000:]))
sys.exit(1 if bad else 0)
PY
}

conf() {
	mkconf pair-chain.json "$T/$1.json" LG=1 LA=1 LB=1 LS=1 COUNT=0 RATE=50000 SIZE=64 \
		SINK=sink_null SINK_OPTS='{}'
}

step "(a) stdout is a file: periodic lines"
conf plain
lcrun plain "$T/plain.json" --duration 1.5
expect_rc 0 "periodic"
outcheck "$OUT" periodic
rcheck "report parses, lists every stage" -D STAGES="$STAGES" \
	'stages == sorted(STAGES.split())' 'r["stop_reason"] == "duration"' 'st("sink", "in") > 0'

step "(c) --live without a terminal: forced"
conf forced
lcrun forced "$T/forced.json" --duration 1.5 --live
expect_rc 0 "--live"
outcheck "$OUT" live

if ! command -v script >/dev/null 2>&1; then
	say "NOTE: script(1) (util-linux) not found: the terminal cases are skipped"
	finish
fi

# under_tty TAG CONF ARGS...: lcpipe run under script(1), stdout a pseudo-terminal
under_tty() {
	local tag=$1 conf=$2 cmd
	shift 2
	OUT=$T/$tag.out
	ERR=$OUT
	REP=$T/$tag.report.json
	cmd=$(printf '%q ' "$LCPIPE" run "$conf" --report "$REP" "$@")
	say "+ script -qec \"lcpipe run $(basename "$conf") $*\" /dev/null"
	timeout -k 5 "$LCP_TIMEOUT" script -qec "$cmd" /dev/null >"$OUT" 2>&1 </dev/null
	RC=$?
}

step "(b) stdout is a terminal: the live line"
conf tty
under_tty tty "$T/tty.json" --duration 1.5
expect_rc 0 "under script(1)"
outcheck "$OUT" live
rcheck "report under a terminal" 'stages == ["gen", "sink", "wa", "wb"]'

step "(d) --no-live on a terminal: periodic lines"
conf ttyno
under_tty ttyno "$T/ttyno.json" --duration 1.5 --no-live
expect_rc 0 "--no-live under script(1)"
outcheck "$OUT" periodic

step "(e) log lines during the live line replace it, not glued onto its end"
# the demo logs its connections' closes while the live line is on screen: each
# log line must start with "\r\e[K" (issue 19, item 7), so that what the terminal
# shows of a line is never the live line with a log line behind it
if [ -f "$top_builddir/plugins/ws/.libs/ws.so" ]; then
	new_prefix
	# shellcheck disable=SC2046
	under_tty demo "$top_srcdir/conf/demo.json" --duration 1.2 -- $(eal_base) -l 0,1
	expect_rc 0 "the demo under script(1)"
	"$PYTHON3" - "$OUT" <<'PY' || fail "a log line was glued onto the live line (above)"
import re, sys
raw = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
logs = glued = 0
for line in raw.split("\n"):
    shown = line.rstrip("\r").split("\r")[-1]  # what the terminal keeps of it
    if re.match(r"(\x1b\[K)?\[(lcpipe|[a-z_0-9]+:[a-z_0-9]+)\] ", shown):
        logs += 1
    if re.search(r"busy +[0-9]+%.*\[(lcpipe|[a-z_0-9]+:[a-z_0-9]+)\] ", shown):
        glued += 1
        print("glued: %r" % shown[:200])
print("%d log lines, %d glued onto the live line" % (logs, glued))
sys.exit(1 if glued or logs == 0 else 0)
PY
	[ $? -eq 0 ] && ok "every log line stands on its own line"
else
	say "NOTE: plugins/ws not built: (e) skipped"
fi
finish
