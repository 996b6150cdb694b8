# tests/unit.mk — L0, no EAL: the option walker, the plugin loader's refusals,
# the config corpus and the generated docs/schema. Included by tests/Makefile.am.
#
#   unit/test_opt         Check: lcp_opt_apply / lcp_opt_table_check, exact messages,
#                         and the broken tables the check once let through
#   unit/test_loader      Check: lcp_elf_probe + lcp_registry_* on tests/plugins/*,
#                         refusal messages, and that no refused-from-header file
#                         ever ran its constructor
#   unit/test_config      Check: lcp_cfg_load through the C API (default config =
#                         conf/default.json, plugin_path, EAL override)
#   unit/test_metrics_json Check: the metrics stage's path walk (plugins/common/
#                         metrics_json.c) on venue message shapes and broken input
#   unit/loader_cli.sh    the same refusals through `lcpipe list-plugins` / `check`
#   unit/conf_corpus.sh   tests/conf-bad/*.json -> exact `error:` lines (*.expect),
#                         exit 78; tests/conf-good/*.json -> exit 0
#   unit/doc_drift.sh     doc/plugins.md and conf/lcpipe.schema.json equal what
#                         `lcpipe describe` generates; conf/*.json and
#                         tests/conf-good/*.json valid for the schema and `check`
#   unit/layout.py        the source layout: no C file in framework/, plugins/,
#                         stack/ over 900 lines, no plugin including another's
#                         files, no include cycle among framework modules, no
#                         DPDK in stack/
#   unit/scripts_parse.sh every shell script of the tree parses (a library that
#                         does not is read up to its error: its checks vanish)
#
# Test-only plugins (never installed; -rpath /nowhere makes libtool build a .so):
#   plugins/hdr/.libs     refused from the ELF header     (plugins/broken.c)
#   plugins/dup/.libs     two files, one name, one dir    (plugins/broken.c)
#   plugins/open/.libs    refused after dlopen            (plugins/broken.c)
#   plugins/good/.libs    valid stubs for the corpus      (plugins/good.c)
#   plugins/shadow/.libs  a second "test_sink"            (plugins/good.c)
#   plugins/bugs/.libs    once accepted, now refused      (plugins/broken.c)
#   plugins/notso/        not shared objects at all: an ET_EXEC, a PIE, an ET_REL,
#                         an ar archive, text, empty, a directory, a dangling link

unit_plugin_cppflags = -I$(top_srcdir)/framework/include -I$(srcdir)/plugins
unit_plugin_cflags = $(AM_CFLAGS_COMMON) -fvisibility=hidden
unit_plugin_ldflags = -module -avoid-version -shared -rpath /nowhere \
	-export-symbols-regex '^lcp_plugin_descriptor$$' $(SAN_LDFLAGS)

# the cases of plugins/hdr, dup, bugs, open, good and shadow: one line each in
# plugins/list, expanded by plugins/gen-am.sh
include $(srcdir)/plugins/plugins.am
$(srcdir)/plugins/plugins.am: $(srcdir)/plugins/list $(srcdir)/plugins/gen-am.sh
	$(AM_V_GEN)$(SHELL) $(srcdir)/plugins/gen-am.sh $(srcdir)/plugins/list > $@.tmp && mv $@.tmp $@
EXTRA_DIST += plugins/list plugins/gen-am.sh

# ---- plugins/notso: files named *.so that are not shared objects ----
unit_notso = plugins/notso/exec.so plugins/notso/pie.so plugins/notso/object.so \
	plugins/notso/archive.so plugins/notso/text.so plugins/notso/empty.so \
	plugins/notso/dir.so plugins/notso/dangling.so
unit_notso_cc = $(CC) $(unit_plugin_cppflags) $(AM_CFLAGS_COMMON) $(CFLAGS) -fvisibility=hidden

plugins/notso/exec.so: plugins/broken.c plugins/marker.h plugins/stubs.h $(top_srcdir)/framework/include/lcp/plugin.h
	@$(MKDIR_P) plugins/notso
	$(AM_V_CC)$(unit_notso_cc) -DBROKEN_EXEC -fno-pie -no-pie -rdynamic -o $@ $(srcdir)/plugins/broken.c
plugins/notso/pie.so: plugins/broken.c plugins/marker.h plugins/stubs.h $(top_srcdir)/framework/include/lcp/plugin.h
	@$(MKDIR_P) plugins/notso
	$(AM_V_CC)$(unit_notso_cc) -DBROKEN_PIE -fpie -pie -rdynamic -o $@ $(srcdir)/plugins/broken.c
plugins/notso/object.so: plugins/broken.c plugins/marker.h plugins/stubs.h $(top_srcdir)/framework/include/lcp/plugin.h
	@$(MKDIR_P) plugins/notso
	$(AM_V_CC)$(unit_notso_cc) -DBROKEN_OBJECT -fpic -c -o $@ $(srcdir)/plugins/broken.c
plugins/notso/archive.so: plugins/notso/object.so
	$(AM_V_GEN)rm -f $@ && $(AR) cr $@ plugins/notso/object.so
plugins/notso/text.so:
	@$(MKDIR_P) plugins/notso
	$(AM_V_GEN)echo "this is a text file, not a shared object" > $@
plugins/notso/empty.so:
	@$(MKDIR_P) plugins/notso
	$(AM_V_GEN): > $@
plugins/notso/dir.so:
	$(AM_V_GEN)$(MKDIR_P) $@
plugins/notso/dangling.so:
	@$(MKDIR_P) plugins/notso
	$(AM_V_GEN)rm -f $@ && ln -s no-such-file.so $@

check_DATA = $(unit_notso)
EXTRA_DIST += plugins/broken.c plugins/good.c plugins/marker.h plugins/stubs.h

# ---- Check suites ----
unit_check_cppflags = -I$(top_srcdir)/framework -I$(top_builddir)/framework \
	-I$(top_srcdir)/framework/include \
	-I$(top_builddir) -I$(srcdir)/plugins $(JANSSON_CFLAGS) $(CHECK_CFLAGS) \
	-DTEST_BUILDDIR='"$(abs_builddir)"' -DTEST_TOP_SRCDIR='"$(abs_top_srcdir)"' \
	-DTEST_TOP_BUILDDIR='"$(abs_top_builddir)"'
unit_check_ldadd = $(top_builddir)/framework/liblcp.la $(JANSSON_LIBS) $(CHECK_LIBS)

if HAVE_CHECK
check_PROGRAMS += unit/test_opt unit/test_loader unit/test_config
TESTS += unit/test_opt unit/test_loader unit/test_config
XFAIL_TESTS =
endif
unit_test_opt_SOURCES = unit/test_opt.c
unit_test_opt_CPPFLAGS = $(unit_check_cppflags)
unit_test_opt_CFLAGS = $(AM_CFLAGS_COMMON)
unit_test_opt_LDADD = $(unit_check_ldadd)
unit_test_loader_SOURCES = unit/test_loader.c unit/testutil.h
unit_test_loader_CPPFLAGS = $(unit_check_cppflags)
unit_test_loader_CFLAGS = $(AM_CFLAGS_COMMON)
unit_test_loader_LDADD = $(unit_check_ldadd)
unit_test_config_SOURCES = unit/test_config.c unit/testutil.h
unit_test_config_CPPFLAGS = $(unit_check_cppflags)
unit_test_config_CFLAGS = $(AM_CFLAGS_COMMON)
unit_test_config_LDADD = $(unit_check_ldadd)
# the metrics stage's path walk: the plugin's convenience library (no DPDK in it)
if HAVE_CHECK
check_PROGRAMS += unit/test_metrics_json
TESTS += unit/test_metrics_json
endif
unit_test_metrics_json_SOURCES = unit/test_metrics_json.c
unit_test_metrics_json_CPPFLAGS = -I$(top_srcdir)/plugins/common -I$(top_srcdir)/plugins/metrics $(CHECK_CFLAGS)
unit_test_metrics_json_CFLAGS = $(AM_CFLAGS_COMMON)
unit_test_metrics_json_LDADD = $(top_builddir)/plugins/common/libcommon.la $(CHECK_LIBS)
# ---- shell tests ----
dist_check_SCRIPTS += unit/loader_cli.sh unit/conf_corpus.sh unit/doc_drift.sh unit/layout.py \
	unit/scripts_parse.sh
EXTRA_DIST += unit/t_fails.sh
TESTS += unit/loader_cli.sh unit/conf_corpus.sh unit/doc_drift.sh unit/layout.py \
	unit/scripts_parse.sh

# corpus and generated files the tests read (make distcheck runs from the tarball)
EXTRA_DIST += conf-bad conf-good unit/README.md \
	$(top_srcdir)/doc/plugins.md

# refresh the generated, committed files from the build tree's plugins (then review
# the diff and commit it; unit/doc_drift.sh fails until they match)
update-generated:
	cd $(top_builddir) && $(MAKE) $(AM_MAKEFLAGS) all
	unset LCP_PLUGIN_PATH; \
	$(top_builddir)/framework/lcpipe describe --markdown > $(top_srcdir)/doc/plugins.md.tmp && \
	mv $(top_srcdir)/doc/plugins.md.tmp $(top_srcdir)/doc/plugins.md && \
	$(top_builddir)/framework/lcpipe describe --schema > $(top_srcdir)/conf/lcpipe.schema.json.tmp && \
	mv $(top_srcdir)/conf/lcpipe.schema.json.tmp $(top_srcdir)/conf/lcpipe.schema.json && \
	$(top_builddir)/framework/lcpipe describe --man1 > $(top_srcdir)/doc/lcpipe.1.tmp && \
	mv $(top_srcdir)/doc/lcpipe.1.tmp $(top_srcdir)/doc/lcpipe.1 && \
	$(top_builddir)/framework/lcpipe describe --man5 > $(top_srcdir)/doc/lcpipe.json.5.tmp && \
	mv $(top_srcdir)/doc/lcpipe.json.5.tmp $(top_srcdir)/doc/lcpipe.json.5
.PHONY: update-generated

clean-local: clean-local-unit
clean-local-unit:
	-rm -rf plugins/notso unit/scratch-*
.PHONY: clean-local-unit

# ---- counters strategies (plugins/counters_*), with EAL ----
#   unit/test_counters_modules  Check: the four counters modules through the
#                         registry and the option walker: two worker lcores
#                         writing while the main lcore reads (monotonic, bounded,
#                         exact after flush), counters_batched's publishing rules,
#                         counters_sharded's option. Unlike the suites above it
#                         initialises EAL (--no-huge, --lcores=0@0,1@1,2@0) in each
#                         forked test.
if HAVE_CHECK
check_PROGRAMS += unit/test_counters_modules
TESTS += unit/test_counters_modules
endif
unit_test_counters_modules_SOURCES = unit/test_counters_modules.c unit/testutil.h
unit_test_counters_modules_CPPFLAGS = $(unit_check_cppflags)
unit_test_counters_modules_CFLAGS = $(AM_CFLAGS_COMMON) $(DPDK_CFLAGS)
unit_test_counters_modules_LDADD = $(unit_check_ldadd) $(DPDK_LIBS)
