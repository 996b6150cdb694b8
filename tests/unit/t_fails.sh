# t_fails.sh — sourced by unit/loader_cli.sh and unit/doc_drift.sh: their
# count of failed checks (a check that fails does not stop the ones after it)
#   fail WHAT        prints "FAIL: WHAT", one more failure in $fails
#   t_fails_end NAME a blank line; then, when any check failed,
#                    "NAME: N failure(s)" and exit 1
# shellcheck shell=sh
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
t_fails_end() {
	echo
	if [ "$fails" -gt 0 ]; then
		echo "$1: $fails failure(s)"
		exit 1
	fi
}
