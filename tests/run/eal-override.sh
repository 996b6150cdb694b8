#!/bin/bash
# EAL override: "lcpipe run CONF -- ARGS" replaces the config's "eal" array as a
# whole. The config's own array names a vdev driver that does not exist and gives
# lcores 0,1 while both stages are on lcore 2, so the config alone is refused
# (78); overridden with arguments that give lcore 2 it runs (and the bad vdev is
# gone: replaced, not appended). An override whose lcore set lacks lcore 2, or
# makes it the main lcore, is refused with the lcore error (78), before EAL.
. "$(dirname "$0")/lib.sh"

N=10000
mkconf eal-override.json "$T/ovr.json" N=$N

step "the config alone: lcore 2 is not in its \"-l 0,1\" (exit 78)"
lcrun alone "$T/ovr.json" --duration 1 --no-live
expect_rc 78 "config's own eal"
expect_grep "$ERR" 'stages\[0\]\.lcore: lcore 2 is not available to EAL; worker lcores: 1' "the lcore error"
[ -e "$REP" ] && fail "a report was written for a refused config"

step "override with --lcores=0@0,2@1: runs on lcore 2"
mapfile -t base < <(eal_base)
lcrun ok "$T/ovr.json" --duration 1 --no-live -- "${base[@]}" --lcores=0@0,2@1
expect_rc 0 "override giving lcore 2"
rcheck "override giving lcore 2" -D N=$N \
	'list(r["lcores"]) == ["2"]' \
	'st("gen", "lcore") == 2 == st("sink", "lcore")' \
	'st("sink", "in") == N' 'total_drops() == 0' 'in_use == 0' 'r["leaked_objects"] == 0'
expect_nogrep "$ERR" 'nosuchdriver' "the config's eal (its bogus --vdev) is not used"

step "the same override plus the config's bad --vdev: EAL fails (exit 1), so the run above did not use it"
new_prefix
mapfile -t base < <(eal_base)
lcrun badvdev "$T/ovr.json" --duration 1 --no-live -- "${base[@]}" --lcores=0@0,2@1 --vdev=net_nosuchdriver0
expect_rc 1 "override with the bad vdev"
expect_grep "$ERR" 'EAL init failed' "lcpipe says EAL failed"
expect_grep "$ERR" 'nosuchdriver' "EAL names the device"
expect_nogrep "$ERR" 'Segmentation|Aborted|core dumped' "no crash"

step "override with --lcores=0@0,1@1,3@1: lcore 2 missing (exit 78)"
new_prefix
mapfile -t base < <(eal_base)
lcrun miss "$T/ovr.json" --duration 1 --no-live -- "${base[@]}" --lcores=0@0,1@1,3@1
expect_rc 78 "override without lcore 2"
expect_grep "$ERR" 'stages\[0\]\.lcore: lcore 2 is not available to EAL; worker lcores: 1,3' "the lcore error lists the override's lcores"
expect_grep "$ERR" 'stages\[1\]\.lcore: lcore 2 is not available' "every stage on it is named"
[ -e "$REP" ] && fail "a report was written for a refused config"

step "override making lcore 2 the main lcore (exit 78)"
new_prefix
mapfile -t base < <(eal_base)
lcrun main "$T/ovr.json" --duration 1 --no-live -- "${base[@]}" --lcores=0@0,2@1 --main-lcore=2
expect_rc 78 "stage on the main lcore"
expect_grep "$ERR" 'stages\[0\]\.lcore: lcore 2 is the main lcore' "the main-lcore error"

step "lcpipe check takes the same override"
say "+ lcpipe check ovr.json -- ... --lcores=0@0,2@1"
"$LCPIPE" check "$T/ovr.json" -- "${base[@]}" --lcores=0@0,2@1 >"$T/check.out" 2>"$T/check.err"
RC=$? OUT=$T/check.out ERR=$T/check.err
expect_rc 0 "check with the override"
expect_grep "$OUT" 'ok \(2 stages, 1 link, 1 worker lcore\)' "check's summary"
finish
