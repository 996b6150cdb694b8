# tests/kernel/tls_lib.sh — sourced by tests/kernel/wss_*.sh and tls_peers.sh
# after ws_lib.sh (L2: the ws stage's wss:// against real TLS servers).
#
# On sourcing, in the test's temp dir ($W/tls, made with the openssl CLI):
#   ca.pem / ca.key            the test CA ("lcpipe test CA"); capath/ holds
#                              it under its hash name (openssl rehash), for ca_path
#   server.pem / server.key    feed.example.test and IP 10.77.0.1 (SANs), by the CA
#   wrong.pem / wrong.key      other.example.test and IP 10.77.0.99 only, by the CA
#   expired.pem / expired.key  the right names, valid Jan 2020 only, by the CA
#   unknown.pem / unknown.key  the right names, by another CA (rogue.pem) that
#                              nothing trusts
# (EC P-256 keys, SHA-256 signatures; the server certificates are leaves
# signed directly by their CA.) And /etc/netns/$NS/hosts, which `ip netns exec`
# bind-mounts over /etc/hosts: localhost, and feed.example.test at the kernel
# side's address ($K_IP), so lcpipe's getaddrinfo in the namespace resolves it
# without a DNS server. The cleanup (tcp_lib.sh's, extended here) stops every
# server this file started, deletes the namespace and then that directory.
#
# Provides:
#   TLS_DIR, TLS_CA, TLS_CAPATH, TLS_HOST (feed.example.test), and per
#     certificate TLS_<NAME>_CERT / TLS_<NAME>_KEY for SERVER, WRONG, EXPIRED,
#     UNKNOWN
#   wait_listen PORT PID: up to 10 s for a TCP listener on PORT in the namespace
#   nginx_start TAG PORT UPSTREAM_PORT [CERT KEY]: Debian's nginx on a prefix
#     of its own ($W/TAG.nginx: config, pid, logs and temp paths; `daemon
#     off`, one process, nothing of /etc/nginx) terminating TLS on PORT in front of a plain
#     WebSocket server on 127.0.0.1:UPSTREAM_PORT (proxy_pass, HTTP/1.1,
#     Upgrade / Connection passed on); its access log ($NGINX_ACCESS) has one
#     JSON line per request: status, request, ssl_protocol, ssl_cipher,
#     ssl_session_reused, ssl_server_name, ssl_alpn_protocol, upstream_addr, the extensions
#     offered. Sets NGINX_PID, NGINX_ACCESS, NGINX_ERR.
#   sserver_start TAG PORT ARGS...: `openssl s_server -accept PORT` with the
#     good certificate and ARGS (e.g. -tls1_3, -www; -quiet added without
#     -www, as stdin is /dev/null), stdout / stderr in
#     $W/TAG.sserver.out / .err. Sets SS_PID, SS_OUT, SS_ERR. sserver_stall
#     then stops it (SIGSTOP): the kernel still accepts connections into its
#     backlog and takes the ClientHello, nobody answers it (the cleanup
#     continues the process before stopping it).
#   tls_stop PID: stop a server this file started (SIGCONT, then stop_pid)
#   json_lines FILE: the JSON lines of FILE as a JSON array (for pycheck)
#   for lcpipe against these peers (see each function): wss_run (the last
#     ws_conf'ed run, exit 0), srv_term (a ws_peer.py ended with SIGTERM,
#     result written), wss_tls_check (a run that opened: TLS counters, the
#     version, resumption, SNI, ALPN, deflate, from lcpipe's and the server's
#     side), wss_refused_check
#     (a run in which every attempt failed under one counter, with its reason)
# Skips (77) without the openssl CLI.

# does it parse (tests/kernel/tcp_lib.sh says why)
bash -n "${BASH_SOURCE[0]}" || { echo "FAIL: ${BASH_SOURCE[0]} does not parse"; exit 99; }
command -v openssl >/dev/null || skip "no openssl CLI"

TLS_HOST=feed.example.test
TLS_DIR=$W/tls
TLS_CA=$TLS_DIR/ca.pem
TLS_CAPATH=$TLS_DIR/capath
NETNS_ETC=/etc/netns/$NS

# the cleanup: servers first (continued if stopped), then tcp_lib.sh's
# (processes, the namespace, $W), then the namespace's /etc/netns directory
eval "$(declare -f cleanup | sed '1s/^cleanup/_tls_cleanup_tcp/')"
cleanup() {
	local p
	for p in $PIDS; do
		kill -CONT "$p" 2>/dev/null
	done
	_tls_cleanup_tcp
	rm -rf "$NETNS_ETC"
}

# tls_stop PID: stop a server of this file (it may be stopped by sserver_stall)
tls_stop() {
	kill -CONT "$1" 2>/dev/null
	stop_pid "$1"
}

# _tls_run WHAT CMD...: run an openssl command quietly; on failure show its
# output and exit 99 (the test cannot run without its certificates)
_tls_run() {
	local what=$1
	shift
	if ! "$@" >"$TLS_DIR/openssl.log" 2>&1; then
		say "ERROR: $what failed: $*"
		cat "$TLS_DIR/openssl.log"
		exit 99
	fi
}

# _tls_ca NAME SUBJECT: a self-signed CA certificate NAME.pem / NAME.key, and
# the files `openssl ca` keeps for it (NAME.db/)
_tls_ca() {
	_tls_run "CA $1" openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$TLS_DIR/$1.key" -out "$TLS_DIR/$1.pem" -subj "/CN=$2" -days 30 -sha256 \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
	mkdir -p "$TLS_DIR/$1.db/new"
	: >"$TLS_DIR/$1.db/index.txt"
	echo 01 >"$TLS_DIR/$1.db/serial"
}

# _tls_leaf NAME CA SAN DATES...: NAME.pem / NAME.key, a server certificate
# (CN = the first SAN's name) signed by CA with `openssl ca`; DATES: -days N,
# or -startdate / -enddate (how the 3.0 CLI makes a certificate that has
# expired: `openssl x509 -req` takes no past dates)
_tls_leaf() {
	local name=$1 ca=$2 san=$3 cn
	shift 3
	cn=${san#DNS:}
	cn=${cn%%,*}
	_tls_run "key and CSR $name" openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$TLS_DIR/$name.key" -out "$TLS_DIR/$name.csr" -subj "/CN=$cn"
	cat >"$TLS_DIR/$name.cnf" <<CNF
[ ca ]
default_ca = lcp_ca
[ lcp_ca ]
dir = $TLS_DIR/$ca.db
database = \$dir/index.txt
new_certs_dir = \$dir/new
serial = \$dir/serial
default_md = sha256
policy = lcp_policy
unique_subject = no
[ lcp_policy ]
commonName = supplied
[ srv_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = $san
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
CNF
	_tls_run "certificate $name" openssl ca -batch -notext -config "$TLS_DIR/$name.cnf" \
		-cert "$TLS_DIR/$ca.pem" -keyfile "$TLS_DIR/$ca.key" -extensions srv_ext \
		-in "$TLS_DIR/$name.csr" -out "$TLS_DIR/$name.pem" "$@"
}

mkdir -p "$TLS_DIR" "$TLS_CAPATH" || exit 99
_tls_ca ca "lcpipe test CA"
_tls_ca rogue "lcpipe rogue CA"
_tls_leaf server ca "DNS:$TLS_HOST,IP:$K_IP" -days 30
_tls_leaf wrong ca "DNS:other.example.test,IP:10.77.0.99" -days 30
_tls_leaf expired ca "DNS:$TLS_HOST,IP:$K_IP" -startdate 20200101000000Z -enddate 20200201000000Z
_tls_leaf unknown rogue "DNS:$TLS_HOST,IP:$K_IP" -days 30
cp "$TLS_CA" "$TLS_CAPATH/ca.pem"
_tls_run "rehash $TLS_CAPATH" openssl rehash "$TLS_CAPATH"
for _n in SERVER WRONG EXPIRED UNKNOWN; do
	_l=$(printf '%s' "$_n" | tr 'A-Z' 'a-z')
	eval "TLS_${_n}_CERT=\$TLS_DIR/$_l.pem TLS_${_n}_KEY=\$TLS_DIR/$_l.key"
done
unset _n _l

mkdir -p "$NETNS_ETC" || skip "cannot make $NETNS_ETC"
printf '127.0.0.1\tlocalhost\n%s\t%s\n' "$K_IP" "$TLS_HOST" >"$NETNS_ETC/hosts"

# wait_listen PORT PID: up to 10 s for a listener on TCP PORT in the namespace
# while PID lives; 1 if none
_listening() { [ -n "$(nsx ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
wait_listen() {
	poll_while 10 "$2" _listening "$1"
}

# nginx_start TAG PORT UPSTREAM_PORT [CERT KEY] (see the top of this file)
nginx_start() {
	local tag=$1 port=$2 up=$3 cert=${4:-$TLS_SERVER_CERT} key=${5:-$TLS_SERVER_KEY} d
	command -v nginx >/dev/null || skip "no nginx (Debian: nginx)"
	d=$W/$tag.nginx
	mkdir -p "$d/tmp" "$d/logs"
	NGINX_ACCESS=$d/logs/access.jsonl
	NGINX_ERR=$d/logs/error.log
	cat >"$d/nginx.conf" <<NGINX
daemon off;
master_process off;
worker_processes 1;
pid $d/nginx.pid;
error_log $NGINX_ERR info;
events { worker_connections 64; }
http {
	client_body_temp_path $d/tmp/body;
	proxy_temp_path $d/tmp/proxy;
	fastcgi_temp_path $d/tmp/fastcgi;
	uwsgi_temp_path $d/tmp/uwsgi;
	scgi_temp_path $d/tmp/scgi;
	log_format lcp escape=json '{"status": "\$status", "request": "\$request", '
		'"ssl_protocol": "\$ssl_protocol", "ssl_cipher": "\$ssl_cipher", '
		'"ssl_session_reused": "\$ssl_session_reused", "ssl_server_name": "\$ssl_server_name", '
		'"ssl_alpn_protocol": "\$ssl_alpn_protocol", '
		'"upstream_addr": "\$upstream_addr", "extensions": "\$http_sec_websocket_extensions"}';
	access_log $NGINX_ACCESS lcp;
	map \$http_upgrade \$connection_upgrade {
		default upgrade;
		'' close;
	}
	server {
		listen $port ssl;
		server_name $TLS_HOST;
		ssl_certificate $cert;
		ssl_certificate_key $key;
		ssl_protocols TLSv1.2 TLSv1.3;
		ssl_session_tickets on;
		ssl_session_cache shared:lcp_tls:1m;
		location / {
			proxy_pass http://127.0.0.1:$up;
			proxy_http_version 1.1;
			proxy_set_header Upgrade \$http_upgrade;
			proxy_set_header Connection \$connection_upgrade;
			proxy_set_header Host \$host;
			proxy_buffering off;
			proxy_read_timeout 300s;
			proxy_send_timeout 300s;
		}
	}
}
NGINX
	say "+ nginx -p $d -c nginx.conf (TLS on :$port -> 127.0.0.1:$up)"
	ip netns exec "$NS" nginx -p "$d" -c "$d/nginx.conf" -e "$NGINX_ERR" >"$d/logs/stdout" 2>&1 </dev/null &
	NGINX_PID=$!
	PIDS="$PIDS $NGINX_PID"
	wait_listen "$port" "$NGINX_PID" || { fail "nginx did not listen on $port within 10 s"; show "$NGINX_ERR" "$d/logs/stdout"; return 1; }
	return 0
}

# sserver_start TAG PORT ARGS... (see the top of this file)
sserver_start() {
	local tag=$1 port=$2 quiet
	shift 2
	SS_OUT=$W/$tag.sserver.out
	SS_ERR=$W/$tag.sserver.err
	say "+ openssl s_server -accept $port $*"
	# stdin is /dev/null: s_server ends at its EOF unless -quiet (which also
	# silences its errors) or -www (which does not read stdin)
	case " $* " in
	*" -www "*) quiet="" ;;
	*) quiet=-quiet ;;
	esac
	ip netns exec "$NS" openssl s_server -accept "$port" $quiet -cert "$TLS_SERVER_CERT" -key "$TLS_SERVER_KEY" "$@" \
		>"$SS_OUT" 2>"$SS_ERR" </dev/null &
	SS_PID=$!
	PIDS="$PIDS $SS_PID"
	wait_listen "$port" "$SS_PID" || { fail "openssl s_server did not listen on $port within 10 s"; show "$SS_OUT" "$SS_ERR"; return 1; }
	return 0
}

# sserver_stall: the last s_server stops answering (SIGSTOP; see the top)
sserver_stall() {
	kill -STOP "$SS_PID"
}

# json_lines FILE: FILE's JSON lines as one JSON array on stdout
json_lines() {
	"$PY" -c 'import json, sys
print(json.dumps([json.loads(l) for l in open(sys.argv[1]) if l.strip()]))' "$1"
}

# --- lcpipe's ws stage against these peers (the wss_*.sh tests) -------------

# wss_run: run the last ws_conf'ed lcpipe in the namespace, bring the tap up,
# wait for lcpipe; it must exit 0
wss_run() {
	lcpipe_start || finish
	lcpipe_wait
	expect_lc_rc 0
}

# The wss transfers (wss_python.sh, wss_node.sh, wss_nginx.sh): a ws_peer
# server serves two connections of $COUNT messages each once it got the
# subscription SUB (ws_lib.sh); the ws stage pings every 200 ms and reconnects
# 2 s after the server's close, so that the run (ended by msg_hash 300 ms
# after the last message) never starts a third connection
WS_XFER='"ping_interval_ms": 200, "pong_timeout_ms": 20000, "reconnect_min_ms": 2000, "reconnect_max_ms": 2000'

# wss_peer_start TAG PORT SEED CMD...: the ws_peer server CMD (with arguments of
# its own) on PORT for a transfer, its result in $W/TAG.server.json
wss_peer_start() {
	local tag=$1 port=$2 seed=$3
	shift 3
	server_start "$tag" "$@" --port "$port" --count "$COUNT" --seed "$seed" --expect-sub "$SUB" --serve 2 \
		--result "$W/$tag.server.json" --timeout $((DURATION + 10)) || finish
}

# wss_transfer TAG WS_OPTIONS: one lcpipe run (wss_run), the ws stage with
# WS_OPTIONS reading the transfer of the last wss_peer_start; the server exits 0
wss_transfer() {
	ws_conf "$1" "$WS_SUB, $WS_XFER, $2" '"expect": '$((2 * COUNT))', "linger_ms": 300'
	wss_run
	server_wait 15
	[ "$SRV_RC" -eq 0 ] || { fail "the ws_peer server exited $SRV_RC"; show "$SRV_OUT" "$SRV_ERR"; }
}

# wss_transfer_check TAG NAME=VALUE...: the checks of wss_transfer TAG:
# ws_check_transfer (both connections), wss_tls_check with srv, two handshakes,
# the second resumed, and NAME=VALUEs; ws_report_common
wss_transfer_check() {
	local tag=$1
	shift
	ws_check_transfer "$W/$tag.server.json" $((2 * COUNT)) "$SUB" 2
	wss_tls_check "$tag" srv="$W/$tag.server.json" handshakes=2 resumed=1 "$@"
	ws_report_common
}

# srv_term [PID]: end a ws_peer.py (default: the last server) with SIGTERM,
# which it answers by writing its result and exiting (2: no WebSocket
# connection); sets SRV_RC
srv_term() {
	local p=${1:-$SRV_PID}
	kill -TERM "$p" 2>/dev/null
	wait_or_stop "$p" 10 "ws_peer.py"
	SRV_RC=$WAIT_RC
}

# wss_tls_check WHAT NAME=VALUE...: the TLS side of a run that opened
# (after ws_check_transfer or ws_hash_check); NAMEs:
#   version  TLSv1.2 / TLSv1.3: every handshake's (lcpipe's log, the server's view)
#   handshakes  tls_handshakes == opens == this; resumed  tls_resumed == this
#   srv      the ws_peer result: per connection the same version, SNI sni
#            (- for none), ALPN http/1.1, Host host, resumed for all but the
#            first when resumed > 0; no alert from lcpipe but close_notify
#   nginx    nginx's access log as a JSON array (the 101s: version, SNI, ALPN,
#            the sessions reused, the extensions offered), instead of srv's
#            TLS view (the server behind nginx has none)
#   deflate  on: permessage-deflate offered and agreed on every connection
#            (deflate_opens, messages inflated; the server's view); off: not
#            offered ("deflate": false); declined (default): offered, the
#            server said no. Unless on: tls_bytes_rx > msg_bytes (every
#            payload byte came through TLS, plus framing and records)
#   named    1: the URL's host is a name, resolved before every connect
#            (resolves == connects, no fail_resolve); 0: an IPv4 literal,
#            never resolved
wss_tls_check() {
	local what=$1
	shift
	pycheck "$what: TLS" --with tls_view rep="$REPORT" log="$LOG" "$@" <<'PY' || show "$LOG"
hs, rs, ver = int(A["handshakes"]), int(A.get("resumed", "0")), A["version"]
check(w.get("tls_handshakes") == hs and w.get("opens") == hs,
      "tls_handshakes == opens == %d" % hs, (w.get("tls_handshakes"), w.get("opens")))
check(w.get("tls_resumed") == rs, "tls_resumed == %d" % rs, w.get("tls_resumed"))
if A.get("named") == "1":
    check(w.get("resolves", 0) >= 1 and w.get("resolves") == w.get("connects") and w.get("fail_resolve", 0) == 0,
          "the name resolved before each of the %s connects (/etc/netns hosts)" % w.get("connects"),
          (w.get("resolves"), w.get("connects"), w.get("fail_resolve")))
elif A.get("named") == "0":
    check(w.get("resolves", 0) == 0 and w.get("fail_resolve", 0) == 0, "an IPv4 literal: nothing resolved",
          (w.get("resolves"), w.get("fail_resolve")))
check(all(v == 0 for v in tls_fails.values()) and len(tls_fails) >= 5, "every tls_fail_* counter is 0", tls_fails)
check(w.get("tls_records_rx", 0) > 0 and w.get("tls_records_tx", 0) > 0 and w.get("tls_bytes_tx", 0) > 0,
      "TLS records both ways", {k: w.get(k) for k in ("tls_records_rx", "tls_records_tx", "tls_bytes_tx")})
dfl = A.get("deflate", "declined")
if dfl == "on":
    check(w.get("deflate_opens") == hs and w.get("msgs_inflated", 0) > 0 and w.get("deflate_bytes_rx", 0) > 0
          and w.get("inflated_bytes", 0) > 0, "permessage-deflate on each open (deflate_opens == %d), messages inflated" % hs,
          {k: w.get(k) for k in ("deflate_opens", "msgs_inflated", "deflate_bytes_rx", "inflated_bytes")})
else:
    check(w.get("deflate_opens", 0) == 0 and w.get("msgs_inflated", 0) == 0, "no permessage-deflate (%s)" % dfl,
          (w.get("deflate_opens"), w.get("msgs_inflated")))
    check(w.get("tls_bytes_rx", 0) > w.get("msg_bytes", 1 << 62), "tls_bytes_rx %s > msg_bytes %s"
          % (w.get("tls_bytes_rx"), w.get("msg_bytes")))
opened = re.findall(r"\[ws:ws\] conn 0: (TLSv1\.[23]) (\S+?)(, resumed)?(, ALPN http/1\.1)?$", log, re.M)
check(len(opened) == hs and all(o[0] == ver for o in opened), "lcpipe logged %d %s handshake(s)" % (hs, ver), opened)
check(sum(1 for o in opened if o[2]) == rs and all(o[3] for o in opened),
      "lcpipe logged %d resumed, ALPN http/1.1 on each" % rs, opened)
if "srv" in A:
    s = J("srv")
    conns = s.get("conns", [])
    sni = None if A.get("sni", "-") == "-" else A["sni"]
    check(len(conns) == hs, "the server saw %d WebSocket connection(s)" % hs, len(conns))
    for i, c in enumerate(conns):
        if "nginx" not in A:
            t = c.get("tls") or {}
            check(t.get("version") == ver and t.get("sni") == sni and t.get("alpn") == "http/1.1",
                  "server, connection %d: %s, SNI %s, ALPN http/1.1" % (i, ver, sni), t)
            check(t.get("resumed") is (rs > 0 and i > 0), "server, connection %d: %s" % (i, "resumed" if rs > 0 and i > 0
                  else "a full handshake"), t.get("resumed"))
        if "host" in A:
            check(c.get("host") == A["host"], "server, connection %d: Host %s" % (i, A["host"]), c.get("host"))
        offered = any("permessage-deflate" in h for h in c.get("offered_extensions") or [])
        check(offered == (dfl != "off") and c.get("extensions") == (["permessage-deflate"] if dfl == "on" else []),
              "server, connection %d: permessage-deflate %s" % (i, {"on": "offered and agreed", "off": "not offered",
                                                                   "declined": "offered, not agreed"}[dfl]),
              (c.get("offered_extensions"), c.get("extensions")))
    if "alerts_rx" in s:
        check(all(a == "CLOSE_NOTIFY" for a in s["alerts_rx"]), "lcpipe sent no alert but close_notify",
              s["alerts_rx"])
if "nginx" in A:
    up = [l for l in J("nginx") if l.get("status") == "101"]
    check(len(up) == hs, "nginx logged %d upgrade(s) (101)" % hs, J("nginx"))
    check(all(l.get("ssl_protocol") == ver and l.get("ssl_server_name") == A.get("sni")
              and l.get("ssl_alpn_protocol") == "http/1.1" for l in up),
          "nginx: %s, SNI %s, ALPN http/1.1 on each" % (ver, A.get("sni")), up)
    check([l.get("ssl_session_reused") for l in up] == ["."] + ["r" if rs else "."] * (hs - 1),
          "nginx: sessions reused: %s" % [l.get("ssl_session_reused") for l in up])
    check(all(("permessage-deflate" in l.get("extensions", "")) == (dfl != "off") for l in up),
          "nginx: the offer passed on %s permessage-deflate" % ("without" if dfl == "off" else "with"),
          [l.get("extensions") for l in up])
PY
}

# wss_refused_check WHAT NAME=VALUE...: a run in which no connection opened,
# every attempt failed the same way; NAMEs:
#   counter  the ws counter each attempt bumped (tls_fail_verify, ..., or
#            fail_handshake: TLS opened, then the upgrade failed), >= 1; every
#            other fail_* and tls_fail_* counter 0; opens 0; nothing delivered
#   why      text in every failure reason lcpipe logged for conn 0 (as many
#            as the counter says)
#   handshakes  tls_handshakes == this (default 0), or "each": one per
#            failure counted (TLS opened every time, then the upgrade failed),
#            or one more (the attempt the run's end cut after its TLS handshake)
#   version, cipher  with handshakes: lcpipe logged that version (cipher) for each
#   srv      a ws_peer result: no WebSocket connection; with alert: every
#            alert it got (but close_notify) is that one, at least one
#   sserver  s_server's stderr, which must contain sserver_says (when not empty)
#   slow_ok  1: an attempt the peer did not answer within handshake_timeout_ms
#            may count tls_fail_timeout, or fail_handshake_timeout when its
#            TCP connect did not complete (logged "timed out") beside the
#            counter: a peer that answers and accepts from one slow thread
#            (ws_peer.py under a loaded CI: CI's sanitizer run, 2026-12-05,
#            one "connect timed out" in nine attempts) is not the failure
#            under test
wss_refused_check() {
	local what=$1
	shift
	pycheck "$what: refused" --with tls_view rep="$REPORT" log="$LOG" res="$RESULT" "$@" <<'PY' || show "$LOG"
ctr = A["counter"]
# "each": the attempt in flight when the run ends may have finished its TLS
# handshake but not yet failed its upgrade: one handshake more than failures
each = A.get("handshakes") == "each"
hs = w.get("tls_handshakes", 0) if each else int(A.get("handshakes", "0"))
h = J("res")
check(w.get(ctr, 0) >= 1, "%s == %s (>= 1)" % (ctr, w.get(ctr)), w.get(ctr))
slow_keys = ("tls_fail_timeout", "fail_handshake_timeout")
slow = sum(w.get(k, 0) for k in slow_keys if k != ctr) if A.get("slow_ok") == "1" else 0
others = {k: v for k, v in w.items() if (k.startswith("fail_") or k.startswith("tls_fail_")) and k != ctr and v
          and not (slow and k in slow_keys)}
check(not others, "no other failure counted%s" % (" (%d timed out, allowed: slow_ok)" % slow if slow else ""), others)
if slow:
    whys = [x for x in whys if "timed out" not in x.lower()]
check(w.get("opens") == 0 and w.get("msgs") == 0 and h.get("msgs") == 0, "no connection opened, nothing delivered",
      (w.get("opens"), w.get("msgs"), h.get("msgs")))
if each:
    check(w.get(ctr, 0) <= hs <= w.get(ctr, 0) + 1 and w.get("tls_resumed", 0) <= hs,
          "tls_handshakes == %s == %d (or one more: the attempt cut by the run's end)" % (ctr, w.get(ctr, 0)),
          (w.get("tls_handshakes"), w.get("tls_resumed")))
else:
    check(w.get("tls_handshakes") == hs and w.get("tls_resumed", 0) <= hs, "tls_handshakes == %d" % hs,
          (w.get("tls_handshakes"), w.get("tls_resumed")))
mine = [x for x in whys if A["why"].lower() in x.lower()]
check(len(whys) > 0 and len(mine) == len(whys) and len(whys) == w.get(ctr),
      "lcpipe logged %d failure(s), each: ...%s..." % (len(whys), A["why"]), whys[:4])
print("info: lcpipe's reason: " + (whys[0] if whys else "none"))
if hs and "version" in A:
    opened = re.findall(r"\[ws:ws\] conn 0: (TLSv1\.[23]) (\S+?)(,|$)", log, re.M)
    check(len(opened) == hs and all(o[0] == A["version"] for o in opened), "lcpipe logged %d %s handshake(s)"
          % (hs, A["version"]), opened)
    if "cipher" in A:
        check(all(o[1] == A["cipher"] for o in opened), "each with %s" % A["cipher"], opened)
if "srv" in A:
    s = J("srv")
    check(s.get("connections") == 0, "the server got no WebSocket connection", s.get("connections"))
    if "alert" in A:
        al = [a for a in s.get("alerts_rx", []) if a != "CLOSE_NOTIFY"]
        check(len(al) >= 1 and all(a == A["alert"] for a in al),
              "the server got lcpipe's alert %s (%d times)" % (A["alert"], len(al)), al[:6])
if A.get("sserver_says"):
    err = open(A["sserver"], errors="replace").read()
    check(A["sserver_says"] in err, "s_server: %s" % A["sserver_says"], err[-600:])
PY
}
