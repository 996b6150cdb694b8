#!/bin/bash
# tests/sh_test.sh — runs one shell suite of `make check` (SH_LOG_COMPILER in
# tests/Makefile.am) and fails a suite that passed while the shell reported a
# command it could not find.
#
# Why: a suite's checks are shell functions, most of them from a sourced
# library. A call to one that does not exist (a typo, a library that stopped
# parsing half way, a helper renamed in one place) prints "command not found"
# and returns 127, which an `if` or `||` takes as an ordinary failed command:
# the check is skipped and the suite passes. tests/unit/scripts_parse.sh
# catches a library that does not parse; this catches the rest. And a suite
# that exits 0 without a single passed check ("ok: ..." or "PASS: ...", the
# lines every suite prints per check) fails too: it checked nothing.
#
# The suite runs with its output where automake sends it (its .log), read back
# from where it started; when that is not a file (a terminal, a pipe) it goes
# through a temporary file. Exit codes pass through (77 skip, 99 hard error),
# except 0 with such a line or without a passed check, which becomes 1.
set -u

# bash: "x.sh: line 12: name: command not found"; dash: "x.sh: 12: name: not found"
pat=': line [0-9]+: .*: command not found$|: [0-9]+: [^ ]+: not found$'
okpat='^(ok|PASS): '

# src: where the suite's output is; off: the byte it starts at
out=$(readlink "/proc/$$/fd/1" 2>/dev/null)
tmp=""
if [ -n "$out" ] && [ -f "$out" ]; then
	src=$out off=$(stat -c %s "$out")
	"$@"
	rc=$?
else
	tmp=$(mktemp) || exit 99
	src=$tmp off=0
	"$@" >"$tmp" 2>&1
	rc=$?
	cat "$tmp"
fi
found=$(tail -c "+$((off + 1))" "$src" | grep -E "$pat" | head -n 5)
checks=$(tail -c "+$((off + 1))" "$src" | grep -cE "$okpat")
[ -z "$tmp" ] || rm -f "$tmp"
if [ "$rc" = 0 ] && [ -n "$found" ]; then
	echo "FAIL: $1 passed, but called commands that do not exist (their checks did not run):"
	printf '%s\n' "$found"
	exit 1
fi
if [ "$rc" = 0 ] && [ "$checks" = 0 ]; then
	echo "FAIL: $1 passed without a single passed check (no \"ok: \" or \"PASS: \" line)"
	exit 1
fi
exit "$rc"
