# tests/sanitizers.mk — `make check-sanitizers`: every test of `make check` —
# L0 and L1 (unit/, stack/, pools/, run/), the fuzz corpus replays (fuzz/) and
# the L2 kernel suites (kernel/: root and namespaces, skipped (77) without them
# as in make check) — in a build configured with --enable-sanitizers (ASan +
# UBSan on everything we compile: liblcp, lcpipe, libstk, the plugins, the test
# programs and test plugins). Not bench. Each test runs under tests/san-run.sh
# (a .sh suite: san-run.sh running tests/sh_test.sh, as in make check),
# which fails it on any AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer
# report (LSan suppressions: tests/lsan.supp, glibc and OpenSSL only). .ci/run
# builds this in _build-san/ and counts the results; see doc/reliability.md,
# section 4. Included by tests/Makefile.am.
#
# run/ab.sh and run/ab_pairs.sh require every run of `lcpipe ab` to deliver
# messages; their 0.5 s runs are too short for the demo's TCP and WebSocket
# handshakes under ASan on a loaded machine, so they run 2 s each here
# (LCP_TEST_AB_DURATION).
san_tests = $(TESTS)
EXTRA_DIST += san-run.sh lsan.supp

check-sanitizers:
if ENABLE_SANITIZERS
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(san_tests)' \
	  LOG_COMPILER='$(SHELL) $(abs_srcdir)/san-run.sh' \
	  SH_LOG_COMPILER='$(SHELL) $(abs_srcdir)/san-run.sh bash $(abs_srcdir)/sh_test.sh' \
	  LCP_TEST_AB_DURATION=2
else
	@echo "check-sanitizers: this build has no sanitizers; configure it with --enable-sanitizers" >&2; \
	exit 1
endif
.PHONY: check-sanitizers
