# L2: plugins against the Linux kernel in a network namespace (root; skip 77 otherwise)
TESTS += kernel/port_kernel.sh
EXTRA_DIST += kernel/port_kernel.sh

# L2 TCP: the tcp stage (plugins/tcp) against the kernel's TCP over net_tap in a
# namespace (tests/kernel/tcp_lib.sh), with tcp_app as the application stage and
# tests/kernel/tcp_peer.py as the kernel-side peer; tcp_loss_afp.sh runs
# tcp_loss.sh over net_af_packet on a veth instead, tcp_jumbo.sh transfers at
# MTU 9000 over the same. Root only (skip 77 otherwise).
TCP_KERNEL_TESTS = \
	kernel/tcp_ping.sh \
	kernel/tcp_recv.sh \
	kernel/tcp_send.sh \
	kernel/tcp_listen.sh \
	kernel/tcp_many.sh \
	kernel/tcp_rst.sh \
	kernel/tcp_loss.sh \
	kernel/tcp_loss_afp.sh \
	kernel/tcp_jumbo.sh \
	kernel/tcp_hostile.sh \
	kernel/tcp_exhaust.sh
TESTS += $(TCP_KERNEL_TESTS)
# tcp_hostile.sh: tcp_hostile.py crafts frames on the tap (RST storm, zero
# window, out-of-order flood, malformed options, SYN flood) next to a GOOD
# kernel connection
EXTRA_DIST += $(TCP_KERNEL_TESTS) kernel/tcp_lib.sh kernel/pycheck.py kernel/tcp_peer.py kernel/tcp_hostile.py

# tcp_app, the application these tests drive, is a shipped plugin (plugins/tcp_app)

# test-only plugin for port_kernel.sh: frames as mbuf chains (tx_socket); built as
# the test plugins of run.mk are (a line in run/plugins/list)

# L2 WebSocket: the ws stage (plugins/ws) over the tcp stage against real
# WebSocket servers in the namespace (tests/kernel/ws_lib.sh, built on
# tcp_lib.sh): Debian's python3-websockets (ws_peer.py), Node's ws
# (ws_peer_node.js; skipped without node or the ws module), and a hand-written
# hostile server (ws_hostile.py: protocol violations, bad handshakes, with
# nftables: a connect outliving the handshake timeout; a refused connect), and
# a clean stop (ws_stop.sh: duration, SIGTERM, a peer that never answers).
# msg_hash is the msg sink that hashes and records what the ws stage delivers.
WS_KERNEL_TESTS = \
	kernel/ws_python.sh \
	kernel/ws_node.sh \
	kernel/ws_hostile.sh \
	kernel/ws_handshake.sh \
	kernel/ws_connect_timeout.sh \
	kernel/ws_refused.sh \
	kernel/ws_names.sh \
	kernel/ws_stop.sh \
	kernel/ws_slow.sh
TESTS += $(WS_KERNEL_TESTS)
EXTRA_DIST += $(WS_KERNEL_TESTS) kernel/ws_lib.sh kernel/ws_peer.py kernel/ws_peer_node.js \
	kernel/ws_hostile.py

# L2 TLS: the ws stage's wss:// client against real TLS servers
# (tests/kernel/tls_lib.sh: a test CA and server certificates made with the
# openssl CLI, feed.example.test in /etc/netns/NS/hosts): ws_peer.py and
# ws_peer_node.js with --tls-cert, nginx terminating TLS in front of
# ws_peer.py, openssl s_server for handshake edge cases. tls_peers.sh checks
# those peers first against kernel clients (wss_client.py: python3-websockets
# and Python's ssl; openssl verify / s_client), without lcpipe.
TLS_KERNEL_TESTS = \
	kernel/tls_peers.sh \
	kernel/wss_python.sh \
	kernel/wss_node.sh \
	kernel/wss_nginx.sh \
	kernel/wss_sserver.sh
TESTS += $(TLS_KERNEL_TESTS)
EXTRA_DIST += $(TLS_KERNEL_TESTS) kernel/tls_lib.sh kernel/tls_view.py kernel/wss_client.py

check_LTLIBRARIES += kernel/plugins/msg_hash.la
kernel_plugins_msg_hash_la_SOURCES = kernel/plugins/msg_hash.c
kernel_plugins_msg_hash_la_CPPFLAGS = $(RUN_PLUGIN_CPPFLAGS) -I$(top_srcdir)/plugins/common
kernel_plugins_msg_hash_la_CFLAGS = $(RUN_PLUGIN_CFLAGS) $(CRYPTO_CFLAGS)
kernel_plugins_msg_hash_la_LDFLAGS = $(RUN_PLUGIN_LDFLAGS)
kernel_plugins_msg_hash_la_LIBADD = $(RUN_PLUGIN_LIBADD) $(CRYPTO_LIBS)

# L2 loss through lcpipe's own seeded fault stage (plugins/fault) between the
# port and the tcp stage, both directions, against the kernel's TCP (tcp_lib.sh)
TESTS += kernel/tcp_fault.sh
EXTRA_DIST += kernel/tcp_fault.sh
