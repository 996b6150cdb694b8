#!/bin/bash
# The exchange profiles (conf/exchanges/*.json, conf/exchanges/README.md).
#   (a) every profile passes `lcpipe check` (wss:// URLs with DNS names) and the
#       schema; each names a venue that feedsim can simulate and each such venue
#       has a profile.
#   (b) per venue, the profile's own metrics options (read out of its file) and
#       subscription, on the one-process pipeline of conf/demo.json (the clean
#       run, ws://) and conf/demo-wss.json (the gap run, wss:// with conf/tls/,
#       and permessage-deflate: metrics reads the inflated messages):
#       feedsim with venue=X -> tcp -> ring pair -> tcp -> ws -> metrics. A clean feed: every
#       data message arrives and is a tick (ticks == feedsim's msgs), every
#       non-data message (subscription answers, status, heartbeats) is unselected
#       (== feedsim's venue_ctl_msgs, whose number is also computed here), no gap,
#       no duplicate, no malformed message. With gap_every: exactly the gaps
#       feedsim injected (seq_gaps == gap_events == gaps_injected, within the
#       bounds the message count allows), still no duplicate.
. "$(dirname "$0")/lib.sh"

need_plugins tcp ws feedsim metrics
EXCH=$top_srcdir/conf/exchanges
VENUES="binance coinbase kraken okx bybit deribit"
N=20000    # data messages per run
SYMS=50    # feedsim symbols
GAP=97     # gap_every of the gap runs
HB=100     # feedsim's heartbeat_every (its default)

step "(a) the profiles: one per venue, lcpipe check, schema"
have=$(cd "$EXCH" && ls -- *.json 2>/dev/null | sed 's/\.json$//' | sort | tr '\n' ' ')
want=$(printf '%s\n' $VENUES | sort | tr '\n' ' ')
if [ "$have" = "$want" ]; then
	ok "profiles: $have"
else
	fail "conf/exchanges has profiles [$have], feedsim simulates [$want]"
fi
for v in $VENUES; do
	f=$EXCH/$v.json
	[ -f "$f" ] || continue
	if "$LCPIPE" check "$f" >"$T/check-$v.out" 2>&1; then
		ok "lcpipe check conf/exchanges/$v.json"
	else
		fail "lcpipe check conf/exchanges/$v.json refuses the profile:"
		sed 's/^/    /' "$T/check-$v.out"
	fi
done
if "$PYTHON3" -c 'import jsonschema' 2>/dev/null; then
	if "$PYTHON3" - "$top_srcdir/conf/lcpipe.schema.json" "$EXCH"/*.json <<'PY'; then
import json, sys
from jsonschema.validators import validator_for
schema = json.load(open(sys.argv[1]))
v = validator_for(schema)(schema)
bad = 0
for p in sys.argv[2:]:
    errs = list(v.iter_errors(json.load(open(p))))
    for e in errs:
        print("  %s: %s: %s" % (p.rsplit("/", 1)[-1], "/".join(map(str, e.absolute_path)), e.message))
    bad += len(errs)
sys.exit(1 if bad else 0)
PY
		ok "conf/lcpipe.schema.json accepts every profile"
	else
		fail "conf/lcpipe.schema.json refuses a profile (above)"
	fi
else
	say "schema check not run: $PYTHON3 cannot import jsonschema (Debian: python3-jsonschema)"
fi

# mkvenue VENUE GAP_EVERY OUT: conf/demo.json (conf/demo-wss.json when GAP_EVERY
# is not 0) with feedsim in venue mode and the profile's subscription and metrics
# options; prints the number of subscribe lines
mkvenue() {
	local base=$top_srcdir/conf/demo.json
	[ "$2" = 0 ] || base=$top_srcdir/conf/demo-wss.json
	"$PYTHON3" - "$base" "$EXCH/$1.json" "$1" "$2" "$3" "$N" "$SYMS" <<'PY'
import json, os, sys
demo, prof, venue, gap, out, n, syms = sys.argv[1:8]
c = json.load(open(demo))
p = json.load(open(prof))
here = os.path.dirname(os.path.abspath(demo))
for s in c["stages"]:
    for k in ("tls_cert", "tls_key", "ca_file"):
        if k in s.get("options", {}):
            s["options"][k] = os.path.join(here, s["options"][k])
pm = [s for s in p["stages"] if s["plugin"] == "metrics"]
pw = [s for s in p["stages"] if s["plugin"] == "ws"]
if len(pm) != 1 or len(pw) != 1:
    sys.exit("%s: expected one metrics and one ws stage" % prof)
for s in c["stages"]:
    if s["plugin"] == "feedsim":
        s["options"].update({"venue": venue, "gap_every": int(gap), "count": int(n),
                             "deflate": gap != "0",
                             "sizes": "200:50,2000:40,6000:10",
                             "close_when_done": False, "symbols": int(syms)})
    elif s["plugin"] == "ws":
        s["options"]["subscribe"] = pw[0]["options"].get("subscribe", "")
    elif s["plugin"] == "metrics":
        s["options"] = dict(pm[0]["options"], log_buckets=False)
c["engine"]["drain_timeout"] = 10.0
json.dump(c, open(out, "w"), indent=1)
print(len([l for l in pw[0]["options"].get("subscribe", "").split("\n") if l]))
PY
}

# run_until TAG CONF WANT: lcpipe in the background until stage "stats" has seen
# WANT messages (asked over DPDK telemetry every 50 ms), then SIGTERM: the run
# ends when the feed is through, however slow the machine (sanitizers), and
# drains; sets RC. A run that never gets there is stopped after 60 s.
run_until() {
	local tag=$1 conf=$2 want=$3
	# shellcheck disable=SC2046
	LCP_TIMEOUT=70 lcstart "$tag" "$conf" --duration 600 --no-live -- $(eal_base) -l 0,1
	if ! "$PYTHON3" - "$RTD/dpdk/$PFX/dpdk_telemetry.v2" "$want" "$PID" 60 >"$T/$tag.poll" 2>&1 <<'PY'; then
import json, os, socket, sys, time
path, want, pid, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
seen, t0 = None, time.monotonic()
while time.monotonic() - t0 < limit:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("lcpipe ended before stats saw %d messages" % want)
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        info = json.loads(s.recv(65536).decode())
        s.send(b"/lcpipe/stage,stats")
        seen = json.loads(s.recv(info.get("max_output_len", 65536)).decode())["/lcpipe/stage"]["msgs"]
        s.close()
        if seen >= want:
            print("stats saw %d messages after %.2f s" % (seen, time.monotonic() - t0))
            sys.exit(0)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    time.sleep(0.05)
sys.exit("stats saw %s of %d messages in %.0f s" % (seen, want, limit))
PY
		fail "$tag: $(tail -n 1 "$T/$tag.poll")"
	else
		say "$(cat "$T/$tag.poll")"
	fi
	kill -TERM "$PID" 2>/dev/null
	lcwait
}

for v in $VENUES; do
	[ -f "$EXCH/$v.json" ] || continue
	case $v in kraken) hello=1 ;; *) hello=0 ;; esac
	case $v in coinbase | kraken | deribit) hbs=$((N / HB)) ;; *) hbs=0 ;; esac
	for g in 0 $GAP; do
		tag=$v-$g
		case $g in 0) scheme=ws ;; *) scheme=wss ;; esac
		step "(b) $v, gap_every $g, $scheme: the profile's metrics options on feedsim's $v feed"
		lines=$(mkvenue "$v" "$g" "$T/$tag.json") || { fail "$tag: cannot write the config"; continue; }
		new_prefix
		run_until "$tag" "$T/$tag.json" $((N + lines + hello + hbs))
		expect_rc 0 "$tag"
		checks=(
			'r["drained"] == True'
			'ctr("exchange", "msgs") == N'
			'ctr("exchange", "venue_ctl_msgs") == L + HELLO + HBS'
			'ctr("stats", "msgs") == ctr("exchange", "msgs") + ctr("exchange", "venue_ctl_msgs")'
			'ctr("stats", "ticks") == ctr("exchange", "msgs")'
			'ctr("stats", "unselected") == ctr("exchange", "venue_ctl_msgs")'
			'ctr("stats", "bad_tick") == ctr("stats", "non_tick") == 0'
			'ctr("stats", "symbols") == SYMS'
			'ctr("stats", "seq_dups") == ctr("stats", "seq_resets") == ctr("stats", "seq_resyncs") == 0'
			'ctr("stats", "symbols") + ctr("stats", "seq_in_order") + ctr("stats", "gap_events") == ctr("stats", "ticks")'
			'ctr("feed", "opens") == 1' 'ctr("feed", "reconnects") == 0'
			'ctr("feed", "subscribes_tx") == L' 'ctr("exchange", "client_msgs") == L'
			'ctr("feed", "fail_protocol_1002") + ctr("feed", "fail_bad_utf8_1007") + ctr("feed", "fail_too_big_1009") + ctr("feed", "drop_no_msg") == 0'
			'ctr("exchange", "fragmented_msgs") > 0'
			'r["leaked_objects"] == 0'
		)
		if [ "$g" = 0 ]; then
			checks+=('ctr("exchange", "gaps_injected") == ctr("stats", "seq_gaps") == ctr("stats", "gap_events") == 0')
		else
			checks+=('ctr("feed", "tls_handshakes") == ctr("exchange", "tls_handshakes") == 1'
				'ctr("feed", "deflate_opens") == 1' 'ctr("feed", "msgs_inflated") >= ctr("exchange", "msgs_deflated") > N / 2')
			checks+=('ctr("stats", "seq_gaps") == ctr("stats", "gap_events") == ctr("exchange", "gaps_injected") > 0'
				'(N - SYMS) / G - SYMS < ctr("stats", "seq_gaps") <= (N - SYMS) / G')
		fi
		rcheck "$tag" -D N=$N -D SYMS=$SYMS -D G="$g" -D L="$lines" -D HELLO=$hello -D HBS=$hbs "${checks[@]}"
		expect_grep "$ERR" '\[metrics:stats\] paths from the top level' "$tag: metrics in paths mode"
	done
done
finish
