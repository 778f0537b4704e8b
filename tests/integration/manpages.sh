#!/bin/sh
# Every installed program has --help, --version and a man page with an EXIT STATUS
# section; every page renders without groff warnings; nfskeys(1) documents each command,
# global option and exit code of the tool; every environment variable the code reads
# and every configuration section and key nfskeys knows is documented somewhere in man/.
. "$top_srcdir/tests/harness/lib.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL
eval "$(make -s -C "$top_builddir" print-config)"
# extracted N MIN WHAT: a list read from the code or the build must not be empty
extracted() { check "$3: $1 found (at least $2)" test "$1" -ge "$2"; }

# The pages as built (man/NAME.in with the version and date put in)
man="$top_builddir/man"

# pages: listed in the build, rendering cleanly
for f in "$top_srcdir"/man/*.[1-8].in; do
	p=man/$(basename "$f" .in)
	case " $mans " in *" $p "*) ok "$p is installed (listed in man/Makemodule.am)" ;;
	*) not_ok "$p is installed (listed in man/Makemodule.am)" ;; esac
done
if command -v groff >/dev/null 2>&1; then
	for p in $mans; do
		w=$(groff -man -ww -z "$top_builddir/$p" 2>&1)
		check_eq "$p renders without groff warnings" "" "$w"
	done
else
	skip "groff not installed (apt-get install groff-base)"
fi

# Rendered unjustified (.ad l): no two spaces between a synopsis' bracketed options (groff takes "...]" at a
# line's end for a sentence's end), and nfskeys(1)'s idmapd entry has its whole synopsis
# in the tag, the description after it.
if command -v groff >/dev/null 2>&1; then
	for p in $mans; do
		check_eq "$p: no double space between bracketed options" "" \
			"$(sed 's/^\.TH .*/&\n.ad l/' "$top_builddir/$p" |
				groff -man -Tutf8 -P-cbou -rLL=200n 2>/dev/null | grep -E '\] {2,}\[')"
	done
	groff -man -Tutf8 -P-cbou -rLL=200n "$man/nfskeys.1" 2>/dev/null >"$T_TMP/nfskeys.txt"
	check_eq "nfskeys(1): the idmapd tag is one line, description below" \
		"idmapd [--socket PATH] [--timeout SECONDS] ping|lookup|flush|reload|recent|stats|namespaces" \
		"$(sed -n 's/^ *\(idmapd \[.*\)/\1/p' "$T_TMP/nfskeys.txt" | sed 's/ *$//')"
fi

# The installed pages name the version of the programs they come with, and a date
# (configure's, not a placeholder).  The version is the one the programs print.
prog_version=$("$NFSKEYS" --version | sed -n '1s/^nfskeys //p')
check_eq "nfskeys --version is the package's version" "$version" "$prog_version"
dest="$T_TMP/inst"
if make -C "$top_builddir" install-man DESTDIR="$dest" >"$T_TMP/install-man.log" 2>&1; then
	ok "make install-man DESTDIR=..."
else
	not_ok "make install-man DESTDIR=..."; tail -5 "$T_TMP/install-man.log" | sed 's/^/# /'
fi
n=0
for p in $mans; do
	f=$dest$mandir/man${p##*.}/$(basename "$p")
	if [ ! -f "$f" ]; then
		not_ok "$(basename "$p") is installed in $mandir"
		continue
	fi
	n=$((n + 1))
	th=$(sed -n '/^\.TH /{p;q}' "$f")
	check_eq "installed $(basename "$p"): .TH names nfskeys $prog_version" "nfskeys $prog_version" \
		"$(printf '%s\n' "$th" | sed -n 's/^\.TH [^ ]* [0-9] "[^"]*" "\([^"]*\)".*/\1/p')"
	check "installed $(basename "$p"): .TH has a date (YYYY-MM-DD) and no placeholder left" \
		sh -c 'printf "%s\n" "$1" | grep -v @ | grep -Eq "^\.TH [^ ]+ [0-9] \"[0-9]{4}-[0-9]{2}-[0-9]{2}\" "' \
		- "$th"
	if command -v groff >/dev/null 2>&1; then
		check_eq "installed $(basename "$p") renders without groff warnings" "" \
			"$(groff -man -ww -z "$f" 2>&1)"
	fi
done
extracted $n 10 "installed man pages"

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
		if grep -q '^\.SH "\{0,1\}EXIT STATUS' "$top_builddir/$page"; then
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
for e in $(sed -n 's/.*EXIT_[A-Z_]* = \([0-9]*\).*/\1/p' "$top_srcdir/tools/nfskeys/nfskeys-tool.h"); do
	n=$((n + 1))
	sed -n '/^\.SH EXIT STATUS/,/^\.SH/p' "$page" | grep -q "^\.B $e\$" || missing="$missing $e"
done
check_eq "every exit code of nfskeys-tool.h is in nfskeys(1)" "" "$missing"
extracted $n 3 "exit codes in tools/nfskeys/nfskeys-tool.h"

# environment variables and configuration vocabulary
missing=
n=0
for v in $(cat "$top_srcdir"/libnfskeys/*.c "$top_srcdir"/common/*.c "$top_srcdir"/tools/*/*.c \
	"$top_srcdir"/plugins/*.c "$top_srcdir"/idmapd/*.c "$top_srcdir"/attrd/*.c "$top_srcdir"/client/*.c 2>/dev/null |
	grep -o 'getenv("NFSKEYS_[A-Z_]*")' | sed 's/.*("\(.*\)")/\1/' | sort -u); do
	n=$((n + 1))
	grep -q "$v" "$man"/*.[1-8] || missing="$missing $v"
done
check_eq "every NFSKEYS_* variable the code reads is documented" "" "$missing"
extracted $n 2 "NFSKEYS_* variables the code reads"
# configuration keys: the one table (common/conf-schema.c, as --help-config=all prints
# it, reading no configuration) against nfskeys.conf(5)'s KEYS list, both ways, each key
# with its type, bounds, default and values; the build's state and runtime directories
# are the page's /var/lib/nfskeys and /run/nfskeys.
"$top_builddir/idmapd/nfskeys-idmapd" -c "$T_TMP/no-such.conf" --help-config=all \
	>"$T_TMP/help-config" 2>&1
check_eq "nfskeys-idmapd --help-config=all needs no configuration (exit 0)" 0 "$?"
awk -v sd="$statedir" -v rd="$rundir" '
	/^\[/ { k = $1 " " $2; $1 = $2 = ""; sub(/^ +/, ""); t = $0; next }
	/^    default: / { d = substr($0, 14); sub(/; .*/, "", d)
		if (d == sd) d = "/var/lib/nfskeys"; if (d == rd) d = "/run/nfskeys"
		print k "|" t "|" d; next }
	/^    values: / { print k "|values|" substr($0, 13) }' \
	"$T_TMP/help-config" | sort >"$T_TMP/keys-table"
sed -n '/^\.SH KEYS/,/^\.SH /p' "$man/nfskeys.conf.5" | awk '
	/^\.B \[/ { k = $2 " " $3; getline; d = $0; t = d; sub(/; default: .*/, "", t)
		sub(/.*; default: /, "", d); sub(/\.$/, "", d); print k "|" t "|" d; next }
	/^Values: / && k != "" { v = substr($0, 9); sub(/\.$/, "", v); gsub(/, /, "|", v)
		print k "|values|" v }' | sed 's/\\-/-/g; s/\\e/\\/g' | sort >"$T_TMP/keys-page"
check_eq "every key of the table is in nfskeys.conf(5) KEYS with its type and default" "" \
	"$(comm -23 "$T_TMP/keys-table" "$T_TMP/keys-page" | tr '\n' ' ')"
check_eq "every key of nfskeys.conf(5) KEYS is in the table, as the page says" "" \
	"$(comm -13 "$T_TMP/keys-table" "$T_TMP/keys-page" | tr '\n' ' ')"
extracted "$(grep -vc '|values|' "$T_TMP/keys-table")" 100 "keys in nfskeys-idmapd --help-config=all"
# the daemons' pages list their own section's keys: the same names as the table
for d in idmapd:Idmapd attrd:Attrd; do
	page="$man/nfskeys-${d%%:*}.8" sec=${d#*:}
	grep "^\[$sec\] " "$T_TMP/help-config" | awk '{ print $2 }' | sort >"$T_TMP/sec-table"
	sed -n '/^\.SH CONFIGURATION/,/^\.SH /p' "$page" | sed -n 's/^\.B \([A-Z][A-Za-z-]*\)$/\1/p' |
		sort -u >"$T_TMP/sec-page"
	check_eq "nfskeys-${d%%:*}(8) lists the [$sec] keys of the table, no other" "" \
		"$(comm -3 "$T_TMP/sec-table" "$T_TMP/sec-page" | tr -d '\t' | tr '\n' ' ')"
	extracted "$(wc -l <"$T_TMP/sec-table")" 5 "[$sec] keys in the table"
done
