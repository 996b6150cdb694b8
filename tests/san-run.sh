#!/bin/sh
# tests/san-run.sh — the LOG_COMPILER of `make check-sanitizers` (tests/sanitizers.mk):
# run one test (a Check program or a shell script, with its arguments) in a
# --enable-sanitizers build so that any AddressSanitizer, LeakSanitizer or
# UndefinedBehaviorSanitizer report fails it, whatever the test does with the
# exit status of the process that hit it (a script that expects lcpipe to exit
# 78, a Check fork that dies early, a server killed at the end).
#
# Every sanitized process writes its reports to files in a directory of its own
# (log_path); when the test is over, any report there is copied into the test's
# log and the test fails (exit 1), also when the test itself passed or skipped.
# Options the caller sets in ASAN_OPTIONS / UBSAN_OPTIONS / LSAN_OPTIONS come
# after ours (the last setting of a flag wins), except log_path.
#
# LSAN_OPTIONS use_tls=0: with gcc 12's libasan on glibc 2.36, LeakSanitizer
# walks the dynamic TLS blocks of threads and dies ("Tracer caught signal 11",
# "LeakSanitizer has encountered a fatal error") in every process that has EAL
# threads and dlopen'ed TLS users (DPDK's drivers, our plugins). Not scanning TLS
# only adds reports (a block reachable only from TLS looks lost): the glibc ones
# this causes are listed in tests/lsan.supp; it never hides a leak.
set -u
if [ $# -eq 0 ]; then
	echo "usage: san-run.sh TEST [ARG...]" >&2
	exit 99
fi
srcdir=$(cd "$(dirname "$0")" && pwd)
rep=$(mktemp -d "${TMPDIR:-/tmp}/lcp-san.XXXXXX") || exit 99
trap 'rm -rf "$rep"' EXIT
trap 'exit 1' HUP INT TERM

ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:fast_unwind_on_malloc=0:detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}:log_path=$rep/asan"
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}:log_path=$rep/ubsan"
LSAN_OPTIONS="use_tls=0:suppressions=$srcdir/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS

"$@"
rc=$?

found=0
for f in "$rep"/*; do
	[ -f "$f" ] || continue
	found=$((found + 1))
	echo "==== sanitizer report $(basename "$f") (test exit status $rc) ====" >&2
	cat "$f" >&2
done
if [ $found -gt 0 ]; then
	echo "san-run.sh: FAIL: $found sanitizer report(s) from $*" >&2
	exit 1
fi
exit $rc
