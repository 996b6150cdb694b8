#!/bin/bash
# Plugin ABI 2.0 changed what the inlined lcp_emit() of every plugin does (a
# same-lcore emit queues onto the destination's input vector; in 1.x it called
# the destination's process() from inside): a plugin built against a 1.x SDK
# cannot run in this engine. abi13_pass (run/plugins/abi13_pass.c) carries the
# descriptor of a 1.3 plugin. `lcpipe check` and `lcpipe run` must refuse it
# before running any of its code, naming the file, both ABI versions and the
# stage (stages[1].plugin), and a run must not start (exit 78, no report).
. "$(dirname "$0")/lib.sh"

major=$(sed -n 's/^#define LCP_ABI_MAJOR \([0-9]*\).*/\1/p' "$top_srcdir/framework/include/lcp/plugin.h")
[ -n "$major" ] || { fail "cannot read LCP_ABI_MAJOR from lcp/plugin.h"; finish; }
WANT="stages\[1\]\.plugin: \"abi13_pass\": .*abi13_pass\.so: refused: ABI major version: expected $major, found 1"

mkconf abi-compat.json "$T/old.json" COUNT=1000 LINK='"old.out -> sink.in"'

step "lcpipe check refuses a plugin built for ABI 1.3"
say "+ lcpipe check old.json"
"$LCPIPE" check "$T/old.json" >"$T/check.out" 2>"$T/check.err"
RC=$?
ERR=$T/check.err
expect_rc 78 "check"
expect_grep "$T/check.err" "$WANT" "the refusal names the stage, the file and both versions"

step "lcpipe run refuses it too, before the EAL starts"
lcrun run "$T/old.json" --duration 1 --no-live
expect_rc 78 "run"
expect_grep "$ERR" "$WANT" "the run's refusal"
[ -e "$REP" ] && fail "a report was written for a run that never started" || ok "no report"

finish
