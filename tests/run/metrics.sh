#!/bin/bash
# The metrics stage (plugins/metrics, doc/metrics.md), fed by tick_src
# (tests/run/plugins/tick_src.c), a test source that emits JSON ticks as msgs and
# counts what it injects: sequence gaps, duplicates, non-ticks, malformed ticks,
# messages without an rx TSC. Each case compares metrics' counters with those
# exactly, and checks the latency histogram (buckets add up to lat_samples, the
# quantile gauges are ordered) and that every msg went back to its pool.
#   (a) cross-lcore, mixed layouts (reordered fields, blanks, escaped traps), padding,
#       6 connections with max_conns 4 (conn_other), gaps and duplicates, out -> sink
#   (b) same lcore, out unlinked (metrics frees), sample 7, non-ticks, malformed
#       ticks, messages without rx TSC
#   (c) metrics_naive (the measurement control) on (a)'s traffic in compact form:
#       the same results
#   (d) a symbol table smaller than the symbols: symbol_table_full
#   (e) configurable field names; the default names on that traffic see no tick;
#       (e3) 26-byte symbols sharing their first 22 bytes: tracked apart (a table
#       of 40 symbols, 128 slots, so that lookups probe past other symbols)
#   (f) lcpipe check refuses bad field names
# Paths mode (venue shapes; msg_src sends crafted messages, one per line of a
# file, each line's expected outcome written beside it):
#   (g) (a)'s traffic again in paths mode (top-level "s"/"n", all selected): the
#       walk finds what the scan finds, through the escaped-key traps
#   (h) Binance-shaped ranges: nested paths, selection, numbers as strings,
#       gaps, duplicates, overlaps, malformed ranges and symbols
#   (i) OKX-shaped chains: the first array element, prev == last, restarts by
#       snapshot, a sequence reset to a lower number
#   (j) Bybit-shaped: a prefix selection, snapshot restarts, the first key wins
#   (k) lcpipe check refuses contradictory or malformed paths options
. "$(dirname "$0")/lib.sh"

[ -f "$PLUGDIR/tick_src.so" ] || skip "test plugin $PLUGDIR/tick_src.so not built"
[ -f "$top_builddir/plugins/metrics/.libs/metrics.so" ] ||
	skip "plugins/metrics not built (not in plugins/Makefile.am?)"

LINK_RING='[{"from": "src.out", "to": "m.in", "ring_size": 8192}, "m.out -> sink.msg"]'
LINK_DIRECT='["src.out -> m.in", "m.out -> sink.msg"]'
LINK_UNLINKED='["src.out -> m.in"]'
# the sink stage, on lcore $1 (left out when metrics' out is not linked: an
# isolated stage is a config error)
sink_on() { printf ', {"name": "sink", "plugin": "sink_null", "lcore": %s}' "$1"; }

# checks every run makes: nothing lost, nothing leaked, counts add up
common=(
	'r["drained"] == True'
	'ctr("m", "msgs") == ctr("src", "msgs") == N'
	'ctr("m", "bytes") == ctr("src", "bytes")'
	'ctr("m", "ticks") == ctr("src", "ticks")'
	'ctr("m", "non_tick") == ctr("src", "non_ticks")'
	'ctr("m", "bad_tick") == ctr("src", "bad_ticks")'
	'ctr("m", "seq_gaps") == ctr("src", "injected_gaps")'
	'ctr("m", "gap_events") == ctr("src", "injected_gap_events")'
	'ctr("m", "seq_dups") == ctr("src", "injected_dups")'
	'ctr("m", "symbols") + ctr("m", "seq_in_order") + ctr("m", "gap_events") + ctr("m", "seq_dups") + ctr("m", "seq_resyncs") + ctr("m", "symbol_table_full") == ctr("m", "ticks")' 'ctr("m", "seq_resyncs") == ctr("m", "sessions") == 0'
	'sum(hist("m", "latency_seconds")["buckets"]) == hist("m", "latency_seconds")["count"] == ctr("m", "lat_samples")' \
	'len(hist("m", "latency_seconds")["buckets"]) == len(hist("m", "latency_seconds")["le"]) + 1 == 150' \
	'all(a < b for a, b in zip(hist("m", "latency_seconds")["le"], hist("m", "latency_seconds")["le"][1:]))' \
	'not any(k.startswith("lat_b") or k.startswith("latency_seconds") for k in st("m", "counters"))' \
	'hist("m", "latency_seconds")["count"] == 0 or 0 < hist("m", "latency_seconds")["p50"] <= hist("m", "latency_seconds")["p99"] <= hist("m", "latency_seconds")["p999"] <= ctr("m", "lat_max_ns") * 1.3e-9' \
	'hist("m", "latency_seconds")["count"] == 0 or hist("m", "latency_seconds")["sum"] > 0'
	'ctr("m", "lat_samples") + ctr("m", "no_rx_tsc") + ctr("m", "lat_future") == SAMPLED'
	'ctr("m", "no_rx_tsc") == len([i for i in range(0, N, S) if E and (i + 1) % E == 0])'
	'ctr("m", "lat_p50_ns") <= ctr("m", "lat_p99_ns") <= ctr("m", "lat_p999_ns") <= ctr("m", "lat_max_ns")'
	'ctr("m", "lat_samples") == 0 or ctr("m", "lat_max_ns") > 0'
	'ctr("src", "in_use_at_fini") == 0'
	'total_drops() == 0'
	'in_use == 0'
	'r["leaked_objects"] == 0'
)
# -D values for common: N messages, sample S (SAMPLED = ceil(N / S)), no_tsc_every E
defs() { # N S E
	printf '%s\n' -D "N=$1" -D "S=$2" -D "SAMPLED=$((($1 + $2 - 1) / $2))" -D "E=$3"
}
# per-connection counters: metrics' conn<i> == tick_src's conn<i> below max_conns M,
# the rest under conn_other (tick_src names connections 0..7, conn_hi above)
conn_checks() { # M
	local m=$1 i
	for i in $(seq 0 7); do
		if [ "$i" -lt "$m" ]; then
			printf '%s\n' "ctr(\"m\", \"conn${i}_msgs\") == ctr(\"src\", \"conn${i}_msgs\")" \
				"ctr(\"m\", \"conn${i}_bytes\") == ctr(\"src\", \"conn${i}_bytes\")"
		fi
	done
	printf '%s\n' \
		"ctr(\"m\", \"conn_other_msgs\") == sum(ctr(\"src\", \"conn%d_msgs\" % i) for i in range($m, 8)) + ctr(\"src\", \"conn_hi_msgs\")" \
		"ctr(\"m\", \"conn_other_bytes\") == sum(ctr(\"src\", \"conn%d_bytes\" % i) for i in range($m, 8)) + ctr(\"src\", \"conn_hi_bytes\")" \
		"sum(ctr(\"m\", \"conn%d_msgs\" % i) for i in range(16)) + ctr(\"m\", \"conn_other_msgs\") == N" \
		"sum(ctr(\"m\", \"conn%d_msgs\" % i) for i in range($m, 16)) == 0"
}

# tcheck WHAT SAMPLE NO_TSC_EVERY MAX_CONNS EXPR...: rcheck of a run of N ticks:
# common (defs N SAMPLE NO_TSC_EVERY), conn_checks MAX_CONNS, then EXPR
tcheck() {
	local what=$1 s=$2 e=$3 m=$4 cc
	shift 4
	mapfile -t cc < <(conn_checks "$m")
	rcheck "$what" $(defs "$N" "$s" "$e") "${common[@]}" "${cc[@]}" "$@"
}

# mconf TEMPLATE TAG [KEY=VALUE]...: TEMPLATE filled into $T/TAG.json, stage m's
# plugin M_PLUGIN (default metrics)
mconf() {
	local tmpl=$1 tag=$2
	shift 2
	mkconf "$tmpl" "$T/$tag.json" "$@"
	[ "${M_PLUGIN:-metrics}" = metrics ] || sed -i "s/\"plugin\": \"metrics\"/\"plugin\": \"$M_PLUGIN\"/" "$T/$tag.json"
}
# mrun TEMPLATE TAG [KEY=VALUE]...: mconf, then the run to its end (exit 0)
mrun() {
	mconf "$@"
	lcrun "$2" "$T/$2.json" --duration 20 --no-live
	expect_rc 0 "($2)"
}
# tick_pipe PLACING: sets PIPE, the KEY=VALUEs of metrics.json that place its
# stages: "ring" src@1 -> m@2 over a ring -> sink@2; "direct" src, m and sink
# on lcore 1; "unlinked" src@1 -> m@1 with m's out not linked, no sink stage
tick_pipe() {
	case $1 in
	ring) PIPE=(LSRC=1 LM=2 LINKS="$LINK_RING" SINK="$(sink_on 2)") ;;
	direct) PIPE=(LSRC=1 LM=1 LINKS="$LINK_DIRECT" SINK="$(sink_on 1)") ;;
	unlinked) PIPE=(LSRC=1 LM=1 LINKS="$LINK_UNLINKED" SINK=) ;;
	*)
		fail "tick_pipe: no placing \"$1\""
		finish
		;;
	esac
}
# trun TAG PLACING SRC_OPTS M_OPTS: mrun of metrics.json, tick_src with options
# SRC_OPTS -> metrics with options M_OPTS, placed as tick_pipe PLACING says
trun() {
	tick_pipe "$2"
	mrun metrics.json "$1" "${PIPE[@]}" SRC_OPTS="$3" M_OPTS="$4"
}
# refuses TEMPLATE TAG REGEX [KEY=VALUE]...: lcpipe check refuses mconf's config
# (exit 78), saying REGEX
refuses() {
	local tag=$2 re=$3
	mconf "$1" "$2" "${@:4}"
	"$LCPIPE" check "$T/$tag.json" >"$T/$tag.out" 2>&1
	RC=$?
	OUT=$T/$tag.out ERR=$T/$tag.out expect_rc 78 "($tag) refused"
	expect_grep "$T/$tag.out" "$re" "($tag) says why"
}

N=200000
step "(a) tick_src@1 -> metrics@2 (ring) -> sink_null@2: mixed layouts, 6 conns, gaps and duplicates"
trun a ring \
	'{"count": '$N', "symbols": 64, "conns": 6, "gap_every": 97, "gap_size": 3, "dup_every": 101, "layout": "mixed", "pad": 40}' \
	'{"max_conns": 4}'
tcheck "(a) cross-lcore" 1 0 4 \
	'r["stop_reason"] == "tick_src: all messages sent"' \
	'ctr("src", "injected_gaps") == 3 * ctr("src", "injected_gap_events") > 0' \
	'ctr("src", "injected_dups") > 0' \
	'ctr("m", "symbols") == ctr("src", "symbols_started") == 64' \
	'ctr("m", "symbol_table_full") == 0' \
	'ctr("m", "non_tick") == ctr("m", "bad_tick") == 0' \
	'ctr("m", "lat_samples") == N' \
	'not any(c.startswith("naive_") for c in st("m", "counters"))' \
	'ctr("m", "out.out") == st("sink", "in") == N'
expect_grep "$ERR" '\[metrics:m\] latency histogram latency_seconds: buckets b000\.\.b149' "bucket bounds logged at start"
expect_grep "$ERR" '\[metrics:m\] +b140:<[0-9]+ .* b149:inf' "the last bucket is open"
expect_grep "$ERR" "\\[metrics:m\\] $N messages \\([0-9.]+ [kMG]?msg/s\\), [0-9.]+ MB/s, latency p50 [0-9.]+µs p99 [0-9.]+µs p99\\.9 [0-9.]+µs max [0-9.]+µs \\($N samples\\), sequence gaps [1-9][0-9]* \\(events [1-9][0-9]*\\), duplicates [1-9][0-9]*, symbols 64\$" \
	"summary line at stop"

N=50000
step "(b) same lcore, out unlinked, sample 7, non-ticks, malformed ticks, no rx TSC, padding 300"
trun b unlinked \
	'{"count": '$N', "symbols": 11, "conns": 3, "non_tick_every": 10, "bad_every": 13, "no_tsc_every": 50, "pad": 300, "burst": 17}' \
	'{"sample": 7, "log_buckets": false}'
tcheck "(b) sample, non-ticks, unlinked out" 7 50 16 \
	'ctr("m", "non_tick") > 0' \
	'ctr("m", "bad_tick") > 0' \
	'ctr("m", "no_rx_tsc") > 0' \
	'ctr("m", "lat_future") == 0' \
	'ctr("m", "seq_gaps") == ctr("m", "seq_dups") == 0' \
	'ctr("m", "seq_in_order") == ctr("m", "ticks") - ctr("m", "symbols")' \
	'ctr("m", "symbols") == ctr("src", "symbols_started") == 11' \
	'ctr("m", "out.out") == ctr("m", "out.drop_unlinked") == 0' \
	'stages == ["m", "src"]'
expect_nogrep "$ERR" 'latency histogram: counters' "log_buckets false: no bucket table"

N=200000
step "(c) metrics_naive (the measurement control), cross-lcore, compact ticks with gaps and duplicates: the same results"
M_PLUGIN=metrics_naive trun c ring \
	'{"count": '$N', "symbols": 64, "conns": 6, "gap_every": 97, "gap_size": 3, "dup_every": 101, "no_tsc_every": 1000}' \
	'{"max_conns": 4, "log_buckets": false}'
tcheck "(c) metrics_naive" 1 1000 4 \
	'ctr("m", "seq_gaps") > 0' \
	'ctr("m", "symbols") == 64' \
	'all(ctr("m", "naive_field_" + f) == N for f in "snpqt")'

N=20000
step "(d) symbol table of 8 for 16 symbols"
trun d direct \
	'{"count": '$N', "symbols": 16, "dup_every": 33}' \
	'{"symbols": 8, "log_buckets": false}'
# symbols 0..7 come first (round robin, one path): they are tracked, 8..15 are not
rcheck "(d) table full" $(defs $N 1 0) \
	'ctr("m", "symbols") == 8' \
	'ctr("m", "symbol_table_full") == N // 2' \
	'ctr("m", "symbols") + ctr("m", "seq_in_order") + ctr("m", "seq_dups") + ctr("m", "symbol_table_full") == ctr("m", "ticks") == N' \
	'0 < ctr("m", "seq_dups") < ctr("src", "injected_dups")' \
	'in_use == 0'
expect_grep "$ERR" '\[metrics:m\] .*symbols 8 \(table full\)$' "summary says the table is full"

N=30000
step "(e) field names sym/seq, mixed layouts; then the default names on the same traffic"
trun e ring \
	'{"count": '$N', "symbols": 5, "symbol_field": "sym", "seq_field": "seq", "layout": "mixed", "gap_every": 11, "dup_every": 17, "non_tick_every": 23}' \
	'{"symbol_field": "sym", "seq_field": "seq", "log_buckets": false}'
rcheck "(e) sym/seq" $(defs $N 1 0) "${common[@]}" 'ctr("m", "seq_gaps") > 0' 'ctr("m", "symbols") == 5'
trun e2 direct \
	'{"count": 1000, "symbols": 5, "symbol_field": "sym", "seq_field": "seq"}' \
	'{"log_buckets": false}'
rcheck "(e2) default names see no tick" 'ctr("m", "non_tick") == ctr("m", "msgs") == 1000' \
	'ctr("m", "ticks") == ctr("m", "symbols") == 0' 'in_use == 0'

step "(e3) long symbols that share their first 16+ bytes stay apart (keys compared past 16 bytes)"
trun e3 direct \
	'{"count": '$N', "symbols": 40, "symbol_prefix": "BTC-USDT-SWAP-2026-12-", "gap_every": 11, "dup_every": 17}' \
	'{"symbols": 40, "log_buckets": false}'
rcheck "(e3) 26-byte symbols" $(defs $N 1 0) "${common[@]}" 'ctr("m", "symbols") == 40' 'ctr("m", "seq_gaps") > 0'

step "(f) lcpipe check refuses bad field names"
# f_refuses TAG M_OPTS REGEX
f_refuses() {
	tick_pipe direct
	refuses metrics.json "$1" "$3" "${PIPE[@]}" SRC_OPTS='{}' M_OPTS="$2"
}
f_refuses f1 '{"symbol_field": "k", "seq_field": "k"}' 'stages\[1\]\.options: seq_field and symbol_field are both "k"'
f_refuses f2 '{"seq_field": "a\"b"}' 'seq_field "a"b": a key with a quote'

# ---- paths mode ----
[ -f "$PLUGDIR/msg_src.so" ] || { fail "test plugin $PLUGDIR/msg_src.so not built"; finish; }

N=200000
step "(g) (a)'s traffic in paths mode: select_field s, any value"
trun g ring \
	'{"count": '$N', "symbols": 64, "conns": 6, "gap_every": 97, "gap_size": 3, "dup_every": 101, "layout": "mixed", "pad": 40}' \
	'{"max_conns": 4, "select_field": "s", "select_value": "*", "log_buckets": false}'
tcheck "(g) paths mode on the simulator's ticks" 1 0 4 \
	'ctr("src", "injected_gaps") > 0' 'ctr("m", "symbols") == 64' \
	'ctr("m", "unselected") == ctr("m", "seq_resets") == 0'
expect_grep "$ERR" '\[metrics:m\] paths from the top level: symbol s, sequence n; ticks: s = \*; restarts: new sessions only' \
	"(g) the paths are logged"
expect_grep "$ERR" "\\[metrics:m\\] $N messages .*symbols 64, unselected 0, snapshots restarting 0\$" "(g) summary line"

# lines_case TAG M_OPTS FILE: the lines of FILE ("#" lines dropped, the outcome
# column after " ## " cut off) through metrics, one message each; sets LINES_N
lines_case() {
	local tag=$1 opts=$2 src=$3
	sed -e '/^#/d' -e 's/ ## .*$//' "$src" >"$T/$tag.lines"
	LINES_N=$(wc -l <"$T/$tag.lines")
	mrun metrics-lines.json "$tag" LINES="$T/$tag.lines" COUNT="$LINES_N" M_OPTS="$opts"
}
# -D W_<outcome>=how many lines of FILE name that outcome in their column
outcomes() {
	local k
	for k in unselected bad symbols in_order gap dup reset; do
		printf '%s\n' -D "W_$k=$(grep -c " ## $k" "$1")"
	done
}
paths_common=(
	'ctr("m", "msgs") == N'
	'ctr("m", "unselected") == W_unselected'
	'ctr("m", "bad_tick") == W_bad'
	'ctr("m", "non_tick") == 0'
	'ctr("m", "ticks") == N - W_unselected - W_bad'
	'ctr("m", "symbols") == W_symbols'
	'ctr("m", "seq_in_order") == W_in_order'
	'ctr("m", "gap_events") == W_gap'
	'ctr("m", "seq_dups") == W_dup'
	'ctr("m", "seq_resets") == W_reset'
	'ctr("m", "seq_resyncs") == 0'
	'ctr("m", "symbols") + ctr("m", "seq_in_order") + ctr("m", "gap_events") + ctr("m", "seq_dups") + ctr("m", "seq_resets") == ctr("m", "ticks")'
	'in_use == 0'
)

step "(h) Binance-shaped: data.s, data.U .. data.u, select data.e = depthUpdate"
cat >"$T/h.src" <<'LINES'
# each line: a message ## what metrics must make of it
{"result":null,"id":1} ## unselected: the SUBSCRIBE answer
{"stream":"aaa@depth","data":{"e":"depthUpdate","E":1,"s":"AAA","U":1,"u":3,"b":[["1","2"]],"a":[]}} ## symbols
{"stream":"aaa@depth","data":{"e":"depthUpdate","E":2,"s":"AAA","U":4,"u":4,"b":[],"a":[]}} ## in_order
{"stream":"aaa@depth","data":{"e":"depthUpdate","s":"AAA","U":"7","u":"9"}} ## gap of 2 (5, 6), numbers as strings
{"stream":"aaa@depth","data":{"e":"depthUpdate","s":"AAA","U":8,"u":9}} ## dup: all seen
{"stream":"aaa@depth","data":{"e":"depthUpdate","s":"AAA","U":9,"u":12}} ## dup: an overlap, last becomes 12
{"stream":"aaa@depth","data":{"e":"depthUpdate","s":"AAA","U":13,"u":13}} ## in_order
{ "data" : { "s" : "AAA" , "U" : 14 , "u" : 14 , "e" : "depthUpdate" } , "stream" : "x" } ## in_order: blanks, e last
{"stream":"aaa@aggTrade","data":{"e":"aggTrade","s":"AAA","U":1,"u":1}} ## unselected: another event
{"stream":"bbb@depth","data":{"e":"depthUpdate","s":"BBB","u":5}} ## bad: no U
{"stream":"bbb@depth","data":{"e":"depthUpdate","s":"BBB","U":6,"u":5}} ## bad: U > u
{"stream":"bbb@depth","data":{"e":"depthUpdate","s":"BBB","U":-1,"u":5}} ## bad: negative
{"stream":"bbb@depth","data":{"e":"depthUpdate","s":"BBB","U":1.5,"u":5}} ## bad: a fraction
{"stream":"bbb@depth","data":{"e":"depthUpdate","s":"BBB","U":"1 ","u":5}} ## bad: a blank in the string
{"e":"depthUpdate","s":"CCC","U":1,"u":1} ## unselected: the raw stream's shape has no data.e
{"stream":"bbb@depth","data":{"e":"depthUpdate","s":"BBB","U":10,"u":11}} ## symbols
{"stream":"bbb@depth","data":{"e":"depthUpdate","s":"BBB","U":13,"u":14}} ## gap of 1 (12)
not json ## unselected
 ## unselected: empty
{"stream":"aaa@depth","data":{"e":"depthUpdate","s":"AAA","U":15,"u":20,"b":[["1","2"],["3","]\"4"]],"a":[]}} ## in_order
{"stream":"x@depth","data":{"e":"depthUpdate","s":"","U":1,"u":1}} ## bad: an empty symbol
{"stream":"x@depth","data":{"e":"depthUpdate","s":"0123456789012345678901234567890123","U":1,"u":1}} ## bad: a symbol of 34 bytes
{"stream":"x@depth","data":{"e":"depthUpdate","s":{"a":1},"U":1,"u":1}} ## bad: a symbol that is an object
LINES
lines_case h '{"symbol_field": "data.s", "seq_field": "data.u", "seq_first_field": "data.U", "select_field": "data.e", "select_value": "depthUpdate", "log_buckets": false}' "$T/h.src"
# shellcheck disable=SC2046
rcheck "(h) ranges" -D N="$LINES_N" $(outcomes "$T/h.src") "${paths_common[@]}" 'ctr("m", "seq_gaps") == 3'
expect_grep "$ERR" 'paths from the top level: symbol data.s, sequence data.u \(a range from data.U\); ticks: data.e = depthUpdate; restarts: new sessions only' \
	"(h) the paths are logged"

step "(i) OKX-shaped: arg.instId, data.0.prevSeqId -> data.0.seqId, snapshots restart"
cat >"$T/i.src" <<'LINES'
{"event":"subscribe","arg":{"channel":"books","instId":"X-1"},"connId":"a4d3ae55"} ## unselected: the ack
{"arg":{"channel":"books","instId":"X-1"},"action":"snapshot","data":[{"asks":[["8476.98","415","0","13"]],"bids":[],"ts":"1","checksum":-8,"prevSeqId":-1,"seqId":100}]} ## symbols
{"arg":{"channel":"books","instId":"X-1"},"action":"update","data":[{"asks":[["1","2","0","1"]],"bids":[],"ts":"2","checksum":5,"prevSeqId":100,"seqId":107}]} ## in_order: ids jump
{"arg":{"channel":"books","instId":"X-1"},"action":"update","data":[{"asks":[],"bids":[],"ts":"3","checksum":5,"prevSeqId":107,"seqId":107}]} ## in_order: no change, seqId == prevSeqId
{"arg":{"channel":"books","instId":"X-1"},"action":"update","data":[{"asks":[],"bids":[],"prevSeqId":120,"seqId":130}]} ## gap: the chain broke
{"arg":{"channel":"books","instId":"X-1"},"action":"update","data":[{"asks":[],"bids":[],"prevSeqId":107,"seqId":120}]} ## dup: late
{"arg":{"channel":"books","instId":"X-1"},"action":"update","data":[{"asks":[],"bids":[],"prevSeqId":130,"seqId":5}]} ## in_order: a sequence reset to a lower number
{"arg":{"channel":"books","instId":"X-1"},"action":"snapshot","data":[{"asks":[],"bids":[],"prevSeqId":-1,"seqId":50}]} ## reset
{"arg":{"channel":"books","instId":"X-1"},"action":"update","data":[{"prevSeqId":50,"seqId":51}]} ## in_order
{"arg":{"channel":"books","instId":"X-1"},"action":"update","data":[{"seqId":52}]} ## bad: no prevSeqId
{"arg":{"channel":"books","instId":"X-1"},"action":"update","data":[{"prevSeqId":"abc","seqId":52}]} ## bad: not a number
{"arg":{"channel":"books","instId":"X-2"},"action":"update","data":[{"prevSeqId":7,"seqId":9}]} ## symbols: no snapshot first
{"op":"error","code":"60012"} ## unselected
{"arg":{"channel":"books","instId":"X-2"},"action":"update","data":[]} ## bad: no data element
{"arg":{"channel":"books","instId":"X-2"},"action":"update","data":[{"prevSeqId":"9","seqId":"12"},{"prevSeqId":1,"seqId":2}]} ## in_order: element 0 only
{"arg":{"channel":"books","instId":"X-2"},"action":"snapshot","data":[{"seqId":1}]} ## reset: a snapshot needs no prevSeqId
LINES
lines_case i '{"symbol_field": "arg.instId", "seq_field": "data.0.seqId", "seq_prev_field": "data.0.prevSeqId", "select_field": "action", "select_value": "snapshot,update", "reset_field": "action", "reset_value": "snapshot", "log_buckets": false}' "$T/i.src"
# shellcheck disable=SC2046
rcheck "(i) chains" -D N="$LINES_N" $(outcomes "$T/i.src") "${paths_common[@]}" 'ctr("m", "seq_gaps") == ctr("m", "gap_events")'
expect_grep "$ERR" 'sequence data.0.seqId \(a chain after data.0.prevSeqId\); ticks: action = snapshot,update; restarts: action = snapshot' \
	"(i) the paths are logged"

step "(j) Bybit-shaped: data.s, data.u, select topic = orderbook.*, snapshots restart"
cat >"$T/j.src" <<'LINES'
{"success":true,"ret_msg":"","conn_id":"c1","req_id":"","op":"subscribe"} ## unselected
{"topic":"orderbook.50.AAA","type":"snapshot","ts":1,"data":{"s":"AAA","b":[["1","2"]],"a":[],"u":1,"seq":900},"cts":1} ## symbols
{"topic":"orderbook.50.AAA","type":"delta","ts":2,"data":{"s":"AAA","b":[],"a":[["3","4"]],"u":2,"seq":905},"cts":2} ## in_order
{"topic":"orderbook.50.AAA","type":"delta","ts":3,"data":{"s":"AAA","b":[],"a":[],"u":"4","seq":907},"cts":3} ## gap
{"topic":"orderbook.50.AAA","type":"delta","ts":4,"data":{"s":"AAA","b":[],"a":[],"u":4,"seq":907},"cts":4} ## dup
{"topic":"publicTrade.AAA","type":"snapshot","ts":5,"data":[{"s":"AAA","i":"1"}]} ## unselected: another topic
{"topic":"orderbook","type":"delta","data":{"s":"AAA","u":5}} ## unselected: shorter than the prefix
{"topic":"orderbook.50.AAA","type":"snapshot","ts":6,"data":{"s":"AAA","b":[],"a":[],"u":1,"seq":950},"cts":6} ## reset: u = 1 after a restart of theirs
{"topic":"orderbook.50.AAA","type":"delta","ts":7,"data":{"s":"AAA","b":[],"a":[],"u":2,"seq":951},"cts":7} ## in_order
{"topic":"orderbook.50.AAA","type":"delta","data":{"s":"AAA","u":3},"data":{"s":"AAA","u":99}} ## in_order: the first data wins
{"success":true,"ret_msg":"pong","conn_id":"c1","op":"ping"} ## unselected
LINES
lines_case j '{"symbol_field": "data.s", "seq_field": "data.u", "select_field": "topic", "select_value": "orderbook.*", "reset_field": "type", "reset_value": "snapshot", "log_buckets": false}' "$T/j.src"
# shellcheck disable=SC2046
rcheck "(j) prefix selection, restarts" -D N="$LINES_N" $(outcomes "$T/j.src") "${paths_common[@]}" 'ctr("m", "seq_gaps") == 1'

step "(k) lcpipe check refuses contradictory or malformed paths options"
k_refuses() { # TAG M_OPTS REGEX [PLUGIN]
	M_PLUGIN=${4:-metrics} refuses metrics-lines.json "k$1" "$3" LINES=/dev/null COUNT=1 M_OPTS="$2"
}
k_refuses 1 '{"seq_first_field": "U", "seq_prev_field": "pu"}' 'stages\[1\]\.options: seq_first_field and seq_prev_field are both set'
k_refuses 2 '{"select_field": "e"}' 'select_field and select_value go together \("e", ""\)'
k_refuses 3 '{"reset_value": "snapshot"}' 'reset_value without reset_field'
k_refuses 4 '{"symbol_field": "data..s"}' 'symbol_field: path "data\.\.s": an empty component'
k_refuses 5 '{"symbol_field": "data", "seq_field": "data.u"}' "seq_field: path \"data\\.u\" goes inside another path's value"
k_refuses 6 '{"select_field": "e", "select_value": "a*b"}' "select_value \"a\\*b\": '\\*' only at the end"
k_refuses 7 '{"select_field": "e", "select_value": "a,,b"}' 'select_value "a,,b": an empty value'
k_refuses 8 '{"select_field": "e", "select_value": "x"}' 'options\.select_field: unknown option' metrics_naive
k_refuses 9 '{"seq_field": "d.u", "seq_first_field": "d.u"}' 'seq_first_field "d\.u" is also the symbol or sequence field'
finish
