# tests/check_lib.sh — sourced by the stand-alone checks outside `make check`
# (installcheck/run.sh, newcomer/run.sh), after they set CHECK_NAME.
#
#   say TEXT    "CHECK_NAME: TEXT" on stdout
#   skip WHY    say "SKIP: WHY", exit 77 (a prerequisite is missing)
#   fail WHY    say "FAIL: WHY" on stderr, exit 1
#   $py         the Python 3 to run: $PYTHON3, else /usr/bin/python3, else python3

say() { echo "$CHECK_NAME: $*"; }
skip() {
	say "SKIP: $*"
	exit 77
}
fail() {
	say "FAIL: $*" >&2
	exit 1
}

py=${PYTHON3:-}
[ -n "$py" ] || { [ -x /usr/bin/python3 ] && py=/usr/bin/python3; } || py=python3
