# tests/newcomer.mk — included by tests/Makefile.am (after its EXTRA_DIST =).
# `make -C tests check-newcomer`: in a copy of this git checkout, add a sink and a
# counters module as one folder and one line each in plugins/Makefile.am, build
# with a plain make, list, run and install them (newcomer/run.sh). About 80 s:
# it builds the whole tree once. Not part of make check (it bootstraps a second
# tree); .ci/run runs it as one test. Exit 77 from the script (not a git
# checkout, a tool missing) is a skip: "newcomer: SKIP ..." and make succeeds.
EXTRA_DIST += newcomer/run.sh

check-newcomer:
	@rc=0; \
	top_srcdir='$(abs_top_srcdir)' PYTHON3='$(PYTHON3)' \
	  $(SHELL) '$(srcdir)/newcomer/run.sh' || rc=$$?; \
	if test $$rc -eq 77; then rc=0; \
	elif test $$rc -ne 0; then echo "newcomer: FAIL (run.sh exited $$rc)"; fi; \
	exit $$rc
.PHONY: check-newcomer
