# tests/valgrind.mk — `make check-valgrind`: the L0 Check suites that need no EAL
# (unit/test_opt, test_loader, test_config, test_metrics_json, every stack/
# suite) and the plugin harness suites (harness/: one stage driven on the test's
# thread, EAL --no-huge with no lcore launched) under valgrind memcheck: a memory error or a definitely lost block in
# any test fails it. Check's fork mode is kept (one child per test, which
# valgrind follows without --trace-children): each child's leak check at its
# exit covers that test alone, and a finding shows in the log as "Early exit
# with return value 99" against the test that made it.
#
# Each suite gets automake's test-driver with its own log and .trs in
# valgrind/<suite>.{log,trs}, so .ci/run counts and labels them beside the
# normal results. Suites run in parallel with make -j. Not the other EAL suites
# (test_counters_modules, pools/, run/): see doc/reliability.md, section 4.
# Included by tests/Makefile.am, after stack.mk (stack_tests) and harness.mk
# (harness_tests).
vg_tests = unit/test_opt unit/test_loader unit/test_config unit/test_metrics_json \
	$(stack_tests) $(harness_tests)
vg_logs = $(vg_tests:%=valgrind/%.log)
VALGRIND_FLAGS = --quiet --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --error-exitcode=99 --num-callers=30

check-valgrind:
	@if test -z "$(VALGRIND)"; then \
	  echo "check-valgrind: valgrind not found (configure looks for it on PATH)" >&2; exit 1; fi
	rm -rf valgrind
	$(MAKE) $(AM_MAKEFLAGS) $(vg_tests) $(check_LTLIBRARIES) $(check_DATA)
	$(MAKE) $(AM_MAKEFLAGS) $(vg_logs)
	@pass=0; fail=0; for t in $(vg_tests); do \
	  if grep -q '^:test-result: PASS' valgrind/$$t.trs; then pass=$$((pass + 1)); \
	  else fail=$$((fail + 1)); echo "check-valgrind: FAIL: $$t (valgrind/$$t.log)"; fi; \
	done; \
	echo "check-valgrind: $$pass passed, $$fail failed"; test $$fail -eq 0

# one suite: CK_TIMEOUT_MULTIPLIER for the ~20-50x slowdown of memcheck
valgrind/%.log: %$(EXEEXT)
	@$(MKDIR_P) $(@D)
	@$(AM_TESTS_ENVIRONMENT) $(TESTS_ENVIRONMENT) CK_TIMEOUT_MULTIPLIER=20; export CK_TIMEOUT_MULTIPLIER; \
	$(SHELL) $(top_srcdir)/build-aux/test-driver --test-name valgrind/$* \
	  --log-file $@ --trs-file valgrind/$*.trs --color-tests no \
	  --enable-hard-errors yes --expect-failure no -- \
	  $(LIBTOOL) --mode=execute $(VALGRIND) $(VALGRIND_FLAGS) ./$*$(EXEEXT)

clean-local: clean-local-valgrind
clean-local-valgrind:
	-rm -rf valgrind
.PHONY: check-valgrind clean-local-valgrind
