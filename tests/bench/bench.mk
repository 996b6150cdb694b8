# `make bench` (top level runs `$(MAKE) -C tests bench`). See doc/benchmarks.md
# and shared/design/BENCHMARKS.md. The programs are EXTRA_PROGRAMS: built only by
# this target, never by `make`, `make check` or `make distcheck`.
#
#   B1  bench/b1_ring_link  cross-lcore ring link and same-lcore direct link
#   B2  bench/b2_dispatch   N pass-through stages on one lcore, with rte_graph
#                           in-process and `dpdk-test graph_perf_autotest` (b2.sh)
#   B7  bench/b7_tcp_rx     libstk's TCP receive path (no DPDK, no EAL) against
#                           kernel TCP over loopback and veth in the same run,
#                           and its callgrind counts (b7.sh)
#   B6  bench/b6_ws_decode  libstk's WebSocket decoder against memcpy and wslay
#                           (libwslay-dev), and its callgrind counts (b6.sh)
#   B8  bench/b8.sh         WebSocket echo RTT over a veth: lcpipe (ws stage +
#                           plugins/ws_rtt) against a kernel-socket client
#                           (bench/b8_kernel_client), both to bench/b8_echo_server
#   B9  bench/b9_counters   the four counters strategies: cycles per add with 1
#                           and 2 writers, per read, and callgrind counts (b9.sh)
#   B10 bench/b10.sh        the engine's instrumentation (counters_percore, the live
#                           line, telemetry) against counters_null on the demo
#                           feed flat out on one lcore, rounds interleaved; then
#                           the metrics stage's own cycles/msg (stage_timing)
#   B11 bench/b11.sh        burst x flush-timeout sweep of the ws -> metrics ring
#                           (bench/b11.py drives lcpipe on conf/ab/burst_32.json);
#                           not in the default BENCH_ONLY (several minutes)
#   B4  bench/b4.sh         the pool modules (bench/b4_pools, one process per
#                           module setting, rounds interleaved; bench/b4_summary.py
#                           compares them) and their callgrind counts
#   B12 bench/b12.sh        the whole pipeline rx -> tcp -> ws -> metrics -> sink
#                           (lcpipe on 1 and 2 lcores, net_af_packet on a veth)
#                           against a kernel-socket client (bench/b12_kernel_client),
#                           both fed by bench/b12_feed_server
#   B12x bench/b12x.sh      B12 with lcpipe's port on net_af_xdp (same veth, same
#                           kernel anchors in the same run)
#   B13 bench/b13.sh        the free wire: B12's receiving pipeline fed by a second
#                           lcpipe (feedsim, live or prerender) over net_memif,
#                           against B12's feed server and kernel client on
#                           loopback in a netns, same run (bench/b13_report.py)
#   B13s bench/b13_scale.sh scale-out: 1 shared-nothing lane (feedsim -> tcp =
#                           ring pair = tcp -> ws -> metrics, conf/scaleout.json)
#                           on 1 worker lcore vs 2 lanes on 2, interleaved, with
#                           alu and memory-copy anchors on the same CPUs
#                           (bench/b13_scale.py)
#   B14 bench/b14.sh        wss receive: B12's feed server and kernel client with
#                           TLS (OpenSSL on their kernel sockets, --tls-*) and
#                           lcpipe1 with a wss:// URL; also TLS + permessage-
#                           deflate and plain ws in the same run (runs b12.sh
#                           with B12_ID=B14)
#   B15 bench/b15.sh        bulk transfers (64 MiB) under loss (nft drops 1/30 each
#                           way) and reordering (the fault stage), lcpipe's TCP
#                           sending and receiving against Linux TCP on the same
#                           router in the same run (tests/kernel/tcp_lib.sh's
#                           topo_routed + topo_standin), sending with CUBIC and
#                           with BBR (B15_CC); root, else SKIP
#   B16 bench/b16.sh        shared-memory consumers: latency from a message's rx_tsc
#                           (and from sink_shm's publish) to a consumer's read on
#                           the other CPU, p50/p99/p99.9, and the consumer's cost
#                           per message (bench/b16_consume, liblcpipe-shm)
#   callgrind.sh            instruction counts of the single-lcore hot paths
#
# Knobs: make bench BENCH_REPS=11 BENCH_MS=10 BENCH_CG_ITERS=20000
#        BENCH_ONLY="b1 b2 b7 cg b6 b8 b4 b9 b10 b11 b12 b12x b13 b13s b14 b15 b16" (any subset; b11 is not in the default)
#        B15: B15_REPS=3 B15_BYTES=67108864 B15_CASES="clean loss reorder" (environment)
BENCH_PROGS = bench/b1_ring_link$(EXEEXT) bench/b2_dispatch$(EXEEXT) bench/b7_tcp_rx$(EXEEXT)
EXTRA_PROGRAMS = bench/b1_ring_link bench/b2_dispatch bench/b7_tcp_rx

BENCH_CPPFLAGS = -I$(top_srcdir)/framework/include -I$(top_srcdir)/framework -I$(top_builddir) \
	-DBENCH_PLUGIN_DIR='"$(abs_top_builddir)/plugins/counters_percore/.libs"'
BENCH_CFLAGS = $(AM_CFLAGS_COMMON) $(DPDK_CFLAGS) $(JANSSON_CFLAGS)
BENCH_LDADD = $(top_builddir)/framework/liblcp.la $(DPDK_LIBS) $(JANSSON_LIBS)
# the option table and the summaries (no DPDK: b7_tcp_rx and the kernel-socket
# programs too), then what the EAL benchmarks share
BENCH_OPT_SOURCES = bench/bench_opt.c bench/bench_opt.h
BENCH_STATS_SOURCES = bench/bench_stats.c bench/bench_stats.h
BENCH_UTIL_SOURCES = bench/bench_util.c bench/bench_util.h $(BENCH_STATS_SOURCES) $(BENCH_OPT_SOURCES)

bench_b1_ring_link_SOURCES = bench/b1_ring_link.c $(BENCH_UTIL_SOURCES)
bench_b1_ring_link_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_b1_ring_link_CFLAGS = $(BENCH_CFLAGS)
bench_b1_ring_link_LDADD = $(BENCH_LDADD)
bench_b1_ring_link_LDFLAGS = -no-install

bench_b2_dispatch_SOURCES = bench/b2_dispatch.c bench/b2_graph.c bench/b2_graph_nostats.c \
	bench/b2_graph.h bench/b2_graph_walk.h $(BENCH_UTIL_SOURCES)
bench_b2_dispatch_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_b2_dispatch_CFLAGS = $(BENCH_CFLAGS)
bench_b2_dispatch_LDADD = $(BENCH_LDADD)
bench_b2_dispatch_LDFLAGS = -no-install

# B7 links only libstk (stack/): no DPDK, no EAL, no liblcp
bench_b7_tcp_rx_SOURCES = bench/b7_tcp_rx.c $(BENCH_STATS_SOURCES) $(BENCH_OPT_SOURCES)
bench_b7_tcp_rx_CPPFLAGS = -I$(top_srcdir)/stack/include
bench_b7_tcp_rx_CFLAGS = $(AM_CFLAGS_COMMON)
bench_b7_tcp_rx_LDADD = $(top_builddir)/stack/libstk.la -lm
bench_b7_tcp_rx_LDFLAGS = -no-install

EXTRA_DIST += bench/b1.sh bench/b2.sh bench/b7.sh bench/callgrind.sh bench/common.sh
CLEANFILES += $(BENCH_PROGS) bench-b1.log bench-b2.log bench-b7.log bench-cg.log

BENCH_REPS = 11
BENCH_MS = 10
BENCH_CG_ITERS = 20000
BENCH_ONLY = b1 b2 b7 cg b6 b8 b4 b9 b10 b12 b12x b13 b13s b14 b15 b16

.PHONY: bench
bench: $(BENCH_PROGS)
	@export BENCH_BUILDDIR='$(abs_builddir)' BENCH_REPS='$(BENCH_REPS)' BENCH_MS='$(BENCH_MS)' \
		BENCH_CG_ITERS='$(BENCH_CG_ITERS)' BENCH_DPDK_TEST='$(DPDK_TEST)' VALGRIND='$(VALGRIND)'; \
	unset LCP_PLUGIN_PATH DPDK_TEST; \
	for b in $(BENCH_ONLY); do \
		case $$b in \
		b1) s=b1.sh ;; b2) s=b2.sh ;; b7) s=b7.sh ;; cg) s=callgrind.sh ;; b6) s=b6.sh ;; b8) s=b8.sh ;; b11) s=b11.sh ;; \
		b4) s=b4.sh ;; b9) s=b9.sh ;; b10) s=b10.sh ;; b12) s=b12.sh ;; b13) s=b13.sh ;; b13s) s=b13_scale.sh ;; \
		b12x) s=b12x.sh ;; \
		b14) s=b14.sh ;; b15) s=b15.sh ;; b16) s=b16.sh ;; \
		*) echo "bench: unknown '$$b' in BENCH_ONLY (b1 b2 b7 cg b6 b8 b4 b9 b10 b11 b12 b12x b13 b13s b14 b15 b16)" >&2; exit 2 ;; \
		esac; \
		{ bash '$(srcdir)/bench/'$$s; echo $$? > bench-$$b.rc; } 2>&1 | tee bench-$$b.log; \
		rc=$$(cat bench-$$b.rc); rm -f bench-$$b.rc; \
		case $$rc in 0|77) ;; *) echo "bench: $$s failed ($$rc)" >&2; exit 1 ;; esac; \
	done

# the EXTRA_PROGRAMS of the benchmarks in BENCH_ONLY, built before they run
.PHONY: bench-progs-build
bench: bench-progs-build
bench-progs-build:
	@progs=; \
	for b in $(BENCH_ONLY); do \
		case $$b in \
		b8) progs="$$progs bench/b8_echo_server$(EXEEXT) bench/b8_kernel_client$(EXEEXT) bench/b8_afp_tx$(EXEEXT)" ;; \
		b9) progs="$$progs bench/b9_counters$(EXEEXT)" ;; \
		b12 | b12x | b13 | b14) progs="$$progs bench/b12_feed_server$(EXEEXT) bench/b12_kernel_client$(EXEEXT)" ;; \
		b16) progs="$$progs bench/b16_consume$(EXEEXT)" ;; \
		esac; \
	done; \
	[ -z "$$progs" ] || $(MAKE) $(AM_MAKEFLAGS) $$progs

# ---- B6: the WebSocket decoder (stack/ws_frame.c) against memcpy and wslay ----
# bench/b6_ws_decode (bench/b6.sh, doc/benchmarks.md "B6"). wslay is Debian's
# libwslay-dev, which ships no .pc file, and configure does not look for it: the
# program links $(WSLAY_LIBS) and is built only when <wslay/wslay.h> is found
# (bench-b6-build below); otherwise b6.sh says why and exits 77 (SKIP).
WSLAY_LIBS = -lwslay
EXTRA_PROGRAMS += bench/b6_ws_decode
bench_b6_ws_decode_SOURCES = bench/b6_ws_decode.c $(BENCH_UTIL_SOURCES)
bench_b6_ws_decode_CPPFLAGS = $(BENCH_CPPFLAGS) -I$(top_srcdir)/stack/include
bench_b6_ws_decode_CFLAGS = $(BENCH_CFLAGS)
bench_b6_ws_decode_LDADD = $(top_builddir)/stack/libstk.la $(BENCH_LDADD) $(WSLAY_LIBS)
bench_b6_ws_decode_LDFLAGS = -no-install
EXTRA_DIST += bench/b6.sh bench/b10.sh bench/b11.sh bench/b11.py bench/ab_all.sh
CLEANFILES += bench/b6_ws_decode$(EXEEXT) bench-b6.log bench-b10.log

.PHONY: bench-b6-build
bench: bench-b6-build
bench-b6-build:
	@case " $(BENCH_ONLY) " in *" b6 "*) \
		if echo '#include <wslay/wslay.h>' | $(CC) $(CPPFLAGS) -E -x c - >/dev/null 2>&1; then \
			$(MAKE) $(AM_MAKEFLAGS) bench/b6_ws_decode$(EXEEXT); \
		else \
			rm -f bench/b6_ws_decode$(EXEEXT); \
			echo "bench: <wslay/wslay.h> not found (Debian: libwslay-dev): B6 will SKIP"; \
		fi ;; \
	esac

# ---- B8: WebSocket echo RTT, lcpipe against a kernel-socket client ----
# bench/b8.sh (doc/benchmarks.md "B8"; root, else SKIP): the same echo server
# (b8_echo_server, kernel sockets) over the same veth for every client: the
# kernel-socket client b8_kernel_client (blocking and busy-polling recv) and
# lcpipe (port_ethdev on net_af_packet, tcp, ws, and the ws_rtt stage,
# plugins/ws_rtt, built with everything else). The two
# programs use libstk only for the WebSocket handshake (and its libcrypto).
# b8_afp_tx: a diagnostic b8.sh runs once per run, the cost of one small frame
# sent on the veth through af_packet's TX ring and through sendmmsg().
# Built by bench-progs-build only when b8 is in BENCH_ONLY.
EXTRA_PROGRAMS += bench/b8_echo_server bench/b8_kernel_client bench/b8_afp_tx
bench_b8_afp_tx_SOURCES = bench/b8_afp_tx.c $(BENCH_OPT_SOURCES)
bench_b8_afp_tx_CFLAGS = $(AM_CFLAGS_COMMON)
bench_b8_afp_tx_LDFLAGS = -no-install
# the two kernel-socket programs: kbench.h, libstk's WebSocket codec, ws_rtt's probe
b8_kb_cppflags = -I$(top_srcdir)/stack/include -I$(top_srcdir)/plugins/ws_rtt \
	-I$(top_srcdir)/plugins/common
bench_b8_echo_server_SOURCES = bench/b8_echo_server.c bench/kbench.h $(BENCH_OPT_SOURCES)
bench_b8_echo_server_CPPFLAGS = $(b8_kb_cppflags)
bench_b8_echo_server_CFLAGS = $(AM_CFLAGS_COMMON)
bench_b8_echo_server_LDADD = $(top_builddir)/stack/libstk.la
bench_b8_echo_server_LDFLAGS = -no-install
bench_b8_kernel_client_SOURCES = bench/b8_kernel_client.c bench/kbench.h $(BENCH_OPT_SOURCES)
bench_b8_kernel_client_CPPFLAGS = $(b8_kb_cppflags)
bench_b8_kernel_client_CFLAGS = $(AM_CFLAGS_COMMON)
bench_b8_kernel_client_LDADD = $(top_builddir)/stack/libstk.la
bench_b8_kernel_client_LDFLAGS = -no-install

EXTRA_DIST += bench/b8.sh
CLEANFILES += bench/b8_echo_server$(EXEEXT) bench/b8_kernel_client$(EXEEXT) bench/b8_afp_tx$(EXEEXT) \
	bench-b8.log

# ---- B9: the counters strategies (plugins/counters_*) against each other ----
# bench/b9_counters (bench/b9.sh, doc/benchmarks.md "B9"): the four modules
# through the registry, adds through lcp_ctr_add() as a stage makes them, reads
# through the ops; then its callgrind counts. Built by bench-progs-build only
# when b9 is in BENCH_ONLY.
EXTRA_PROGRAMS += bench/b9_counters
bench_b9_counters_SOURCES = bench/b9_counters.c $(BENCH_UTIL_SOURCES)
bench_b9_counters_CPPFLAGS = $(BENCH_CPPFLAGS)
bench_b9_counters_CFLAGS = $(BENCH_CFLAGS)
bench_b9_counters_LDADD = $(BENCH_LDADD)
bench_b9_counters_LDFLAGS = -no-install
EXTRA_DIST += bench/b9.sh
CLEANFILES += bench/b9_counters$(EXEEXT) bench-b9.log

# ---- B4: the pool strategy modules against each other ----
# bench/b4.sh (doc/benchmarks.md "B4"): bench/b4_pools measures one module
# setting per process (BENCHMARKS.md rule 8), loading plugins/pool_*/.libs from
# the build tree; b4.sh runs it once per setting per round, interleaved, and
# bench/b4_summary.py (/usr/bin/python3) compares the settings round by round.
bench: bench/b4_pools$(EXEEXT)
EXTRA_PROGRAMS += bench/b4_pools
bench_b4_pools_SOURCES = bench/b4_pools.c $(BENCH_UTIL_SOURCES)
bench_b4_pools_CPPFLAGS = $(BENCH_CPPFLAGS) -DBENCH_TOP_BUILDDIR='"$(abs_top_builddir)"'
bench_b4_pools_CFLAGS = $(BENCH_CFLAGS)
bench_b4_pools_LDADD = $(BENCH_LDADD)
bench_b4_pools_LDFLAGS = -no-install
EXTRA_DIST += bench/b4.sh bench/b4_summary.py
CLEANFILES += bench/b4_pools$(EXEEXT) bench-b4.log

# ---- B12: the whole pipeline against the kernel path ----
# bench/b12.sh (doc/benchmarks.md "B12"; root, else SKIP): one feed server
# (b12_feed_server, kernel sockets) per run streams WebSocket ticks over a veth
# to the kernel-socket anchor (b12_kernel_client: recv + a minimal frame parser
# + metrics' tick scan and sequence check) or to lcpipe (port_ethdev on
# net_af_packet, tcp, ws, metrics, sink_null; no bench-only stage) on 1 and 2
# worker lcores. Both programs use libstk only for the WebSocket handshake (and
# the feed server its deflater); for B14 (bench/b14.sh, doc/benchmarks.md "B14")
# they speak TLS through OpenSSL (kbench_tls.h: --tls-cert/--tls-key,
# --tls-ca, --tls-suite) and permessage-deflate (--deflate; the client inflates
# with zlib); B13 (bench/b13.sh) uses them as its kernel anchors. Built by
# bench-progs-build when b12, b13 or b14 is in BENCH_ONLY.
EXTRA_PROGRAMS += bench/b12_feed_server bench/b12_kernel_client
bench_b12_feed_server_SOURCES = bench/b12_feed_server.c bench/kbench.h bench/kbench_tls.h \
	$(BENCH_OPT_SOURCES)
bench_b12_feed_server_CPPFLAGS = -I$(top_srcdir)/stack/include -I$(top_srcdir)/plugins/common \
	$(SSL_CFLAGS) $(CRYPTO_CFLAGS)
bench_b12_feed_server_CFLAGS = $(AM_CFLAGS_COMMON)
bench_b12_feed_server_LDADD = $(top_builddir)/stack/libstk.la $(SSL_LIBS) $(CRYPTO_LIBS)
bench_b12_feed_server_LDFLAGS = -no-install
bench_b12_kernel_client_SOURCES = bench/b12_kernel_client.c bench/kbench.h bench/kbench_tls.h \
	$(BENCH_OPT_SOURCES)
bench_b12_kernel_client_CPPFLAGS = -I$(top_srcdir)/stack/include \
	-I$(top_srcdir)/plugins/metrics -I$(top_srcdir)/plugins/common $(SSL_CFLAGS) $(CRYPTO_CFLAGS) $(ZLIB_CFLAGS)
bench_b12_kernel_client_CFLAGS = $(AM_CFLAGS_COMMON)
bench_b12_kernel_client_LDADD = $(top_builddir)/stack/libstk.la $(SSL_LIBS) $(CRYPTO_LIBS) $(ZLIB_LIBS)
bench_b12_kernel_client_LDFLAGS = -no-install
EXTRA_DIST += bench/b12.sh bench/b12x.sh bench/b12_report.py bench/b13.sh bench/b13_report.py bench/b14.sh \
	bench/b13_scale.sh bench/b13_scale.py
CLEANFILES += bench/b12_feed_server$(EXEEXT) bench/b12_kernel_client$(EXEEXT) bench-b12.log bench-b13.log bench-b14.log \
	bench-b13s.log

# soak mode (issue 6): reconnect continuously for SOAK_SECONDS and report RSS and
# the objects in use in every mempool and stage pool over time (must be flat).
# Not part of `make check` or `make bench`: make -C tests soak SOAK_SECONDS=600
SOAK_SECONDS ?= 600
SOAK_INTERVAL ?= 10
EXTRA_DIST += bench/soak.py
.PHONY: soak
soak: all
	$(PYTHON3) $(srcdir)/bench/soak.py --lcpipe $(top_builddir)/framework/lcpipe \
		--conf $(top_srcdir)/conf/demo.json --seconds $(SOAK_SECONDS) \
		--interval $(SOAK_INTERVAL) --out $(abs_builddir)/bench-soak

# ---- B15: bulk transfers under loss, lcpipe's TCP against Linux TCP ----
# bench/b15.sh (doc/benchmarks.md "B15"; root, else SKIP) runs lcpipe with the
# tcp_app plugin (plugins/tcp_app, built with everything else).
EXTRA_DIST += bench/b15.sh
CLEANFILES += bench-b15.log

# ---- B16: shared-memory consumers (plugins/sink_shm, liblcpipe-shm) ----
# bench/b16.sh (doc/benchmarks.md "B16"): the demo pipeline into sink_shm at a
# fixed rate, read by bench/b16_consume pinned to the other CPU than the lcpipe
# worker; latency rx_tsc -> read and publish -> read, the consumer's cycles per
# message, next to a cache line's trip between the same two CPUs (same run).
# Built by bench-progs-build only when b16 is in BENCH_ONLY.
EXTRA_PROGRAMS += bench/b16_consume
bench_b16_consume_SOURCES = bench/b16_consume.c
bench_b16_consume_CPPFLAGS = -I$(top_srcdir)/plugins/sink_shm
bench_b16_consume_CFLAGS = $(AM_CFLAGS_COMMON)
bench_b16_consume_LDADD = $(top_builddir)/plugins/sink_shm/liblcpipe-shm.la
bench_b16_consume_LDFLAGS = -no-install
EXTRA_DIST += bench/b16.sh
CLEANFILES += bench/b16_consume$(EXEEXT) bench-b16.log
