# tests/stack.mk — L0 suites for libstk (stack/), no DPDK, no EAL: fake buffers,
# fake clock, fake tx through the ops table (tests/stack/harness.[ch]).
# Included by tests/Makefile.am.
#
#   stack/test_arp        Check: ARP replies, resolution + pending queue, retries,
#                         refresh/expiry, gratuitous, static neighbours, bad ARP
#   stack/test_ip4        Check: Ethernet/IPv4 drops (one counter each), padding,
#                         options, ICMP echo, checksum offload flags, config checks
#   stack/test_tcp_in     Check: handshakes and options, sequence wrap, OOO in any
#                         order, duplicates, SACK blocks, ACK policy, RFC 5961
#                         RST/SYN/ACK checks, malformed and truncated segments,
#                         OOO limits under a flood, closed ports, SYN floods
#                         (cookies, evict, drop)
#   stack/test_tcp_out    Check: MSS-sized segments, peer window, cwnd, fast
#                         retransmit + NewReno, sndbuf, FIN/TIME_WAIT, persist
#                         (and giving up: persist_timeout_ms, unanswered probes)
#   stack/test_tcp_sack   Check: SACK loss recovery: several holes per round trip,
#                         RTO without resending SACKed data, RACK, tail loss
#                         probes, D-SACK undo, NewReno without SACK; delivery-
#                         rate samples (tcp_rate.c), app-limited marks; RACK
#                         with sends at one instant; BBR's pacing (tcp_bbr.c)
#   stack/test_tcp_timer  Check: RTO (initial, backoff, max, Karn), SYN retries,
#                         keepalive, FIN_WAIT_2 on a fake clock
#   stack/test_tcp_pair   Check: two stacks on a lossy in-memory wire, 4 MiB + 1 MiB;
#                         on a 20 Mbit/s one, the delivery rate each measures;
#                         BBR against Reno: the queue it keeps, 1/30 loss
#
# `make check-valgrind-stack` runs the same suites under valgrind (CK_FORK=no).

stack_check_cppflags = -I$(top_srcdir)/stack/include -I$(srcdir)/stack $(CHECK_CFLAGS)
stack_check_cflags = $(AM_CFLAGS_COMMON)
stack_check_ldadd = $(top_builddir)/stack/libstk.la $(CHECK_LIBS)
stack_harness = stack/harness.c stack/harness.h stack/wire.h

stack_tests = stack/test_arp stack/test_ip4 stack/test_tcp_in stack/test_tcp_out \
	stack/test_tcp_sack stack/test_tcp_timer stack/test_tcp_pair

if HAVE_CHECK
check_PROGRAMS += $(stack_tests)
TESTS += $(stack_tests)
endif

stack_test_arp_SOURCES = stack/test_arp.c $(stack_harness)
stack_test_arp_CPPFLAGS = $(stack_check_cppflags)
stack_test_arp_CFLAGS = $(stack_check_cflags)
stack_test_arp_LDADD = $(stack_check_ldadd)

stack_test_ip4_SOURCES = stack/test_ip4.c $(stack_harness)
stack_test_ip4_CPPFLAGS = $(stack_check_cppflags)
stack_test_ip4_CFLAGS = $(stack_check_cflags)
stack_test_ip4_LDADD = $(stack_check_ldadd)

stack_test_tcp_in_SOURCES = stack/test_tcp_in.c $(stack_harness)
stack_test_tcp_in_CPPFLAGS = $(stack_check_cppflags)
stack_test_tcp_in_CFLAGS = $(stack_check_cflags)
stack_test_tcp_in_LDADD = $(stack_check_ldadd)

stack_test_tcp_out_SOURCES = stack/test_tcp_out.c $(stack_harness)
stack_test_tcp_out_CPPFLAGS = $(stack_check_cppflags)
stack_test_tcp_out_CFLAGS = $(stack_check_cflags)
stack_test_tcp_out_LDADD = $(stack_check_ldadd)

stack_test_tcp_sack_SOURCES = stack/test_tcp_sack.c $(stack_harness)
stack_test_tcp_sack_CPPFLAGS = $(stack_check_cppflags)
stack_test_tcp_sack_CFLAGS = $(stack_check_cflags)
stack_test_tcp_sack_LDADD = $(stack_check_ldadd)

stack_test_tcp_timer_SOURCES = stack/test_tcp_timer.c $(stack_harness)
stack_test_tcp_timer_CPPFLAGS = $(stack_check_cppflags)
stack_test_tcp_timer_CFLAGS = $(stack_check_cflags)
stack_test_tcp_timer_LDADD = $(stack_check_ldadd)

stack_test_tcp_pair_SOURCES = stack/test_tcp_pair.c $(stack_harness)
stack_test_tcp_pair_CPPFLAGS = $(stack_check_cppflags)
stack_test_tcp_pair_CFLAGS = $(stack_check_cflags)
stack_test_tcp_pair_LDADD = $(stack_check_ldadd)

# every suite under valgrind (CK_FORK=no: one process per suite). A memory
# error or a definite leak exits 99 and is reported apart from failed checks.
check-valgrind-stack: $(stack_tests)
	@if test -z "$(VALGRIND)"; then echo "valgrind not found"; exit 77; fi; \
	vg=0; ck=0; for t in $(stack_tests); do \
	  echo "== valgrind $$t"; \
	  CK_FORK=no CK_TIMEOUT_MULTIPLIER=40 $(LIBTOOL) --mode=execute $(VALGRIND) --quiet \
	    --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 \
	    ./$$t; rc=$$?; \
	  if test $$rc = 99; then echo "VALGRIND ERRORS: $$t"; vg=1; \
	  elif test $$rc != 0; then echo "check failures (see above): $$t"; ck=1; fi; \
	done; \
	if test $$vg = 1; then exit 1; fi; \
	if test $$ck = 1; then echo "valgrind clean; some checks failed"; exit 2; fi; \
	echo "valgrind clean; all checks passed"
.PHONY: check-valgrind-stack

# WebSocket codec (stack/ws_frame.c, ws_handshake.c, utf8.c): no harness, only
# stk/ws.h; chunks handed to the decoder end on a guard page. Appended to
# stack_tests, so TESTS, check_PROGRAMS and check-valgrind-stack include them.
#
#   stack/test_ws_frame      Check: RFC 6455 5.7 vectors (decoder and encoder),
#                            every length form, every chunking 1..len and seeded
#                            random chunkings (client and masked server streams),
#                            whole-message-in-one-chunk rule, masking at every key
#                            offset, control frames inside messages, each protocol
#                            error with its close code and no DATA for the bad
#                            bytes, close codes, max_msg, UTF-8 across fragments
#   stack/test_ws_handshake  Check: Sec-WebSocket-Accept vectors, client request,
#                            client response checks (good / bad, any split, frame
#                            bytes behind the head, 8 KiB bound), server request
#                            parsing, server response, round trip
#   stack/test_utf8          Check: stk_utf8_validate on every scalar value,
#                            overlongs, surrogates, > U+10FFFF, truncation, any
#                            split, the 8-byte ASCII fast path, a reference model
#   stack/test_ws_deflate    Check: permessage-deflate (RFC 7692): 7.2.3 byte
#                            examples, context takeover, window bits 8..15 (zlib
#                            as reference inflater), any input / output chunking,
#                            round trips, bombs against the inflated-size limit,
#                            corrupt data, UTF-8 of inflated text, decoder +
#                            inflater, the negotiation matrix both sides
stack_ws_ldadd = $(top_builddir)/stack/libstk.la $(CRYPTO_LIBS) $(ZLIB_LIBS) $(CHECK_LIBS)

stack_tests += stack/test_ws_frame stack/test_ws_handshake stack/test_utf8 stack/test_ws_deflate

stack_test_ws_frame_SOURCES = stack/test_ws_frame.c stack/t_bytes.h
stack_test_ws_frame_CPPFLAGS = $(stack_check_cppflags)
stack_test_ws_frame_CFLAGS = $(stack_check_cflags)
stack_test_ws_frame_LDADD = $(stack_ws_ldadd)

stack_test_ws_handshake_SOURCES = stack/test_ws_handshake.c stack/t_bytes.h
stack_test_ws_handshake_CPPFLAGS = $(stack_check_cppflags) $(CRYPTO_CFLAGS)
stack_test_ws_handshake_CFLAGS = $(stack_check_cflags)
stack_test_ws_handshake_LDADD = $(stack_ws_ldadd)

stack_test_utf8_SOURCES = stack/test_utf8.c stack/t_bytes.h
stack_test_utf8_CPPFLAGS = $(stack_check_cppflags)
stack_test_utf8_CFLAGS = $(stack_check_cflags)
stack_test_utf8_LDADD = $(stack_ws_ldadd)

stack_test_ws_deflate_SOURCES = stack/test_ws_deflate.c stack/t_bytes.h
stack_test_ws_deflate_CPPFLAGS = $(stack_check_cppflags) $(ZLIB_CFLAGS)
stack_test_ws_deflate_CFLAGS = $(stack_check_cflags)
stack_test_ws_deflate_LDADD = $(stack_ws_ldadd)

# WebSocket session (stack/ws_session.c): a client and a server session back
# to back in memory, frames written by ops.tx into byte buffers fed to the
# other side in chunks; buffers lent and counted. Appended to stack_tests.
#
#   stack/test_ws_session  Check: messages both ways byte exact, every chunking
#                          (IN_CHUNK vs ASSEMBLED), assembly growing (buf_get
#                          grow / buf_put, no leak, also after stk_wss_fini mid-
#                          message), refused buffers (dropped, 1011), ping ->
#                          pong, the close handshake (with and without a code,
#                          once), 1002 / 1007 / 1009 with their close frames,
#                          masking keys from ops.rand, permessage-deflate both
#                          ways (RSV1, context takeover, a dropped message keeps
#                          the window, bombs -> 1009), fragmented sends with a
#                          ping inside, refused tx (-1, STK_WSS_GONE, the
#                          session finished and freed inside the tx)
stack_tests += stack/test_ws_session

stack_test_ws_session_SOURCES = stack/test_ws_session.c stack/t_bytes.h
stack_test_ws_session_CPPFLAGS = $(stack_check_cppflags)
stack_test_ws_session_CFLAGS = $(stack_check_cflags)
stack_test_ws_session_LDADD = $(stack_ws_ldadd)

# TLS (stack/tls*.c): a client and a server session on in-memory queues, the test
# PKI made at start with libcrypto (stack/tls_certs.c). Appended to stack_tests.
#
#   stack/test_tls   Check: TLS 1.2 and 1.3 exchanges exact under every chunking,
#                    ALPN, counters, IP literals, verification failures (wrong
#                    host, expired, unknown CA) and insecure, ca_path, ticket
#                    resumption, version mismatch, garbage, refused tx,
#                    close_notify, timeout, configuration errors
stack_tests += stack/test_tls

stack_test_tls_SOURCES = stack/test_tls.c stack/tls_certs.c stack/tls_certs.h
stack_test_tls_CPPFLAGS = $(stack_check_cppflags) $(SSL_CFLAGS) $(CRYPTO_CFLAGS)
stack_test_tls_CFLAGS = $(stack_check_cflags)
stack_test_tls_LDADD = $(top_builddir)/stack/libstk.la $(SSL_LIBS) $(CRYPTO_LIBS) $(CHECK_LIBS)
