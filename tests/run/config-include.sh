#!/bin/bash
# Config includes and ${VAR} (framework/config.c, doc/plugins.md "Config file"):
# a config includes a base pipeline (gen -> sink_pcap) and overrides one of its
# stages' options by name; sink_pcap's path comes from the environment. The run
# must use the override (gen's count) and write where the variable says; the
# same config with the variable unset fails `lcpipe check` naming the JSON path,
# and with a default (${VAR:-...}) writes there.
. "$(dirname "$0")/lib.sh"

need_plugins gen sink_pcap
mkdir -p "$T/inc"
cat >"$T/inc/base.json" <<'JSON'
{
  "name": "base",
  "engine": {"duration": 5, "drain_timeout": 1.0},
  "stages": [
    {"name": "g", "plugin": "gen", "lcore": 1, "options": {"size": 64, "count": 100, "rate": 0}},
    {"name": "cap", "plugin": "sink_pcap", "lcore": 1, "options": {"path": "${LCP_TEST_CAPDIR}/base.pcapng"}}
  ],
  "links": ["g.out -> cap.in"]
}
JSON
cat >"$T/main.json" <<'JSON'
{
  "include": ["inc/base.json"],
  "name": "included and overridden",
  "stages": [{"name": "g", "options": {"count": 300}}],
  "links": ["g.out -> cap.in"]
}
JSON

step "the include's pipeline, one stage overridden, the capture path from the environment"
mkdir -p "$T/caps"
new_prefix
# shellcheck disable=SC2046
LCP_TEST_CAPDIR=$T/caps lcrun inc "$T/main.json" --no-live -- $(eal_base) -l 0,1
expect_rc 0 "run"
rcheck "report" \
	'r["name"] == "included and overridden"' \
	'st("g", "out") == 300' 'st("cap", "in") == 300' \
	'sorted(stages) == ["cap", "g"]' 'r["leaked_objects"] == 0'
[ -s "$T/caps/base.pcapng" ] && ok "the capture is where \${LCP_TEST_CAPDIR} says" ||
	fail "no capture at $T/caps/base.pcapng"

step "the variable unset: refused by check, naming the JSON path"
(unset LCP_TEST_CAPDIR; "$LCPIPE" check "$T/main.json" >"$T/unset.out" 2>&1)
rc=$?
[ $rc -eq 78 ] && ok "check exits 78" || fail "check exit $rc"
expect_grep "$T/unset.out" 'error: stages\[1\]\.options\.path: \$\{LCP_TEST_CAPDIR\} is not set in the environment' "the error names the path"

step "a default: \${VAR:-...}"
sed 's|\${LCP_TEST_CAPDIR}|${LCP_TEST_CAPDIR:-'"$T"'/dflt}|' "$T/inc/base.json" >"$T/inc/base2.json"
sed 's|inc/base.json|inc/base2.json|' "$T/main.json" >"$T/main2.json"
mkdir -p "$T/dflt"
new_prefix
# shellcheck disable=SC2046
(unset LCP_TEST_CAPDIR; lcrun dflt "$T/main2.json" --no-live -- $(eal_base) -l 0,1; exit "$RC")
RC=$?
expect_rc 0 "run with the default"
[ -s "$T/dflt/base.pcapng" ] && ok "the default path was used" || fail "no capture at $T/dflt/base.pcapng"
finish
