#!/bin/bash
# tests/fuzz/campaign.sh — a fuzz campaign counted in CPU seconds, not wall time.
#
#   cd BUILD/tests && ../../SRC/tests/fuzz/campaign.sh TARGET CPU_SECONDS [WORKDIR]
#
# Runs fuzz/fuzz_TARGET (a CC=clang --enable-fuzzing build) in chunks of at
# most FUZZ_CHUNK wall seconds (default 600) at nice 19, each chunk resuming
# from the work corpus of the one before (WORKDIR/TARGET/corpus, default
# WORKDIR = ../fuzz-work) plus the committed corpus, until the user + system
# seconds of the chunks add up to CPU_SECONDS. At nice 19 the fuzzer takes the
# CPU nobody else wants, so its wall time says nothing; /usr/bin/time's user +
# system of each chunk is what is summed. One line per chunk goes to
# WORKDIR/TARGET/cpu.log ("chunk N: U+S s cpu, W s wall, E executions, cov C
# ft F"); a crash stops the campaign (exit 1, the reproducer in
# WORKDIR/TARGET/crashes/). A campaign started again continues the count.
set -u
t=${1:?target} want=${2:?cpu seconds}
work=${3:-../fuzz-work}/$t
src=$(dirname "$0")/$t
chunk=${FUZZ_CHUNK:-600}
bin=./fuzz/fuzz_$t
[ -x "$bin" ] || { echo "campaign: $bin not built (configure CC=clang --enable-fuzzing)" >&2; exit 2; }
mkdir -p "$work/corpus" "$work/crashes" || exit 2
# CPU seconds counted so far (continuing an earlier campaign)
cpu_sum() { awk '/^chunk/ { split($3, a, "+"); s += a[1] + a[2] } END { printf "%.0f", s }' "$work/cpu.log" 2>/dev/null || echo 0; }
n=$(grep -c '^chunk' "$work/cpu.log" 2>/dev/null || true)
while [ "$(cpu_sum)" -lt "$want" ]; do
	n=$((n + 1))
	w0=$SECONDS
	/usr/bin/time -f '%U %S' -o "$work/time" nice -n 19 "$bin" -max_total_time="$chunk" \
		-print_final_stats=1 -artifact_prefix="$work/crashes/" "$work/corpus" "$src" >"$work/log" 2>&1
	rc=$?
	read -r u s <"$work/time"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
	last=$(grep -E '^#[0-9]+.*cov: ' "$work/log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	echo "chunk $n: $u+$s s cpu, $((SECONDS - w0)) s wall, ${execs:-?} executions, cov ${cov:-?} ft ${ft:-?} ($(date -u +%FT%TZ))" >>"$work/cpu.log"
	tail -n 1 "$work/cpu.log"
	if [ $rc -ne 0 ]; then
		echo "campaign $t: FINDING (exit $rc), see $work/log and $work/crashes/"
		exit 1
	fi
done
echo "campaign $t: $(cpu_sum) CPU seconds in $n chunks"
