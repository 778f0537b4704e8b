#!/bin/sh
# Every installed program has --help, --version and a man page with an EXIT STATUS
# section; every page renders without groff warnings; nfskeys(1) documents each command,
# global option and exit code of the tool; every environment variable the code reads
# and every configuration section and key nfskeys knows is documented somewhere in man/.
. "$top_srcdir/tests/harness/lib.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL
eval "$(make -s -C "$top_builddir" print-config)"
man="$top_srcdir/man"

# pages: listed in the build, rendering cleanly
for f in "$man"/*.[1-8]; do
	p=man/$(basename "$f")
	case " $mans " in *" $p "*) ok "$p is installed (listed in man/Makemodule.am)" ;;
	*) not_ok "$p is installed (listed in man/Makemodule.am)" ;; esac
done
if command -v groff >/dev/null 2>&1; then
	for p in $mans; do
		w=$(groff -man -ww -z "$top_srcdir/$p" 2>&1)
		check_eq "$p renders without groff warnings" "" "$w"
	done
else
	skip "groff not installed (apt-get install groff-base)"
fi

# programs: --help, --version, a page with EXIT STATUS
for prog in $programs; do
	name=$(basename "$prog")
	"$top_builddir/$prog" --help >"$T_TMP/help" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -qi 'usage' "$T_TMP/help"; then ok "$name --help"; else
		not_ok "$name --help (exit $rc)"; head -5 "$T_TMP/help" | sed 's/^/# /'; fi
	check_contains "$name --version" "$version" "$("$top_builddir/$prog" --version 2>&1)"
	page=
	for p in $mans; do
		case $p in man/"$name".[18]) page=$p ;; esac
	done
	if [ -n "$page" ]; then
		ok "$name has a man page ($page)"
		if grep -q '^\.SH "\{0,1\}EXIT STATUS' "$top_srcdir/$page"; then
			ok "$page documents exit codes"
		else not_ok "$page documents exit codes (no EXIT STATUS section)"; fi
	else
		not_ok "$name has a man page (man/$name.1 or .8)"
	fi
done

# nfskeys(1) against the tool itself
page="$man/nfskeys.1"
# Each list below is read from the code; an empty read would check nothing, so each one
# must find at least a few items (extracted N MIN WHAT).
extracted() { check "$3: $1 found (at least $2)" test "$1" -ge "$2"; }
missing=
n=0
for c in $("$NFSKEYS" help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p'); do
	n=$((n + 1))
	if grep -Eq "^\.(B|BR|BI) $c( |$)" "$page" || ls "$man"/nfskeys-"$c".[18] >/dev/null 2>&1; then
		:
	else missing="$missing $c"; fi
done
check_eq "every command of 'nfskeys help' is documented" "" "$missing"
extracted $n 5 "commands listed by 'nfskeys help'"
missing=
n=0
for o in $("$NFSKEYS" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
	n=$((n + 1))
	grep -q -- "$(echo "$o" | sed 's/-/\\\\-/g')" "$page" || missing="$missing $o"
done
check_eq "every global option of nfskeys --help is in nfskeys(1)" "" "$missing"
extracted $n 3 "global options in nfskeys --help"
missing=
n=0
for e in $(sed -n 's/.*EXIT_[A-Z_]* = \([0-9]*\).*/\1/p' "$top_srcdir/tools/nfskeys-tool.h"); do
	n=$((n + 1))
	sed -n '/^\.SH EXIT STATUS/,/^\.SH/p' "$page" | grep -q "^\.B $e\$" || missing="$missing $e"
done
check_eq "every exit code of nfskeys-tool.h is in nfskeys(1)" "" "$missing"
extracted $n 3 "exit codes in tools/nfskeys-tool.h"

# environment variables and configuration vocabulary
missing=
n=0
for v in $(cat "$top_srcdir"/libnfskeys/*.c "$top_srcdir"/common/*.c "$top_srcdir"/tools/*.c \
	"$top_srcdir"/plugins/*.c "$top_srcdir"/idmapd/*.c "$top_srcdir"/attrd/*.c 2>/dev/null |
	grep -o 'getenv("NFSKEYS_[A-Z_]*")' | sed 's/.*("\(.*\)")/\1/' | sort -u); do
	n=$((n + 1))
	grep -q "$v" "$man"/*.[1-8] || missing="$missing $v"
done
check_eq "every NFSKEYS_* variable the code reads is documented" "" "$missing"
extracted $n 2 "NFSKEYS_* variables the code reads"
missing=
sed -n 's/^[[:space:]]*{ "\([A-Za-z-]*\)", "\([^"]*\)" },.*/\1 \2/p' \
	"$top_srcdir/libnfskeys/conf-schema.c" >"$T_TMP/schema"
while read -r sec key; do
	grep -q "\[$sec\]" "$man"/*.[1-8] || missing="$missing [$sec]"
	[ "$key" = "*" ] || grep -q "^\.BI\{0,1\} \"\{0,1\}$key" "$man"/*.[1-8] || missing="$missing $sec.$key"
done <"$T_TMP/schema"
check_eq "every configuration section and key in conf-schema.c is documented" "" \
	"$(echo "$missing" | tr ' ' '\n' | sort -u | tr '\n' ' ' | sed 's/^ *//; s/ *$//')"
extracted "$(wc -l <"$T_TMP/schema")" 10 "section/key pairs in libnfskeys/conf-schema.c"
