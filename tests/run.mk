# L1: real pipelines run by the lcpipe binary on in-process ring pairs and
# net_null vdevs, EAL without hugepages or PCI. One shell script per concern,
# sharing tests/run/lib.sh (temp dir, runtime dir, timeouts, assertions) and
# tests/run/rcheck.py (assertions on the --report JSON); configs are templates in
# tests/run/conf/. sink_check is a test-only stage plugin (never installed) that
# checks gen's sequence numbers. Every script exits 0 pass, 1 fail, 77 skip.
RUN_TESTS = \
	run/same-lcore.sh \
	run/cross-lcore.sh \
	run/shutdown.sh \
	run/seq-order.sh \
	run/unlinked.sh \
	run/telemetry.sh \
	run/prometheus.sh \
	run/config-include.sh \
	run/tee.sh \
	run/ws-rtt.sh \
	run/live.sh \
	run/eal-override.sh \
	run/failure.sh \
	run/sink-pcap.sh \
	run/demo.sh \
	run/wss.sh \
	run/deflate.sh \
	run/ws-defaults.sh \
	run/feedsim-prerender.sh \
	run/batch.sh \
	run/timing.sh \
	run/pools.sh \
	run/backpressure.sh \
	run/ab_pairs.sh

TESTS += $(RUN_TESTS)

RUN_CONFS = \
	run/conf/pair-chain.json \
	run/conf/direct.json \
	run/conf/backpressure.json \
	run/conf/pool-wait.json \
	run/conf/unlinked-pair.json \
	run/conf/unlinked-null.json \
	run/conf/gen-unlinked.json \
	run/conf/eal-override.json \
	run/conf/init-fail.json \
	run/conf/start-fail.json \
	run/conf/claim-twice.json \
	run/conf/tx-socket-null.json \
	run/conf/tx-socket-ring-pair.json \
	run/conf/endless.json \
	run/conf/batch.json \
	run/conf/pools.json

EXTRA_DIST += $(RUN_TESTS) $(RUN_CONFS) run/lib.sh run/rcheck.py run/plugins/test_plugin.h

# test-only plugins: loaded through the configs' plugin_path (run/plugins/.libs),
# built like an installed plugin (only the descriptor exported), never installed;
# run/plugins/test_plugin.h is what they share (tests/kernel/plugins' too)
RUN_PLUGIN_CPPFLAGS = -I$(top_srcdir)/framework/include -I$(srcdir)/run/plugins
RUN_PLUGIN_CFLAGS = $(AM_CFLAGS_COMMON) $(DPDK_CFLAGS) -fvisibility=hidden
RUN_PLUGIN_LDFLAGS = -module -avoid-version -shared -rpath /nowhere \
	-export-symbols-regex '^lcp_plugin_descriptor$$' $(SAN_LDFLAGS)
RUN_PLUGIN_LIBADD = $(top_builddir)/framework/liblcp.la $(DPDK_LIBS)
# the plugins built with these alone: one line each in run/plugins/list, expanded
# by run/plugins/gen-am.sh
include $(srcdir)/run/plugins/plugins.am
$(srcdir)/run/plugins/plugins.am: $(srcdir)/run/plugins/list $(srcdir)/run/plugins/gen-am.sh
	$(AM_V_GEN)$(SHELL) $(srcdir)/run/plugins/gen-am.sh $(srcdir)/run/plugins/list > $@.tmp && mv $@.tmp $@
EXTRA_DIST += run/plugins/list run/plugins/gen-am.sh

# the 2.x loader refuses a plugin built against the ABI 1.3 SDK (abi13_pass)
RUN_TESTS += run/abi_compat.sh
RUN_CONFS += run/conf/abi-compat.json

# same-lcore dispatch: no process() runs inside another (plain_pass counts them)
RUN_TESTS += run/walk.sh
RUN_CONFS += run/conf/walk.json

# metrics (plugins/metrics) fed by tick_src, a test-only msg source (JSON ticks with
# injected gaps, duplicates and non-ticks, counted so the test compares exactly)
RUN_TESTS += run/metrics.sh
RUN_CONFS += run/conf/metrics.json run/conf/metrics-lines.json

# the exchange profiles (conf/exchanges/): lcpipe check on each, and each one's
# metrics options against feedsim's simulation of its venue (run/exchanges.sh)
RUN_TESTS += run/exchanges.sh

# the msg sinks (plugins/sink_file, plugins/sink_echo) fed by msg_src, a test-only
# msg source with known payloads, recorded in a manifest that run/msgcheck.py
# compares the written files against
RUN_TESTS += run/sink_file.sh run/sink_echo.sh
RUN_CONFS += run/conf/msg-file.json run/conf/msg-echo.json run/conf/msg-echo-ws.json
EXTRA_DIST += run/msgcheck.py

# every counters strategy (plugins/counters_*) in a real run, globally and per
# stage: what the source counted out equals what every hop and the sink counted
RUN_TESTS += run/counters.sh
RUN_CONFS += run/conf/counters.json

# a clean stop of a WebSocket session (engine.linger): the demo pipeline ended
# by --duration and SIGTERM with its stages in both orders and across lcores;
# both sides close with 1001, nothing is reset
RUN_TESTS += run/ws-stop.sh run/stop-limit.sh run/stream-gap.sh run/many-clients.sh run/trust-csum.sh
RUN_CONFS += run/conf/loop.json run/conf/stuck.json

# shared-nothing scale-out (conf/scaleout.json): two complete feedsim -> tcp =
# ring pair = tcp -> ws -> metrics lanes, one per worker lcore, in one process;
# every message of both lanes in order, no ring between lcores
RUN_TESTS += run/scaleout.sh

# lcpipe ab (framework/ab.c): two demo configs and two gen configs compared end to
# end; run/abcheck.py recomputes the medians and ratios from the JSON and parses
# the SVG
RUN_TESTS += run/ab.sh
RUN_CONFS += run/conf/ab-demo.json run/conf/ab-gen.json
EXTRA_DIST += run/abcheck.py

# the fault stage (plugins/fault): gen -> fault -> sink_check for its actions,
# proportions, reproducibility and leaks; tcp_app (tests/kernel/plugins) over a
# ring pair for corruption caught by the tcp stage's checksums
RUN_TESTS += run/fault.sh run/loss.sh
RUN_CONFS += run/conf/fault-gen.json run/conf/fault-xfer.json run/conf/fault-demo.json

# the NATS sink (plugins/sink_nats) against a real nats-server on loopback (core
# and JetStream), read back over the NATS protocol by run/nats_peer.py; skipped
# without nats-server or without the plugin (no libnats at configure time)
RUN_TESTS += run/nats.sh
EXTRA_DIST += run/nats_peer.py

# the shared-memory sink (plugins/sink_shm): the demo pipeline into a ring read by
# run/shm_consume (against the consumer library liblcpipe-shm) and run/shm_read.py
# (the pure-Python reader): every message, overruns of slow readers, several
# readers at once, files that are not rings, option refusals
RUN_TESTS += run/shm.sh
EXTRA_DIST += run/shm_read.py
check_PROGRAMS += run/shm_consume
run_shm_consume_SOURCES = run/shm_consume.c
run_shm_consume_CPPFLAGS = -I$(top_srcdir)/plugins/sink_shm
run_shm_consume_CFLAGS = $(AM_CFLAGS_COMMON)
run_shm_consume_LDADD = $(top_builddir)/plugins/sink_shm/liblcpipe-shm.la
run_shm_consume_LDFLAGS = -no-install
