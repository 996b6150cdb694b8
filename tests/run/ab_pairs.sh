#!/bin/bash
# Every pair shipped in conf/ab/PAIRS runs under `lcpipe ab` (one short run of each
# config, --runs 1 --duration 0.5, or LCP_TEST_AB_DURATION seconds): exit 0, a
# JSON result naming both configs with a throughput metric and its B/A ratio,
# and an SVG. What a user gets from `lcpipe ab conf/ab/A.json conf/ab/B.json` on
# a clean clone; the measured results (longer runs) are in doc/ab-testing.md.
# Each config's EAL arguments are kept, with this test's own --file-prefix.
. "$(dirname "$0")/lib.sh"

pairs=$top_srcdir/conf/ab/PAIRS
[ -f "$pairs" ] || { fail "no $pairs"; finish; }
n=0
while read -r a b rest; do
	case $a in '' | '#'*) continue ;; esac
	n=$((n + 1))
	step "pair $n: $a vs $b"
	new_prefix
	# shellcheck disable=SC2207
	eal=($("$PYTHON3" -c 'import json,sys; print(" ".join(x if not x.startswith("--file-prefix") else "--file-prefix=" + sys.argv[2] for x in json.load(open(sys.argv[1]))["eal"]))' \
		"$top_srcdir/conf/ab/$a" "$PFX"))
	out=$T/pair$n
	timeout -k 5 300 "$LCPIPE" ab "$top_srcdir/conf/ab/$a" "$top_srcdir/conf/ab/$b" --runs 1 --duration "${LCP_TEST_AB_DURATION:-0.5}" \
		--quiet --retries 0 --json "$out.json" --svg "$out.svg" -- "${eal[@]}" >"$out.out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "lcpipe ab $a $b: exit $rc"
		tail -20 "$out.out"
		continue
	fi
	if "$PYTHON3" - "$out.json" "$out.svg" "$a" "$b" <<'PY'; then
import json, sys
import xml.etree.ElementTree as ET
j = json.load(open(sys.argv[1]))
text = json.dumps(j)
for name in sys.argv[3:5]:
    assert name.replace(".json", "") in text, "config %s not named in the JSON" % name
ms = {m["id"]: m for m in j["metrics"]}
d = ms.get("delivered_per_s")
assert d is not None, "no delivered_per_s metric among %s" % sorted(ms)
assert d["a"]["median"] and d["a"]["median"] > 0 and d["b"]["median"] and d["b"]["median"] > 0, \
    "nothing delivered: %s" % d
assert d["ratio_b_over_a"]["median"] and d["ratio_b_over_a"]["median"] > 0, "no ratio: %s" % d
ET.parse(sys.argv[2])
PY
		ok "$a vs $b: JSON and SVG"
	else
		fail "$a vs $b: result files (above)"
	fi
done <"$pairs"
[ $n -ge 18 ] && ok "$n pairs run" || fail "only $n pairs in $pairs"
finish
