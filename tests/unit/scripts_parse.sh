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

# can fail: tcp_lib.sh with an apostrophe inside a single-quoted string (the
# defect named above) must not parse
lib=$top_srcdir/tests/kernel/tcp_lib.sh
if [ -f "$lib" ]; then
	{ cat "$lib"; echo "say 'the file's end'"; } >"$work/broken.sh"
	if parses "$work/broken.sh"; then
		fail "a copy of tcp_lib.sh with an unbalanced quote parses: this test cannot fail"
	else
		echo "ok: a copy of tcp_lib.sh with an unbalanced quote is refused"
	fi
fi

# tests/sh_test.sh (SH_LOG_COMPILER): a suite that passes after "command not
# found" fails; a clean pass and a skip pass through
runner=$top_srcdir/tests/sh_test.sh
printf '#!/bin/bash\necho "ok: one"\nno_such_check_fn 1 || true\nexit 0\n' >"$work/missing.sh"
printf '#!/bin/sh\necho "ok: one"\nno_such_check_fn 1 || true\nexit 0\n' >"$work/missing_sh.sh"
printf '#!/bin/bash\necho "ok: fine"\nexit 0\n' >"$work/fine.sh"
printf '#!/bin/bash\necho "PASS: fine"\nexit 0\n' >"$work/fine_pass.sh"
printf '#!/bin/bash\necho "nothing checked"\nexit 0\n' >"$work/nocheck.sh"
printf '#!/bin/bash\necho "SKIP: no tool"\nexit 77\n' >"$work/skip.sh"
chmod +x "$work"/*.sh
# NAME:EXIT:WHY, WHY the words of sh_test.sh's FAIL line ("-": none)
for t in missing:1:do.not.exist missing_sh:1:do.not.exist fine:0:- fine_pass:0:- \
	nocheck:1:without.a.single skip:77:-; do
	name=${t%%:*} want=${t#*:} why=${t##*:}
	want=${want%:*}
	bash "$runner" "$work/$name.sh" >"$work/$name.log" 2>&1
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "sh_test.sh exits $rc for $name.sh, not $want: $(tail -n 3 "$work/$name.log")"
	elif [ "$why" != - ] && ! grep -q "^FAIL: .*$why" "$work/$name.log"; then
		fail "sh_test.sh exits $want for $name.sh, but not for \"$why\": $(tail -n 3 "$work/$name.log")"
	else
		echo "ok: sh_test.sh exits $want for $name.sh"
	fi
	# the same with its output in a pipe, not a file
	rc=$(bash -c 'bash "$1" "$2" 2>&1 | cat >/dev/null; echo "${PIPESTATUS[0]}"' sh "$runner" "$work/$name.sh")
	[ "$rc" = "$want" ] || fail "sh_test.sh exits $rc for $name.sh into a pipe, not $want"
done

rm -rf "$work"
t_fails_end scripts_parse
