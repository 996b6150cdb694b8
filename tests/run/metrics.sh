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
#   (c) naive mode on (a)'s traffic in compact form: the same results
#   (d) a symbol table smaller than the symbols: symbol_table_full
#   (e) configurable field names; the default names on that traffic see no tick
#   (f) lcpipe check refuses bad field names
. "$(dirname "$0")/lib.sh"

[ -f "$PLUGDIR/tick_src.so" ] || skip "test plugin $PLUGDIR/tick_src.so not built"
[ -f "$top_builddir/plugins/metrics/.libs/metrics.so" ] ||
	skip "plugins/metrics not built (not in plugins/Makefile.am SUBDIRS?)"

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
	'sum(ctr("m", "lat_b%03d" % b) for b in range(150)) == ctr("m", "lat_samples")'
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

N=200000
step "(a) tick_src@1 -> metrics@2 (ring) -> sink_null@2: mixed layouts, 6 conns, gaps and duplicates"
mkconf metrics.json "$T/a.json" LSRC=1 LM=2 LINKS="$LINK_RING" SINK="$(sink_on 2)" \
	SRC_OPTS='{"count": '$N', "symbols": 64, "conns": 6, "gap_every": 97, "gap_size": 3, "dup_every": 101, "layout": "mixed", "pad": 40}' \
	M_OPTS='{"max_conns": 4}'
lcrun a "$T/a.json" --duration 20 --no-live
expect_rc 0 "(a)"
mapfile -t cc < <(conn_checks 4)
rcheck "(a) cross-lcore" $(defs $N 1 0) "${common[@]}" "${cc[@]}" \
	'r["stop_reason"] == "tick_src: all messages sent"' \
	'ctr("src", "injected_gaps") == 3 * ctr("src", "injected_gap_events") > 0' \
	'ctr("src", "injected_dups") > 0' \
	'ctr("m", "symbols") == ctr("src", "symbols_started") == 64' \
	'ctr("m", "symbol_table_full") == 0' \
	'ctr("m", "non_tick") == ctr("m", "bad_tick") == 0' \
	'ctr("m", "lat_samples") == N' \
	'sum(ctr("m", "naive_field_" + f) for f in "snpqt") == 0' \
	'ctr("m", "out.out") == st("sink", "in") == N'
expect_grep "$ERR" '\[metrics:m\] latency histogram: counters lat_b000\.\.lat_b149' "bucket bounds logged at start"
expect_grep "$ERR" '\[metrics:m\] +b140:<[0-9]+ .* b149:inf' "the last bucket is open"
expect_grep "$ERR" "\\[metrics:m\\] $N messages \\([0-9.]+ [kMG]?msg/s\\), [0-9.]+ MB/s, latency p50 [0-9.]+µs p99 [0-9.]+µs p99\\.9 [0-9.]+µs max [0-9.]+µs \\($N samples\\), sequence gaps [1-9][0-9]* \\(events [1-9][0-9]*\\), duplicates [1-9][0-9]*, symbols 64\$" \
	"summary line at stop"

N=50000
step "(b) same lcore, out unlinked, sample 7, non-ticks, malformed ticks, no rx TSC, padding 300"
mkconf metrics.json "$T/b.json" LSRC=1 LM=1 LINKS="$LINK_UNLINKED" SINK= \
	SRC_OPTS='{"count": '$N', "symbols": 11, "conns": 3, "non_tick_every": 10, "bad_every": 13, "no_tsc_every": 50, "pad": 300, "burst": 17}' \
	M_OPTS='{"sample": 7, "log_buckets": false}'
lcrun b "$T/b.json" --duration 20 --no-live
expect_rc 0 "(b)"
mapfile -t cc < <(conn_checks 16)
rcheck "(b) sample, non-ticks, unlinked out" $(defs $N 7 50) "${common[@]}" "${cc[@]}" \
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
step "(c) naive mode, cross-lcore, compact ticks with gaps and duplicates: the same results"
mkconf metrics.json "$T/c.json" LSRC=1 LM=2 LINKS="$LINK_RING" SINK="$(sink_on 2)" \
	SRC_OPTS='{"count": '$N', "symbols": 64, "conns": 6, "gap_every": 97, "gap_size": 3, "dup_every": 101, "no_tsc_every": 1000}' \
	M_OPTS='{"max_conns": 4, "naive": true, "log_buckets": false}'
lcrun c "$T/c.json" --duration 20 --no-live
expect_rc 0 "(c)"
mapfile -t cc < <(conn_checks 4)
rcheck "(c) naive" $(defs $N 1 1000) "${common[@]}" "${cc[@]}" \
	'ctr("m", "seq_gaps") > 0' \
	'ctr("m", "symbols") == 64' \
	'all(ctr("m", "naive_field_" + f) == N for f in "snpqt")'

N=20000
step "(d) symbol table of 8 for 16 symbols"
mkconf metrics.json "$T/d.json" LSRC=1 LM=1 LINKS="$LINK_DIRECT" SINK="$(sink_on 1)" \
	SRC_OPTS='{"count": '$N', "symbols": 16, "dup_every": 33}' \
	M_OPTS='{"symbols": 8, "log_buckets": false}'
lcrun d "$T/d.json" --duration 20 --no-live
expect_rc 0 "(d)"
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
mkconf metrics.json "$T/e.json" LSRC=1 LM=2 LINKS="$LINK_RING" SINK="$(sink_on 2)" \
	SRC_OPTS='{"count": '$N', "symbols": 5, "symbol_field": "sym", "seq_field": "seq", "layout": "mixed", "gap_every": 11, "dup_every": 17, "non_tick_every": 23}' \
	M_OPTS='{"symbol_field": "sym", "seq_field": "seq", "log_buckets": false}'
lcrun e "$T/e.json" --duration 20 --no-live
expect_rc 0 "(e)"
rcheck "(e) sym/seq" $(defs $N 1 0) "${common[@]}" 'ctr("m", "seq_gaps") > 0' 'ctr("m", "symbols") == 5'
mkconf metrics.json "$T/e2.json" LSRC=1 LM=1 LINKS="$LINK_DIRECT" SINK="$(sink_on 1)" \
	SRC_OPTS='{"count": 1000, "symbols": 5, "symbol_field": "sym", "seq_field": "seq"}' \
	M_OPTS='{"log_buckets": false}'
lcrun e2 "$T/e2.json" --duration 20 --no-live
expect_rc 0 "(e2)"
rcheck "(e2) default names see no tick" 'ctr("m", "non_tick") == ctr("m", "msgs") == 1000' \
	'ctr("m", "ticks") == ctr("m", "symbols") == 0' 'in_use == 0'

step "(f) lcpipe check refuses bad field names"
mkconf metrics.json "$T/f1.json" LSRC=1 LM=1 LINKS="$LINK_DIRECT" SINK="$(sink_on 1)" SRC_OPTS='{}' \
	M_OPTS='{"symbol_field": "k", "seq_field": "k"}'
"$LCPIPE" check "$T/f1.json" >"$T/f1.out" 2>&1
RC=$?
OUT=$T/f1.out ERR=$T/f1.out expect_rc 78 "(f1) same field twice"
expect_grep "$T/f1.out" 'stages\[1\]\.options: seq_field and symbol_field are both "k"' "(f1) says why"
mkconf metrics.json "$T/f2.json" LSRC=1 LM=1 LINKS="$LINK_DIRECT" SINK="$(sink_on 1)" SRC_OPTS='{}' \
	M_OPTS='{"seq_field": "a\"b"}'
"$LCPIPE" check "$T/f2.json" >"$T/f2.out" 2>&1
RC=$?
OUT=$T/f2.out ERR=$T/f2.out expect_rc 78 "(f2) a quote in a field name"
expect_grep "$T/f2.out" 'seq_field "a"b": a key with a quote' "(f2) says why"
finish
