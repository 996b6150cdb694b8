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
#   nginx_start TAG PORT UPSTREAM_PORT [CERT KEY]: nginx (Debian's, no root
#     prefix of its own: config, pid, logs and temp paths under $W/TAG.nginx,
#     `daemon off`, one process) terminating TLS on PORT in front of a plain
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
# Skips (77) without the openssl CLI.

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
wait_listen() {
	local port=$1 pid=$2 n=200
	while [ $n -gt 0 ]; do
		[ -n "$(nsx ss -Hltn "sport = :$port" 2>/dev/null)" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
		n=$((n - 1))
	done
	return 1
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
