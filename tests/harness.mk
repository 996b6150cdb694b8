# tests/harness.mk — L1 Check suites of stage plugins through the plugin test
# harness (harness/plugin_harness.[ch]): one stage built by liblcp from a
# config the harness writes, its ports linked to test-only h_tap stages, run
# turn by turn on the test's thread with EAL (--no-huge, lcores 0-2 on CPU 0)
# initialised in each forked test. See harness/README.md. Included by
# tests/Makefile.am.
#
#   harness/test_h_ws          Check: ws after a handshake the test answers:
#                              frames -> msgs (whole, fragmented, one byte per
#                              segment), ping -> pong, protocol errors, gaps,
#                              the shutdown's close handshake
#   harness/test_h_metrics     Check: metrics on msg ticks: counts, per-connection
#                              counters, sequence gaps (single numbers and
#                              paths-mode ranges), passthrough or free
#   harness/test_h_feedsim     Check: feedsim serving one client the test
#                              upgrades: listen, 101, ticks as well-formed frames,
#                              close 1000 after count, close 1001 at the linger
#   harness/test_h_sinks       Check: sink_null, sink_file (exact file bytes),
#                              sink_echo, sink_shm (read back with
#                              liblcpipe-shm) and sink_pcap: what they free,
#                              write and pass on; the
#                              guide's sink_count (doc/.libs, built first here)
#   harness/test_h_nats        Check: sink_nats against a nats-server each test
#                              starts on loopback, read back over the NATS text
#                              protocol on a plain socket: core
#                              subjects, sanitizing, fallback, JetStream acks and
#                              duplicates, no server (drop_not_connected)
#   harness/test_h_strategies  Check: pool_* modules behind tee's copies, batch_*
#                              modules on a ring link, counters_* modules behind
#                              metrics: same output, exact counts, nothing lost
#   harness/test_h_stage       Check: what the engine gives every stage: the
#                              context it allocates and frees (ctx_size, on
#                              h_ctx), lcp_stage_zmalloc()
#
# Test-only plugins (never installed; -rpath /nowhere makes libtool build a .so):
#   harness/.libs/h_tap.so     the far end of every link of the stage under test
#   harness/.libs/h_ctx.so     a stage that reports what init() found in its
#                              context, and fails or replaces it on request

harness_tests = harness/test_h_ws harness/test_h_metrics harness/test_h_feedsim \
	harness/test_h_sinks harness/test_h_nats harness/test_h_strategies \
	harness/test_h_stage

harness_plugin_cppflags = -I$(top_srcdir)/framework/include $(DPDK_CFLAGS)
harness_plugin_cflags = $(AM_CFLAGS_COMMON) -fvisibility=hidden
harness_plugin_ldflags = -module -avoid-version -shared -rpath /nowhere \
	-export-symbols-regex '^lcp_plugin_descriptor$$' $(SAN_LDFLAGS)

check_LTLIBRARIES += harness/h_tap.la harness/h_ctx.la
harness_h_tap_la_SOURCES = harness/h_tap.c harness/h_tap.h
harness_h_tap_la_CPPFLAGS = $(harness_plugin_cppflags)
harness_h_tap_la_CFLAGS = $(harness_plugin_cflags)
harness_h_tap_la_LDFLAGS = $(harness_plugin_ldflags)
harness_h_ctx_la_SOURCES = harness/h_ctx.c
harness_h_ctx_la_CPPFLAGS = $(harness_plugin_cppflags)
harness_h_ctx_la_CFLAGS = $(harness_plugin_cflags)
harness_h_ctx_la_LDFLAGS = $(harness_plugin_ldflags)

harness_cppflags = -I$(top_srcdir)/framework -I$(top_builddir)/framework \
	-I$(top_srcdir)/framework/include -I$(top_srcdir)/stack/include -I$(top_builddir) \
	-I$(srcdir)/harness $(DPDK_CFLAGS) $(JANSSON_CFLAGS) $(CHECK_CFLAGS) \
	-DTEST_BUILDDIR='"$(abs_builddir)"' -DTEST_TOP_BUILDDIR='"$(abs_top_builddir)"'
harness_cflags = $(AM_CFLAGS_COMMON)
harness_ldadd = $(top_builddir)/framework/liblcp.la $(top_builddir)/stack/libstk.la \
	$(DPDK_LIBS) $(JANSSON_LIBS) $(CHECK_LIBS)
harness_src = harness/plugin_harness.c harness/plugin_harness.h harness/h_tap.h

if HAVE_CHECK
check_PROGRAMS += $(harness_tests)
TESTS += $(harness_tests)
endif

harness_test_h_ws_SOURCES = harness/test_h_ws.c $(harness_src)
harness_test_h_ws_CPPFLAGS = $(harness_cppflags)
harness_test_h_ws_CFLAGS = $(harness_cflags)
harness_test_h_ws_LDADD = $(harness_ldadd)
harness_test_h_metrics_SOURCES = harness/test_h_metrics.c $(harness_src)
harness_test_h_metrics_CPPFLAGS = $(harness_cppflags) -I$(top_srcdir)/plugins/metrics -I$(top_srcdir)/plugins/common
harness_test_h_metrics_CFLAGS = $(harness_cflags)
harness_test_h_metrics_LDADD = $(harness_ldadd)
harness_test_h_feedsim_SOURCES = harness/test_h_feedsim.c $(harness_src)
harness_test_h_feedsim_CPPFLAGS = $(harness_cppflags)
harness_test_h_feedsim_CFLAGS = $(harness_cflags)
harness_test_h_feedsim_LDADD = $(harness_ldadd)
harness_test_h_sinks_SOURCES = harness/test_h_sinks.c $(harness_src)
harness_test_h_sinks_CPPFLAGS = $(harness_cppflags) -I$(top_srcdir)/plugins/sink_shm
harness_test_h_sinks_CFLAGS = $(harness_cflags)
harness_test_h_sinks_LDADD = $(harness_ldadd) $(top_builddir)/plugins/sink_shm/liblcpipe-shm.la
harness_test_h_nats_SOURCES = harness/test_h_nats.c $(harness_src)
harness_test_h_nats_CPPFLAGS = $(harness_cppflags)
harness_test_h_nats_CFLAGS = $(harness_cflags)
harness_test_h_nats_LDADD = $(harness_ldadd)
harness_test_h_strategies_SOURCES = harness/test_h_strategies.c $(harness_src)
harness_test_h_strategies_CPPFLAGS = $(harness_cppflags)
harness_test_h_strategies_CFLAGS = $(harness_cflags)
harness_test_h_strategies_LDADD = $(harness_ldadd)
harness_test_h_stage_SOURCES = harness/test_h_stage.c $(harness_src)
harness_test_h_stage_CPPFLAGS = $(harness_cppflags)
harness_test_h_stage_CFLAGS = $(harness_cflags)
harness_test_h_stage_LDADD = $(harness_ldadd)

# test_h_sinks loads doc/writing-a-plugin.md's example from doc/.libs
check_DATA += harness-doc-example
harness-doc-example:
	cd $(top_builddir)/doc && $(MAKE) $(AM_MAKEFLAGS) sink_count.la
.PHONY: harness-doc-example

EXTRA_DIST += harness/README.md

clean-local: clean-local-harness
clean-local-harness:
	-rm -rf harness/scratch-*
.PHONY: clean-local-harness
