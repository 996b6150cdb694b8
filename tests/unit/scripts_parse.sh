#!/bin/sh
# scripts_parse.sh — every shell script of the tree parses (`bash -n`, or `sh -n`
# for a #!/bin/sh one): tests/**/*.sh, tests' other scripts with a shell #! line,
# bootstrap and .ci/ (when the tree has them: a dist tarball has neither).
#
# Why: a suite sources a library (tests/kernel/tcp_lib.sh and others). When the
# library does not parse, bash stops reading it at the error and carries on:
# every function defined after that point is "command not found", and a suite
# whose checks live in those functions passes without checking anything (this
# happened to four tcp suites for one day). Each library also runs `bash -n` on
# itself when sourced; this test covers every script, sourced or run, in one
# place, and proves on a broken copy that it can fail.
set -u

: "${top_srcdir:?run from make check, or set top_srcdir and top_builddir}"
: "${top_builddir:?run from make check, or set top_srcdir and top_builddir}"
work=$top_builddir/tests/unit/scratch-scripts-parse
rm -rf "$work" && mkdir -p "$work" || exit 99

. "$(dirname "$0")/t_fails.sh"

# parses FILE: 0 when FILE parses with the shell its #! line names
parses() {
	case $(head -n 1 "$1") in
	'#!/bin/sh'*) sh -n "$1" 2>"$work/err" ;;
	*) bash -n "$1" 2>"$work/err" ;;
	esac
}

# the scripts: every *.sh below tests/, the other files there whose first line
# is a shell's #!, and bootstrap and .ci/* when present
list=$work/list
{
	find "$top_srcdir/tests" -name '*.sh' -type f
	find "$top_srcdir/tests" -type f ! -name '*.sh' -perm -u+x -exec sh -c \
		'for f; do head -n 1 "$f" | grep -Eq "^#!/bin/(ba)?sh" && echo "$f"; done' sh {} +
	for f in "$top_srcdir/bootstrap" "$top_srcdir"/.ci/*; do
		[ -f "$f" ] && head -n 1 "$f" | grep -Eq '^#!/bin/(ba)?sh' && echo "$f"
	done
} | sort -u >"$list"

n=0
while IFS= read -r f; do
	n=$((n + 1))
	parses "$f" || fail "${f#"$top_srcdir"/} does not parse: $(head -n 3 "$work/err")"
done <"$list"
# a tree has dozens; a handful means the walk above went wrong
if [ "$n" -lt 20 ]; then
	fail "found $n shell scripts below $top_srcdir/tests, expected dozens"
else
	echo "ok: $n shell scripts parse"
fi

# can fail: tcp_lib.sh with an apostrophe inside its single-quoted Python (the
# defect named above) must not parse
lib=$top_srcdir/tests/kernel/tcp_lib.sh
if [ -f "$lib" ]; then
	sed 's/^PYCHECK_POST=.*/&\n# the file'"'"'s end/' "$lib" >"$work/broken.sh"
	if parses "$work/broken.sh"; then
		fail "a copy of tcp_lib.sh with an unbalanced quote parses: this test cannot fail"
	else
		echo "ok: a copy of tcp_lib.sh with an unbalanced quote is refused"
	fi
fi

rm -rf "$work"
t_fails_end scripts_parse
