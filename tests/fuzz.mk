# tests/fuzz.mk — fuzz targets (tests/fuzz/fuzz_*.c, libFuzzer's
# LLVMFuzzerTestOneInput) and their corpora (tests/fuzz/<target>/).
# Included by tests/Makefile.am.
#
#   fuzz/fuzz_ws_frame      WebSocket frame decoder (+ encoder round trip), client
#                           and server side, whole vs re-chunked feeds
#   fuzz/fuzz_ws_handshake  HTTP upgrade response (client) / request (server)
#                           parsers with permessage-deflate offers and answers,
#                           whole vs re-chunked feeds, round trips
#   fuzz/fuzz_ws_inflate    permessage-deflate inflater on arbitrary messages,
#                           whole vs re-chunked input and output, the inflated-
#                           size limit, deflate round trip
#   fuzz/fuzz_ws_session    WebSocket session layer (stack/ws_session.c): a
#                           client or server session fed arbitrary streams in
#                           any chunking, pmd, refused buffers, failing tx;
#                           every frame it sends read back by a reference decoder
#   fuzz/fuzz_tls_input     TLS receive path (stack/tls*.c): a client or a server
#                           session fed arbitrary records in any chunking
#   fuzz/fuzz_tls_fast      TLS receive fast path (stk_tls_recv): a real session
#                           of each fast suite, records written by a program in
#                           the input, then flipped, cut or forged
#   fuzz/fuzz_tcp_input     Ethernet/IPv4/TCP frames into a connection in any TCP
#                           state, fake clock, leak check at destroy
#   fuzz/fuzz_config        lcp_cfg_load() on the input as JSON, build-tree plugins
#   fuzz/fuzz_metrics_json  the metrics stage's path walk (plugins/common/
#                           metrics_json.c), the six venue path sets and more
#
# Every build (gcc, no libFuzzer): fuzz/replay_<target> is the same target with
# tests/fuzz/replay.c as main(); `make check` runs it over every file of
# $(srcdir)/fuzz/<target>/, so each corpus file, each crash reproducer
# (crash-*), is a regression test.
#
# ./configure CC=clang --enable-fuzzing: fuzz/fuzz_<target> link libFuzzer
# (everything else is built with -fsanitize=fuzzer-no-link,address,undefined);
#   make fuzz [FUZZ_SECONDS=900] [FUZZ_TARGETS="ws_frame config"] [-j2]
#       one campaign per target (-j2: two at once), new inputs and crashes in
#       $(FUZZ_WORKDIR)/<target>/{corpus,crashes}, log in .../log; prints
#       executions, cov/ft, corpus size and crashes per target. A campaign stops
#       at its first crash (libFuzzer's default).
#   make fuzz-merge [FUZZ_TARGETS=...]
#       minimise tests/fuzz/<target>/ + the work corpus back into
#       tests/fuzz/<target>/ (-merge=1, on edge coverage: FUZZ_MERGE_FLAGS);
#       crash-* reproducers are always kept
# FUZZ_FLAGS adds libFuzzer options (e.g. FUZZ_FLAGS=-max_len=16384).

FUZZ_TARGETS = $(FUZZ_ALL)
FUZZ_SECONDS = 900
FUZZ_WORKDIR = $(abs_top_builddir)/fuzz-work
FUZZ_FLAGS =
# merge on edges only (not hit-count buckets): a few hundred files per target
FUZZ_MERGE_FLAGS = -use_counters=0

fuzz_stk_cppflags = -I$(top_srcdir)/stack/include -I$(srcdir)/fuzz
fuzz_stk_ldadd = $(top_builddir)/stack/libstk.la $(CRYPTO_LIBS) $(ZLIB_LIBS)
fuzz_lcp_cppflags = -I$(top_srcdir)/framework -I$(top_builddir)/framework \
	-I$(top_srcdir)/framework/include -I$(top_builddir) -I$(srcdir)/fuzz $(JANSSON_CFLAGS)
fuzz_lcp_ldadd = $(top_builddir)/framework/liblcp.la $(JANSSON_LIBS)
fuzz_mj_cppflags = -I$(top_srcdir)/plugins/common -I$(top_srcdir)/plugins/metrics -I$(srcdir)/fuzz
fuzz_mj_ldadd = $(top_builddir)/plugins/common/libcommon.la
fuzz_corpus = -DFUZZ_CORPUS_DIR='"$(abs_srcdir)/fuzz/$(1)"'

fuzz_tls_cppflags = $(fuzz_stk_cppflags) $(SSL_CFLAGS)
fuzz_tls_ldadd = $(top_builddir)/stack/libstk.la $(SSL_LIBS) $(CRYPTO_LIBS) $(ZLIB_LIBS)

# ---- the targets: one line each in fuzz/targets, expanded by fuzz/gen-am.sh into
# FUZZ_ALL, fuzz_replays (every build: a test replaying the committed corpus) and
# the libFuzzer binaries (--enable-fuzzing) ----
include $(srcdir)/fuzz/targets.am
$(srcdir)/fuzz/targets.am: $(srcdir)/fuzz/targets $(srcdir)/fuzz/gen-am.sh
	$(AM_V_GEN)$(SHELL) $(srcdir)/fuzz/gen-am.sh $(srcdir)/fuzz/targets > $@.tmp && mv $@.tmp $@
check_PROGRAMS += $(fuzz_replays)
TESTS += $(fuzz_replays)

EXTRA_DIST += fuzz/README.md fuzz/mkseeds.py fuzz/campaign.sh fuzz/targets fuzz/gen-am.sh \
	$(addprefix fuzz/,$(FUZZ_ALL))

# ---- campaigns ----
if ENABLE_FUZZING
fuzz: $(addprefix fuzz-run-,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do cat "$(FUZZ_WORKDIR)/$$t/summary"; done

fuzz-run-%: fuzz/fuzz_%
	@t=$*; w="$(FUZZ_WORKDIR)/$$t"; \
	mkdir -p "$$w/corpus" "$$w/crashes" || exit 1; \
	before=$$(ls "$$w/crashes" | wc -l); start=$$(date -u +%Y-%m-%dT%H:%MZ); \
	echo "fuzz $$t: $(FUZZ_SECONDS) s, log $$w/log"; \
	./fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	  -artifact_prefix="$$w/crashes/" $(FUZZ_FLAGS) "$$w/corpus" "$(srcdir)/fuzz/$$t" \
	  > "$$w/log" 2>&1; rc=$$?; \
	execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' "$$w/log" | tail -n 1); \
	last=$$(grep -E '^#[0-9]+.*cov: ' "$$w/log" | tail -n 1); \
	cov=$$(echo "$$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p'); \
	ft=$$(echo "$$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p'); \
	corp=$$(echo "$$last" | sed -n 's/.* corp: \([^ ]*\).*/\1/p'); \
	secs=$$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$$w/log" | tail -n 1); \
	crashes=$$(( $$(ls "$$w/crashes" | wc -l) - before )); \
	{ echo "fuzz $$t: started $$start, $${secs:-?} s, exit $$rc"; \
	  echo "  executions $${execs:-?}, cov $${cov:-?}, ft $${ft:-?}, corpus $${corp:-?}, new crash files $$crashes"; \
	  if test $$crashes -gt 0 || test $$rc -ne 0; then \
	    echo "  FINDING: see $$w/log and $$w/crashes/"; fi; \
	  echo "  | $$t | $$start | $${secs:-?} | $${execs:-?} | $${cov:-?}/$${ft:-?} | $${corp:-?} | |"; \
	} > "$$w/summary"; cat "$$w/summary"

fuzz-merge: $(addprefix fuzz/fuzz_,$(FUZZ_TARGETS))
	@for t in $(FUZZ_TARGETS); do \
	  w="$(FUZZ_WORKDIR)/$$t"; src="$(srcdir)/fuzz/$$t"; tmp="$$w/merged"; \
	  rm -rf "$$tmp" && mkdir -p "$$tmp" "$$w/corpus" || exit 1; \
	  ./fuzz/fuzz_$$t -merge=1 $(FUZZ_MERGE_FLAGS) $(FUZZ_FLAGS) "$$tmp" "$$src" "$$w/corpus" > "$$w/merge.log" 2>&1 || \
	    { echo "fuzz-merge $$t failed: $$w/merge.log"; exit 1; }; \
	  cp -p "$$src"/crash-* "$$tmp"/ 2>/dev/null; \
	  rm -f "$$src"/* && cp -p "$$tmp"/* "$$src"/ || exit 1; \
	  echo "fuzz-merge $$t: $$(ls "$$src" | wc -l) files, $$(du -sk "$$src" | cut -f1) KiB in $$src"; \
	done
else
fuzz fuzz-merge:
	@echo "make $@: configure with CC=clang --enable-fuzzing first"; exit 1
endif
.PHONY: fuzz fuzz-merge
