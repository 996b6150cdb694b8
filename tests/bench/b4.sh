#!/bin/bash
# B4 — pool strategies (tests/bench/b4_pools.c; doc/benchmarks.md "B4"): the four
# pool modules against each other, and glibc with and without M_TRIM_THRESHOLD,
# cycles per object for keep1 (get 1, put 1), keepburst (get 32, put 32) and
# xlcore32 / xlcore1 (get on lcore 1, through an SP/SC rte_ring, put on lcore 2)
# at 512 / 1400 / 2048 B; then callgrind instruction counts of keep1 and
# keepburst per module.
#
# BENCHMARKS.md rule 8: a fresh process per allocator setting. Each round runs
# bench/b4_pools once per setting, the order rotated every round (A B C D E,
# B C D E A, ...), after one unrecorded warm-up process; each process warms
# every case up, then measures B4_REPS gated repetitions of it and reports
# their median, which is that round's value. bench/b4_summary.py reports per
# case min / median / IQR over the rounds and the median of the per-round
# ratios to pool_mempool (and rte_malloc / mempool for the 19x target).
#
# Placement: --lcores=0@0,1@1,2@0: main lcore 0 on CPU 0 (asleep), lcore 1 on
# CPU 1 (keep1, keepburst, the xlcore producer), lcore 2 on CPU 0 (the xlcore
# consumer). SCHED_FIFO for lcores 1 and 2 as root (BENCH_RT), nice BENCH_NICE.
#
# Settings (B4_SETTINGS, default "mempool ring malloc malloc_notrim rte_malloc"):
#   mempool          pool_mempool (cache 256 per lcore)
#   mempool_nocache  pool_mempool {"cache_size": 0}
#   ring             pool_ring
#   malloc           pool_malloc (glibc's thresholds untouched)
#   malloc_notrim    pool_malloc {"trim_threshold": 268435456}: mallopt(M_TRIM_THRESHOLD, 256 MiB)
#   malloc_trim0     pool_malloc {"trim_threshold": 0}: trim at every free that can
#   rte_malloc       pool_rte_malloc
# Knobs: B4_ROUNDS (9), B4_REPS (3), B4_SETTINGS, B4_CG_ITERS (BENCH_CG_ITERS,
# 20000 objects per callgrind case), BENCH_MS (10: ms per repetition),
# B4_VERBOSE=1 (every process's own table), BENCH_KEEP=1 (keep the raw results).
set -eu
. "$(dirname "$0")/common.sh"

prog=$BENCH_BUILDDIR/bench/b4_pools
summary=$(dirname "$0")/b4_summary.py
[ -x "$PY" ] || { echo "SKIP: no /usr/bin/python3 (b4_summary.py)"; exit 77; }
[ -x "$prog" ] || { echo "b4: $prog not built (make bench builds it)"; exit 1; }
bench_need_cpus 2

: "${B4_ROUNDS:=9}"
: "${B4_REPS:=3}"
: "${B4_SETTINGS:=mempool ring malloc malloc_notrim rte_malloc}"
: "${B4_CG_ITERS:=${BENCH_CG_ITERS:-20000}}"
: "${B4_VERBOSE:=0}"
: "${VALGRIND:=$(command -v valgrind || true)}"

# setting -> "module options"
setting() {
	case $1 in
	mempool) echo 'pool_mempool {}' ;;
	mempool_nocache) echo 'pool_mempool {"cache_size":0}' ;;
	ring) echo 'pool_ring {}' ;;
	malloc) echo 'pool_malloc {}' ;;
	malloc_notrim) echo 'pool_malloc {"trim_threshold":268435456}' ;;
	malloc_trim0) echo 'pool_malloc {"trim_threshold":0}' ;;
	rte_malloc) echo 'pool_rte_malloc {}' ;;
	*) echo "b4: unknown setting '$1'" >&2; return 1 ;;
	esac
}
read -r -a settings <<<"$B4_SETTINGS"
for s in "${settings[@]}"; do setting "$s" >/dev/null; done
case " $B4_SETTINGS " in *" mempool "*) ;; *) echo "b4: B4_SETTINGS needs mempool (the ratios' anchor)"; exit 2 ;; esac

bench_tmp

bench_header B4 "pool strategies: cycles/object, one process per module setting"
echo "glibc:   $(ldd --version | head -1)"
echo "rounds:  $B4_ROUNDS x settings ($B4_SETTINGS), $B4_REPS repetitions of ~$BENCH_MS ms per case in each process"
bench_wait_quiet

# one process: $1 setting, $2 round ("warm" = not recorded)
run_one() {
	local s=$1 round=$2 m o out
	read -r m o <<<"$(setting "$s")"
	out=$tmp/$s.$round.out
	# shellcheck disable=SC2046
	bench_run "$prog" $(bench_eal "b4$s") --lcores=0@0,1@1,2@0 -- --setting "$s" --module "$m" \
		--options "$o" --reps "$B4_REPS" --ms "$BENCH_MS" --quick $BENCH_RT_OPT >"$out" 2>&1 || {
		cat "$out"
		echo "b4: $s (round $round) failed"
		exit 1
	}
	if [ "$B4_VERBOSE" = 1 ] || [ "$round" = 1 ]; then grep -v '^{' "$out" | grep -v '^TELEMETRY'; fi
	[ "$round" = warm ] && return 0
	grep '^{"bench":"B4"' "$out" | sed "s/^{/{\"round\":$round,/" >>"$tmp/raw.jsonl"
}

echo
echo "-- warm-up process (not recorded)"
run_one "${settings[0]}" warm
n=${#settings[@]}
for r in $(seq 1 "$B4_ROUNDS"); do
	echo
	echo "-- round $r of $B4_ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))"
	for i in $(seq 0 $((n - 1))); do
		run_one "${settings[$(((i + r - 1) % n))]}" "$r"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# callgrind: keep1 and keepburst on one lcore, one process per setting
: >"$tmp/cg.txt"
if bench_has_valgrind; then
	echo
	echo "-- callgrind, $B4_CG_ITERS objects per case"
	for s in "${settings[@]}"; do
		read -r m o <<<"$(setting "$s")"
		# shellcheck disable=SC2046
		bench_callgrind "$tmp" "cg.$s" "$prog" $(bench_eal "cgb4$s") -l 0 -- --setting "$s" --module "$m" \
			--options "$o" --callgrind "$B4_CG_ITERS"
		grep '^callgrind-case' "$tmp/cg.$s.log" | while read -r _ c _ objs _ fails; do
			echo "$c $objs $fails $(bench_cg_ir "$tmp/cg.$s.ir" "$c")"
		done >>"$tmp/cg.txt"
	done
fi

echo
"$PY" "$summary" "$tmp/raw.jsonl" "$tmp/cg.txt" "$B4_ROUNDS"
