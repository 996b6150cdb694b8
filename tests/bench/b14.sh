#!/bin/bash
# B14 — wss receive (doc/benchmarks.md "B14"): B12's veth, feed server and
# receivers with TLS on the feed. Root only; SKIP (77) otherwise.
#
# The feed server (b12_feed_server --tls-cert/--tls-key) does the TLS
# handshake and SSL_write on its kernel socket; the receivers are
#   kernel     b12_kernel_client --tls-ca: SSL_read on a kernel TCP socket
#              (OpenSSL's socket BIO, read-ahead on), then B12's minimal frame
#              parser, metrics' tick scan and sequence check (the same code)
#   lcpipe1    lcpipe, one worker lcore: port_ethdev (net_af_packet) -> tcp ->
#              ws (wss:// URL, ca_file = the test CA; TLS inside the stage,
#              stack/tls.c) -> metrics -> sink_null
# with the same suite forced everywhere (B14_SUITE, default TLS 1.3
# TLS_AES_128_GCM_SHA256) and a CA plus a server certificate (P-256, IP SAN
# of the feed's address) made by the openssl CLI in the run's temp dir.
# Case suffixes: _z = TLS + permessage-deflate (the server compresses every
# message with libstk's deflater; the kernel client inflates with zlib, the
# ws stage with its inflater), _ws = plain ws (B12's stream: the same-run
# reference for what TLS costs each receiver).
#
# Everything else is b12.sh's (B12_ID=B14): the topology, interleaved rounds,
# the noise gate, cycles per message from the receiving process's CPU time
# (kernel client: getrusage user + sys; lcpipe: its worker thread's on-CPU
# time x the engine's busy share over the sampled window), ratios per round,
# the stage_timing runs, and the callgrind run (b12_report.py cg --bench B14
# splits the TLS receive path: AES-GCM, the rest of OpenSSL, our copies,
# the frame decoder, metrics).
#
# Knobs (B14_X, passed on as b12.sh's B12_X): B14_ROUNDS (5), B14_SIZES
# ("64 1024"), B14_CASES ("kernel lcpipe1 kernel_z lcpipe1_z kernel_ws
# lcpipe1_ws"), B14_MB (96), B14_SYMBOLS, B14_RERUNS, B14_TIMING (1), B14_CG
# (1), B14_CG_MB (8), B14_SUITE, B14_DEFLATE_LEVEL (1), B14_KEEP; and every
# other B12_* knob of b12.sh.
set -eu
: "${B14_SIZES:=64 1024}"
: "${B14_CASES:=kernel lcpipe1 kernel_z lcpipe1_z kernel_ws lcpipe1_ws}"
for k in ROUNDS SIZES CASES MB SYMBOLS RERUNS TIMING CG CG_MB CG_IDLE SUITE DEFLATE_LEVEL KEEP; do
	v=B14_$k
	[ -n "${!v+x}" ] && export "B12_$k=${!v}"
done
export B12_ID=B14
exec bash "$(dirname "$0")/b12.sh"
