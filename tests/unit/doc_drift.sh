#!/bin/sh
# doc_drift.sh — the generated files are what the option tables generate now, and
# the shipped configs are valid for both the schema and `lcpipe check`.
#
#   doc/plugins.md          == `lcpipe describe --markdown`
#   conf/lcpipe.schema.json == `lcpipe describe --schema`
#   doc/lcpipe.1            == `lcpipe describe --man1`, doc/lcpipe.json.5 == `--man5`,
#     and groff renders both without a warning (-ww)
#   conf/*.json, conf/ab/*.json, tests/conf-good/*.json: valid for conf/lcpipe.schema.json
#     (Debian's python3-jsonschema; only this part is skipped, exit 77, without it)
#     and for `lcpipe check` (exit 0)
#   and, so the schema check cannot pass vacuously, a few configs the schema must
#   refuse.
# Both generated files come from the build tree's plugins only (LCP_PLUGIN_PATH
# unset). Regenerate with:  make -C tests update-generated
set -u

: "${top_srcdir:?run from make check, or set top_srcdir and top_builddir}"
: "${top_builddir:?run from make check, or set top_srcdir and top_builddir}"
LCPIPE=${LCPIPE:-$top_builddir/framework/lcpipe}
work=$top_builddir/tests/unit/scratch-doc-drift
unset LCP_PLUGIN_PATH LCP_TEST_MARKER LCP_LOG_LEVEL
rm -rf "$work" && mkdir -p "$work" || exit 99

. "$(dirname "$0")/t_fails.sh"

regen_hint() {
	echo "  regenerate:  make -C tests update-generated"
	echo "           or: $LCPIPE describe $1 > $top_srcdir/$2"
	echo "  then review the diff: it is what a user of the docs/schema will see."
}

# ---- 1. drift ----
drift() { # drift FLAG FILE
	out=$work/$(basename "$2")
	if ! "$LCPIPE" describe "$1" >"$out" 2>"$out.err"; then
		fail "lcpipe describe $1 failed:"
		cat "$out.err"
		return
	fi
	if [ ! -s "$out" ]; then
		fail "lcpipe describe $1 printed nothing"
		return
	fi
	if [ ! -f "$top_srcdir/$2" ]; then
		fail "$2 is missing"
		regen_hint "$1" "$2"
		return
	fi
	if cmp -s "$top_srcdir/$2" "$out"; then
		echo "PASS: $2 is what \`lcpipe describe $1\` generates"
	else
		fail "$2 differs from \`lcpipe describe $1\` (- committed, + generated now):"
		diff -u "$top_srcdir/$2" "$out" | sed -e "1s|.*|--- $2 (committed)|" -e "2s|.*|+++ lcpipe describe $1|"
		regen_hint "$1" "$2"
	fi
}
drift --markdown doc/plugins.md
drift --schema conf/lcpipe.schema.json
drift --man1 doc/lcpipe.1
drift --man5 doc/lcpipe.json.5
if command -v groff >/dev/null 2>&1; then
	for m in doc/lcpipe.1 doc/lcpipe.json.5; do
		w=$(groff -man -Tutf8 -ww -z "$top_srcdir/$m" 2>&1)
		if [ -z "$w" ]; then
			echo "PASS: $m renders without a groff warning"
		else
			fail "$m: groff warns: $(echo "$w" | head -n 5)"
		fi
	done
else
	echo "(groff not found: the man pages' rendering is not checked)"
fi

# ---- 2. the shipped and the good configs pass `lcpipe check` ----
configs=""
for f in "$top_srcdir"/conf/*.json "$top_srcdir"/conf/ab/*.json; do
	case $f in */lcpipe.schema.json) continue ;; esac
	[ -e "$f" ] && configs="$configs $f"
done
goods=""
for f in "$top_srcdir"/tests/conf-good/*.json; do
	[ -e "$f" ] && goods="$goods $f"
done
[ -n "$configs" ] || fail "no example config in conf/"
for f in $configs; do
	if "$LCPIPE" check "$f" >"$work/check.out" 2>&1; then
		echo "PASS: lcpipe check ${f#"$top_srcdir"/}"
	else
		fail "lcpipe check ${f#"$top_srcdir"/}:"
		sed 's/^/    /' "$work/check.out"
	fi
done
tp=$top_builddir/tests/plugins
for f in $goods; do
	if LCP_PLUGIN_PATH=$tp/good/.libs "$LCPIPE" check "$f" >"$work/check.out" 2>&1; then
		echo "PASS: lcpipe check ${f#"$top_srcdir"/}"
	else
		fail "lcpipe check ${f#"$top_srcdir"/}:"
		sed 's/^/    /' "$work/check.out"
	fi
done

# ---- 3. schema validation ----
py=/usr/bin/python3
[ -x "$py" ] || py=${PYTHON3:-python3}
skip=0
if ! "$py" -c 'import jsonschema' 2>/dev/null; then
	echo "SKIP: schema validation: $py cannot import jsonschema (Debian: apt-get install python3-jsonschema)"
	skip=1
else
	# configs the schema must refuse (proves the validator is not vacuous)
	cat >"$work/neg-top.json" <<'EOF'
{"stages": [{"name": "a", "plugin": "sink_null"}], "stage": []}
EOF
	cat >"$work/neg-option.json" <<'EOF'
{"stages": [{"name": "a", "plugin": "sink_null", "options": {"count_bytes": 5}}]}
EOF
	cat >"$work/neg-engine.json" <<'EOF'
{"engine": {"burst": 0}, "stages": [{"name": "a", "plugin": "sink_null"}]}
EOF
	cat >"$work/neg-link.json" <<'EOF'
{"stages": [{"name": "a", "plugin": "sink_null"}], "links": ["a.in a.out"]}
EOF
	# a link object's options come from the same table as the checker's
	# (lcp_link_opts): a ring size that is no power of two, a burst of 0
	cat >"$work/neg-link-ring.json" <<'EOF'
{"stages": [{"name": "a", "plugin": "gen"}, {"name": "b", "plugin": "sink_null"}],
 "links": [{"from": "a.out", "to": "b.in", "ring_size": 3000}]}
EOF
	cat >"$work/neg-link-burst.json" <<'EOF'
{"stages": [{"name": "a", "plugin": "gen"}, {"name": "b", "plugin": "sink_null"}],
 "links": [{"from": "a.out", "to": "b.in", "burst": 0}]}
EOF
	# a stage's keys too (lcp_stage_opts): a plugin named by an empty string
	cat >"$work/neg-stage-plugin.json" <<'EOF'
{"stages": [{"name": "a", "plugin": ""}]}
EOF
	cat >"$work/neg-empty.json" <<'EOF'
{"stages": []}
EOF
	# shellcheck disable=SC2086
	"$py" - "$top_srcdir" $configs $goods -- \
		"$work"/neg-*.json <<'EOF'
import json, os, sys
import jsonschema
from jsonschema.validators import validator_for

top, rest = sys.argv[1], sys.argv[2:]
schema_path = os.path.join(top, "conf", "lcpipe.schema.json")
split = rest.index("--")
valid, invalid = rest[:split], rest[split + 1:]
with open(schema_path) as f:
    schema = json.load(f)
cls = validator_for(schema)
try:
    cls.check_schema(schema)
except jsonschema.SchemaError as e:
    print("FAIL: conf/lcpipe.schema.json is not a valid %s schema: %s" % (cls.__name__, e.message))
    sys.exit(1)
print("PASS: conf/lcpipe.schema.json is a valid %s schema" % cls.__name__)
v = cls(schema)
bad = 0
for path in valid:
    with open(path) as f:
        doc = json.load(f)
    errs = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    name = os.path.relpath(path, top)
    if errs:
        bad += 1
        print("FAIL: schema refuses %s:" % name)
        for e in errs:
            print("    %s: %s" % ("/".join(str(p) for p in e.absolute_path) or "(top)", e.message))
    else:
        print("PASS: schema accepts %s" % name)
for path in invalid:
    with open(path) as f:
        doc = json.load(f)
    name = path.rsplit("/", 1)[-1]
    if v.is_valid(doc):
        bad += 1
        print("FAIL: schema accepts %s, which it must refuse: %s" % (name, json.dumps(doc)))
    else:
        print("PASS: schema refuses %s" % name)
sys.exit(1 if bad else 0)
EOF
	[ $? -eq 0 ] || fails=$((fails + 1))
fi

t_fails_end doc_drift
[ "$skip" -eq 0 ] || exit 77
echo "doc_drift: all passed"
exit 0
