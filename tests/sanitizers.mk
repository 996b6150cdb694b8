# tests/sanitizers.mk — `make check-sanitizers`: the L0 and L1 suites (unit/,
# stack/, pools/, run/) and the fuzz corpus replays (fuzz/) in a build configured with --enable-sanitizers (ASan +
# UBSan on everything we compile: liblcp, lcpipe, libstk, the plugins, the test
# programs and test plugins). Not the L2 suites (kernel/: namespaces, real peers)
# nor bench. Each test runs under tests/san-run.sh, which fails it on any
# AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer report (LSan
# suppressions: tests/lsan.supp, glibc and OpenSSL only). .ci/run builds this in
# _build-san/ and counts the results; see doc/reliability.md, section 4.
# Included by tests/Makefile.am.
#
# Left out: run/ab.sh and run/ab_pairs.sh, which compare short (0.5 s) runs and
# require every run to deliver messages; ASan's 2-5x slowdown on a loaded machine
# leaves some runs with none (seen: the demo's TCP + WebSocket handshake not done
# in 0.5 s), so they would fail for time, not memory. The pipelines they run are
# run by the other run/ tests.
san_tests = $(filter-out run/ab.sh run/ab_pairs.sh,$(filter unit/% stack/% pools/% run/% fuzz/%,$(TESTS)))
EXTRA_DIST += san-run.sh lsan.supp

check-sanitizers:
if ENABLE_SANITIZERS
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(san_tests)' \
	  LOG_COMPILER='$(SHELL) $(abs_srcdir)/san-run.sh'
else
	@echo "check-sanitizers: this build has no sanitizers; configure it with --enable-sanitizers" >&2; \
	exit 1
endif
.PHONY: check-sanitizers
