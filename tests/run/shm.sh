#!/bin/bash
# sink_shm: the demo pipeline (conf/demo.json: feedsim -> tcp = ring pair = tcp
# -> ws -> metrics -> sink) with its sink replaced by sink_shm, read by
# run/shm_consume (C, built against liblcpipe-shm) and run/shm_read.py (the
# pure-Python reader lcpipe_shm.py). feedsim streams N ticks at a fixed rate and
# ws ends the run after N; consumers wait for the ring file, then read from the
# oldest message until the producer closes the ring. Each payload is checked as
# a feedsim tick: per (conn, symbol), n starts at 1 and grows by exactly 1.
# (a) one C consumer, a ring that holds the whole run: it receives every message
#     the report says sink_shm published (same bytes), none lost, every tick in
#     sequence, 100 symbols; the file is gone after the run;
# (b) slow consumers (Python sleeping 1 ms per message, C 200 us) on a 64-slot
#     ring: both count overruns, first + received + lost == published, the holes
#     in the tick sequences are within what they lost, never a tick out of order;
#     sink_shm still published all N (the producer never waited for them);
# (c) two C consumers and the Python one at once: each sees the whole stream;
# (d) opening what is not a ring (text, empty, /dev/null, missing), a ring of
#     layout version 2 and one with an inconsistent header: a clear error and
#     its exit status, from C and from Python;
# (e) lcpipe check refuses bad options (slots not a power of two, relative path,
#     mode, a ring above 4 GiB, slot_size 0) with a message naming them;
# (f) keep + slot_size below some messages: drop_too_big counted, the holes shown
#     in the next message's `dropped`, the ring left closed and readable after the
#     run; a second producer is refused a path a live one holds; a run refuses a
#     path that is not on tmpfs/hugetlbfs and a file there that is not a ring; a
#     producer killed with SIGKILL leaves a ring its readers see as gone, which the
#     next producer replaces (the old readers see replaced).
. "$(dirname "$0")/lib.sh"

"$LCPIPE" describe sink_shm >/dev/null 2>&1 || skip "the sink_shm plugin is not built"
need_plugins tcp ws feedsim metrics port_ethdev
CONSUME=$RUN_BUILD/shm_consume
[ -x "$CONSUME" ] || { fail "$CONSUME is not built (make -C tests check builds it)"; finish; }
MOD=$top_srcdir/plugins/sink_shm
READ=("$PYTHON3" "$RUN_SRC/shm_read.py" "$MOD")
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not a tmpfs here"
RING=/dev/shm/lcpt-shm-$$
trap 'rm -f "$RING".*; cleanup' EXIT

N=60000

# mkdemo OUT SINK_OPTS_JSON [COUNT RATE SIZES]: conf/demo.json, sink -> sink_shm
mkdemo() {
	"$PYTHON3" - "$top_srcdir/conf/demo.json" "$@" <<'PY' || fail "cannot write $1"
import json, sys
src, out, opts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
count = int(sys.argv[4]) if len(sys.argv) > 4 else 60000
rate = int(sys.argv[5]) if len(sys.argv) > 5 else 60000
sizes = sys.argv[6] if len(sys.argv) > 6 else "96:70,256:25,480:5"
c = json.load(open(src))
for s in c["stages"]:
    if s["name"] == "sink":
        s["plugin"], s["options"] = "sink_shm", opts
    if s["name"] == "exchange":
        s["options"].update({"count": count, "rate": rate, "sizes": sizes})
    if s["name"] == "feed":
        s["options"]["stop_after_msgs"] = count
c["engine"]["duration"] = 20
json.dump(c, open(out, "w"), indent=1)
PY
}

# run_bg TAG CONF: lcpipe in the background with a fresh EAL prefix
run_bg() {
	new_prefix
	# shellcheck disable=SC2046
	lcstart "$1" "$2" --no-live -- $(eal_base) -l 0,1
}

# jcheck WHAT FILE [-D K=V]... EXPR...: assertions on a consumer's JSON line
jcheck() {
	local what=$1 f=$2
	shift 2
	say "-- $what: $(cat "$f" 2>/dev/null)"
	if [ ! -s "$f" ]; then
		fail "$what: no output from the consumer ($f)"
		return 0
	fi
	"$PYTHON3" "$RUN_SRC/rcheck.py" "$f" "$@" || fail "$what (above)"
}

# the report's sink_shm counters, for the consumers' checks
pub() { "$PYTHON3" -c 'import json,sys; c=json.load(open(sys.argv[1]))["stages"]["sink"]["counters"]; print(c[sys.argv[2]])' "$REP" "$1" 2>/dev/null || echo -1; }

# run_wait TAG CONF WHAT: run_bg, then its end, expecting exit 0
run_wait() {
	run_bg "$1" "$2"
	lcwait
	expect_rc 0 "$3"
}

# run_clean TAG CONF WHAT: run_wait, and a clean run: all N ticks published,
# nothing dropped or leaked
run_clean() {
	run_wait "$@"
	rcheck "$3" -D N="$N" 'ctr("sink", "published") == N' 'ctr("sink", "msg.in") == N' \
		'ctr("sink", "drop_too_big") == 0' 'drops("sink") == 0' 'ctr("stats", "msgs") == N' \
		'ctr("stats", "seq_gaps") == 0' 'ctr("sink", "bytes") == ctr("feed", "msg_bytes")' \
		'in_use == 0' 'r["leaked_objects"] == 0'
}

# the tick checks of a consumer that lost nothing
CLEAN=('r["first"] == 0' 'r["received"] == PUB' 'r["lost"] == 0' 'r["overruns"] == 0' 'r["bytes"] == BYTES'
	'r["end"] == "closed"' 'r["bad"] == 0' 'r["ticks"] == r["received"]' 'r["seq_errors"] == 0'
	'r["gaps"] == 0' 'r["first_not_one"] == 0' 'r["symbols"] == 100' 'r["write_seq"] == PUB'
	'r["dropped_sum"] == 0' 'r["loss_flags"] == 0')

step "(a) one C consumer, a ring larger than the run"
mkdemo "$T/a.json" "{\"path\": \"$RING.a\", \"slots\": 65536, \"slot_size\": 512}"
timeout 60 "$CONSUME" "$RING.a" --wait-file 20 --oldest --timeout 20 >"$T/a.c1.json" 2>"$T/a.c1.err" &
C1=$!
PIDS="$PIDS $C1"
sleep 0.2
run_clean a "$T/a.json" "demo into sink_shm"
expect_grep "$ERR" "\[sink_shm:sink\] ring $RING.a: 65536 slots x 512 payload bytes" "the start line names the ring"
expect_grep "$ERR" "\[sink_shm:sink\] ring $RING.a closed: $N messages" "the stop line counts what was published"
wait $C1 || fail "shm_consume exited $? ($(cat "$T/a.c1.err"))"
jcheck "C consumer, whole ring" "$T/a.c1.json" -D PUB="$(pub published)" -D BYTES="$(pub bytes)" "${CLEAN[@]}"
[ ! -e "$RING.a" ] && ok "the ring file is unlinked at the end" || fail "$RING.a still exists after the run"

step "(b) slow consumers on a 64-slot ring: overruns counted, the producer never waits"
mkdemo "$T/b.json" "{\"path\": \"$RING.b\", \"slots\": 64, \"slot_size\": 512}"
timeout 120 "${READ[@]}" "$RING.b" --wait-file 20 --oldest --sleep-us 1000 --timeout 20 >"$T/b.py.json" 2>"$T/b.py.err" &
P1=$!
timeout 120 "$CONSUME" "$RING.b" --wait-file 20 --oldest --delay-us 200 --timeout 20 >"$T/b.c1.json" 2>"$T/b.c1.err" &
C1=$!
PIDS="$PIDS $P1 $C1"
sleep 0.5
# all N published: a producer held to 1000 messages/s would not finish within the timeout
run_clean b "$T/b.json" "demo into a small ring"
wait $P1 || fail "shm_read.py exited $? ($(cat "$T/b.py.err"))"
wait $C1 || fail "shm_consume exited $? ($(cat "$T/b.c1.err"))"
SLOW=('r["overruns"] >= 1' 'r["lost"] >= 1' 'r["first"] + r["received"] + r["lost"] == PUB'
	'0 < r["received"] < PUB' 'r["end"] == "closed"' 'r["bad"] == 0' 'r["ticks"] == r["received"]'
	'r["seq_errors"] == 0' 'r["gap_msgs"] <= r["lost"]' 'r["write_seq"] == PUB')
jcheck "Python reader, 1 ms per message" "$T/b.py.json" -D PUB="$(pub published)" "${SLOW[@]}"
jcheck "C consumer, 200 us per message" "$T/b.c1.json" -D PUB="$(pub published)" "${SLOW[@]}"

step "(c) three consumers at once (two C, one Python): each sees the whole stream"
mkdemo "$T/c.json" "{\"path\": \"$RING.c\", \"slots\": 65536, \"slot_size\": 512}"
timeout 60 "$CONSUME" "$RING.c" --wait-file 20 --oldest --timeout 20 >"$T/c.c1.json" 2>"$T/c.c1.err" &
C1=$!
timeout 60 "$CONSUME" "$RING.c" --wait-file 20 --oldest --timeout 20 >"$T/c.c2.json" 2>"$T/c.c2.err" &
C2=$!
timeout 120 "${READ[@]}" "$RING.c" --wait-file 20 --oldest --timeout 20 >"$T/c.py.json" 2>"$T/c.py.err" &
P1=$!
PIDS="$PIDS $C1 $C2 $P1"
sleep 0.5
run_clean c "$T/c.json" "demo with three consumers"
for w in c1:$C1 c2:$C2 py:$P1; do
	wait "${w#*:}" || fail "consumer ${w%%:*} exited $? ($(cat "$T/c.${w%%:*}.err"))"
	jcheck "consumer ${w%%:*}" "$T/c.${w%%:*}.json" -D PUB="$(pub published)" -D BYTES="$(pub bytes)" "${CLEAN[@]}"
done

step "(f) keep, slot_size 200 below some ticks: drop_too_big, a closed ring left to read"
mkdemo "$T/f.json" "{\"path\": \"$RING.f\", \"slots\": 32768, \"slot_size\": 200, \"keep\": true, \"mode\": \"0640\"}" 20000 0
run_wait f "$T/f.json" "demo into a kept ring"
rcheck "kept ring, small slots" -D N=20000 'ctr("sink", "msg.in") == N' \
	'ctr("sink", "published") + ctr("sink", "drop_too_big") == N' 'ctr("sink", "drop_too_big") > 0' \
	'drops("sink") == ctr("sink", "drop_too_big")' 'in_use == 0' 'r["leaked_objects"] == 0'
[ "$(stat -c %a "$RING.f" 2>/dev/null)" = 640 ] && ok "the kept ring is there, mode 0640" ||
	fail "the kept ring $RING.f is missing or not mode 0640 ($(stat -c %a "$RING.f" 2>&1))"
"$CONSUME" "$RING.f" --oldest --timeout 5 >"$T/f.c1.json" 2>"$T/f.c1.err" || fail "shm_consume on the kept ring: $(cat "$T/f.c1.err")"
jcheck "C consumer, kept ring" "$T/f.c1.json" -D PUB="$(pub published)" -D DROPS="$(pub drop_too_big)" \
	'r["first"] == 0' 'r["received"] == PUB' 'r["lost"] == 0' 'r["end"] == "closed"' 'r["status"] == "closed"' \
	'r["drops"] == DROPS' 'r["dropped_sum"] == DROPS' 'r["bad"] == 0' 'r["seq_errors"] == 0' \
	'r["gap_msgs"] <= DROPS'
"${READ[@]}" "$RING.f" --oldest --timeout 5 >"$T/f.py.json" 2>"$T/f.py.err" || fail "shm_read.py on the kept ring: $(cat "$T/f.py.err")"
jcheck "Python reader, kept ring" "$T/f.py.json" -D PUB="$(pub published)" -D DROPS="$(pub drop_too_big)" \
	'r["first"] == 0' 'r["received"] == PUB' 'r["lost"] == 0' 'r["end"] == "closed"' 'r["status"] == "closed"' \
	'r["drops"] == DROPS' 'r["dropped_sum"] == DROPS' 'r["bad"] == 0' 'r["seq_errors"] == 0'
"$PYTHON3" "$MOD/lcpipe_shm.py" "$RING.f" --oldest --max 3 >"$T/f.cli.out" 2>&1
[ "$(grep -c '^[0-9]* conn=' "$T/f.cli.out")" = 3 ] && ok "lcpipe_shm.py CLI prints messages" ||
	{ fail "lcpipe_shm.py CLI: expected 3 message lines"; cat "$T/f.cli.out"; }

step "(f2) a second producer on a live ring's path is refused; a kept ring is replaced"
mkdemo "$T/f2.json" "{\"path\": \"$RING.f\", \"slots\": 1024, \"slot_size\": 512}" 2000000 20000
run_bg f2 "$T/f2.json"
LIVE_PID=$PID
LIVE_ERR=$ERR
if wait_for "$ERR" "ring $RING.f: 1024 slots" 20; then
	ok "a closed kept ring is replaced by a new producer"
	"$CONSUME" "$RING.f" --info >"$T/f2.info.json" 2>&1
	jcheck "the live ring's header" "$T/f2.info.json" 'r["status"] == "live"' 'r["slots"] == 1024' \
		'r["closed"] == 0' 'r["version"] == 1' 'r["stage"] == "sink"'
	mkdemo "$T/f3.json" "{\"path\": \"$RING.f\"}" 100 0
	new_prefix
	# shellcheck disable=SC2046
	lcrun f3 "$T/f3.json" --no-live -- $(eal_base) -l 0,1
	expect_rc 1 "a second producer on the same path"
	expect_grep "$ERR" "\[sink_shm:sink\] (error: )?$RING.f is the ring of a running producer \(pid [0-9]+" \
		"the refusal names the path and the pid"
else
	fail "the second run did not start its ring"
fi
PID=$LIVE_PID
stop_pid "$PID"
ERR=$LIVE_ERR
[ ! -e "$RING.f" ] && ok "stopped by SIGTERM: the ring is unlinked" || fail "$RING.f still exists after SIGTERM"

step "(f4) a producer that dies: its readers see gone, then replaced when a new one takes the path"
mkdemo "$T/r1.json" "{\"path\": \"$RING.r\", \"slots\": 1024, \"slot_size\": 512}" 2000000 20000
run_bg r1 "$T/r1.json"
R1=$PID
if wait_for "$ERR" "ring $RING.r: 1024 slots" 20; then
	# a reader that reports each change of lcpshm_status()'s Python twin
	"$PYTHON3" - "$MOD" "$RING.r" >"$T/r.status" 2>&1 <<'PY' &
import sys, time
sys.path.insert(0, sys.argv[1])
import lcpipe_shm
r = lcpipe_shm.Reader(sys.argv[2])
last, t0 = None, time.monotonic()
while time.monotonic() - t0 < 20:
    s = r.status()
    if s != last:
        print(s, flush=True)
        last = s
    if s == "replaced":
        break
    time.sleep(0.02)
PY
	W=$!
	PIDS="$PIDS $W"
	sleep 0.5
	for c in $(ps -o pid= --ppid "$R1"); do kill -KILL "$c"; done # lcpipe itself, under its timeout wrapper
	wait "$R1" 2>/dev/null
	sleep 0.3
	[ -e "$RING.r" ] && ok "a killed producer leaves its ring" || fail "$RING.r vanished with its producer"
	mkdemo "$T/r2.json" "{\"path\": \"$RING.r\"}" 100 0
	new_prefix
	# shellcheck disable=SC2046
	lcrun r2 "$T/r2.json" --no-live -- $(eal_base) -l 0,1
	expect_rc 0 "a new producer replaces a dead one's ring"
	wait "$W"
	if [ "$(tr '\n' ' ' <"$T/r.status")" = "live gone replaced " ]; then
		ok "the old reader saw: live, gone, replaced"
	else
		fail "the old reader saw: $(tr '\n' ' ' <"$T/r.status") (expected live gone replaced)"
	fi
else
	fail "the producer did not start its ring"
	stop_pid "$R1"
fi

step "(f3) paths a run refuses: not on tmpfs/hugetlbfs, a file that is not a ring"
if [ "$(stat -f -c %T "$T")" != tmpfs ]; then
	mkdemo "$T/g.json" "{\"path\": \"$T/ring\"}" 100 0
	new_prefix
	# shellcheck disable=SC2046
	lcrun g "$T/g.json" --no-live -- $(eal_base) -l 0,1
	expect_rc 1 "a ring on a disk file system"
	expect_grep "$ERR" "$T/ring: $T is not on tmpfs or hugetlbfs" "the refusal names the path"
else
	say "(skipped: $T is on tmpfs)"
fi
echo "not a ring" >"$RING.txt"
mkdemo "$T/h.json" "{\"path\": \"$RING.txt\"}" 100 0
new_prefix
# shellcheck disable=SC2046
lcrun h "$T/h.json" --no-live -- $(eal_base) -l 0,1
expect_rc 1 "a path holding another file"
expect_grep "$ERR" "$RING.txt exists and is not an lcpipe shm ring: not replacing it" "the refusal names the path"
[ "$(cat "$RING.txt")" = "not a ring" ] && ok "the other file is untouched" || fail "$RING.txt was changed"

step "(d) files that are not rings, or not this layout: clear errors"
# make the version-2 and inconsistent copies from a kept ring
mkdemo "$T/k.json" "{\"path\": \"$RING.k\", \"slots\": 64, \"slot_size\": 256, \"keep\": true}" 100 0
new_prefix
# shellcheck disable=SC2046
lcrun k "$T/k.json" --no-live -- $(eal_base) -l 0,1
expect_rc 0 "a small kept ring"
"$PYTHON3" - "$RING.k" "$T" <<'PY' || fail "cannot make the patched rings"
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
v2 = bytearray(b); struct.pack_into("<I", v2, 8, 2); open(sys.argv[2] + "/v2.ring", "wb").write(v2)
bad = bytearray(b); struct.pack_into("<I", bad, 16, 48); open(sys.argv[2] + "/slots48.ring", "wb").write(bad)
open(sys.argv[2] + "/short.ring", "wb").write(b[:1000])
PY
echo "hello" >"$T/text"
: >"$T/empty"
# expect_open FILE STATUS REGEX: both consumers exit STATUS, saying REGEX
expect_open() {
	local f=$1 want=$2 re=$3 rc w e
	for w in C Python; do
		e=$T/open.$w.err
		if [ $w = C ]; then "$CONSUME" "$f" >/dev/null 2>"$e"; else "${READ[@]}" "$f" >/dev/null 2>"$e"; fi
		rc=$?
		if [ $rc = "$want" ] && grep -Eq -- "$re" "$e"; then
			ok "$w: $(basename "$f"): exit $rc, $(cat "$e")"
		else
			fail "$w: $(basename "$f"): exit $rc (expected $want), said: $(cat "$e") (expected /$re/)"
		fi
	done
}
expect_open "$T/text" 3 "$T/text: not an lcpipe shm ring \(6 bytes; magic"
expect_open "$T/empty" 3 "$T/empty: not an lcpipe shm ring \(0 bytes"
expect_open /dev/null 3 "/dev/null: not an lcpipe shm ring \(not a regular file\)"
expect_open "$T/v2.ring" 4 "$T/v2.ring: an lcpipe shm ring of layout version 2; this (library|reader) reads version 1"
expect_open "$T/slots48.ring" 5 "$T/slots48.ring: inconsistent ring header \(hdr_size 4096, slots 48"
expect_open "$T/short.ring" 5 "$T/short.ring: inconsistent ring header"
expect_open "$T/missing" 1 "$T/missing: cannot open: No such file or directory"
"$CONSUME" "$RING.k" --oldest >"$T/k.json.out" 2>&1 && ok "the kept ring itself opens" || fail "the kept ring: $(cat "$T/k.json.out")"

step "(e) lcpipe check refuses bad options"
# check_bad WHAT OPTS REGEX
check_bad() {
	mkdemo "$T/e.json" "$2"
	"$LCPIPE" check "$T/e.json" >"$T/e.out" 2>&1
	RC=$?
	if [ $RC = 78 ] && grep -Eq -- "$3" "$T/e.out"; then
		ok "$1: exit 78, $(grep -E -- "$3" "$T/e.out" | head -1)"
	else
		fail "$1: exit $RC (expected 78), expected /$3/ in: $(cat "$T/e.out")"
	fi
}
check_bad "slots not a power of two" '{"slots": 1000}' \
	'error: stages\[7\]\.options\.slots: 1000 is not a power of two \(e\.g\. 512 or 1024\)'
check_bad "a relative path" '{"path": "rings/x"}' \
	'error: stages\[7\]\.options: path "rings/x" is not absolute'
check_bad "a path naming a directory" '{"path": "/dev/shm/x/"}' 'path "/dev/shm/x/" must name a file'
check_bad "mode not octal" '{"mode": "0999"}' 'mode "0999" is not octal permission bits'
check_bad "a ring above 4 GiB" '{"slots": 67108864, "slot_size": 4096}' \
	'slots 67108864 x 4160 bytes per slot .* above the 4 GiB bound'
check_bad "slot_size 0" '{"slot_size": 0}' 'stages\[7\]\.options\.slot_size'
check_bad "an unknown option" '{"ring_size": 64}' 'stages\[7\]\.options.*ring_size'
mkdemo "$T/e-ok.json" '{"slots": 1024, "slot_size": 100, "mode": "644", "keep": true}'
"$LCPIPE" check "$T/e-ok.json" >"$T/e-ok.out" 2>&1 && ok "good options pass lcpipe check" ||
	fail "lcpipe check refused good options: $(cat "$T/e-ok.out")"
finish
