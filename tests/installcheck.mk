# tests/installcheck.mk — included by tests/Makefile.am (after its EXTRA_DIST =).
# `make installcheck` (and so `make distcheck`, with its temporary prefix): build
# doc/examples/sink_count out of tree against the installed SDK and run it with
# the installed lcpipe. Exit 77 from the script (a prerequisite missing) is a
# skip: it prints "installcheck: SKIP ..." and does not fail make; .ci/run counts
# it as skipped.
EXTRA_DIST += installcheck/run.sh

installcheck-local:
	@rc=0; \
	top_srcdir='$(abs_top_srcdir)' PYTHON3='$(PYTHON3)' CC='$(CC)' \
	LCP_BINDIR='$(bindir)' LCP_LIBDIR='$(libdir)' LCP_INCLUDEDIR='$(includedir)' \
	LCP_MANDIR='$(mandir)' LCP_DOCDIR='$(docdir)' LCP_UNITDIR='$(systemdsystemunitdir)' \
	LCP_PLUGINDIR='$(plugindir)' \
	  $(SHELL) '$(srcdir)/installcheck/run.sh' '$(prefix)' || rc=$$?; \
	if test $$rc -eq 77; then rc=0; \
	elif test $$rc -ne 0; then echo "installcheck: FAIL (run.sh exited $$rc)"; fi; \
	exit $$rc
