#!/bin/sh
# The command tables against the help and the documentation: every command and
# subcommand the tools dispatch ('nfskeys help --commands', 'nfsattr help --commands') is
# documented in its man page; every subcommand a man page's COMMANDS or README's command
# table names exists (in the table, and 'CMD SUB --help' does not answer "unknown"); and
# each --help list says exactly what the table has.
. "$top_srcdir/tests/harness/lib.sh"

# the pages as built from man/*.in
man="$top_builddir/man"
NFSATTR="$top_builddir/tools/nfsattr/nfsattr"
printf '[Idmapd]\nSocket = %s/no-idmapd.sock\n' "$T_TMP" >"$T_TMP/nfskeys.conf"
nk() { "$NFSKEYS" -c "$T_TMP/nfskeys.conf" "$@"; }
na() { "$NFSATTR" -c "$T_TMP/nfskeys.conf" -s "$T_TMP/no-attrd.sock" "$@"; }

# bold_words PAGE: every word a page sets in bold (.B/.BR/.BI lines, \fB...\fR runs), one a
# line, with "\-" as "-".
bold_words() {
	sed -e 's/\\-/-/g' -e 's/\\(en/-/g' "$1" | awk '
		/^\.(B|BR|BI|RB) / { sub(/^\.[A-Z]+ /, ""); print }
		{ s = $0
		  while (match(s, /\\fB[^\\]*/)) { print substr(s, RSTART + 3, RLENGTH - 3)
			s = substr(s, RSTART + RLENGTH) } }' |
		tr -s ' "|[](),;:.=' '\n' | grep -v '^$' | sort -u
}

# tags PAGE: the first line of each .TP tag in the COMMANDS section, "\-" as "-"
tags() {
	sed -e 's/\\-/-/g' "$1" | awk '/^\.SH/ { in_c = ($2 == "COMMANDS") } \
		in_c && prev == ".TP" { print } { prev = $0 }'
}

# first_word LINE: a tag line's first word, font requests and escapes taken off
first_word() {
	printf '%s\n' "$1" | sed -e 's/^\.[A-Z]* //' -e 's/\\f[BIRP]//g' -e 's/"//g' |
		awk '{ print $1 }'
}

nk help --commands >"$T_TMP/nfskeys.tree" || fail_all "nfskeys help --commands failed"
na help --commands >"$T_TMP/nfsattr.tree" || fail_all "nfsattr help --commands failed"
check "the nfskeys tree has the commands and subcommands (at least 30 lines)" \
	test "$(wc -l <"$T_TMP/nfskeys.tree")" -ge 30
check "the nfsattr tree has its commands (at least 10)" \
	test "$(wc -l <"$T_TMP/nfsattr.tree")" -ge 10

# 1. Every row documented: man/nfskeys-CMD.1 when there is one, else nfskeys(1).
missing=
while read -r cmd sub; do
	page="$man/nfskeys-$cmd.1"
	[ -f "$page" ] || page="$man/nfskeys.1"
	bold_words "$page" | grep -qxF -- "${sub:-$cmd}" || missing="$missing $cmd${sub:+ $sub}($(basename "$page"))"
done <"$T_TMP/nfskeys.tree"
check_eq "every nfskeys command and subcommand is in its man page" "" "$missing"
missing=
bold_words "$man/nfsattr.1" >"$T_TMP/nfsattr.words"
while read -r cmd; do
	grep -qxF -- "$cmd" "$T_TMP/nfsattr.words" || missing="$missing $cmd"
done <"$T_TMP/nfsattr.tree"
check_eq "every nfsattr command is in nfsattr(1)" "" "$missing"

# 2. Every documented subcommand exists.  The probe first: a made-up one answers "unknown".
exists() { # PROGRAM CMD [SUB]: in the tree, and --help does not answer "unknown"
	if [ "$1" = nfsattr ]; then tree=$T_TMP/nfsattr.tree; line=$2; out=$(na "$2" --help 2>&1)
	else tree=$T_TMP/nfskeys.tree; line="$2 $3"; out=$(nk "$2" "$3" --help 2>&1); fi
	grep -qxF -- "$line" "$tree" || return 1
	case $out in *nknown*) return 1 ;; esac
}
bad=
for cmd in $(awk 'NF == 2 { print $1 }' "$T_TMP/nfskeys.tree" | uniq); do
	out=$(nk "$cmd" no-such-sub --help 2>&1)
	case $out in *nknown*) ;; *) bad="$bad $cmd" ;; esac
done
check_eq "the probe: 'nfskeys CMD no-such-sub --help' answers unknown for every CMD" "" "$bad"
out=$(na no-such-command --help 2>&1)
check_contains "the probe: 'nfsattr no-such-command --help' answers unknown" "nknown" "$out"

: >"$T_TMP/documented"
# README: | `nfskeys CMD a\|b\|c` | ...
sed -n 's/^| `nfskeys \([a-z]*\) \([-a-z|\\]*\)` |.*/\1 \2/p' "$top_srcdir/README.md" |
	while read -r cmd subs; do
		for s in $(printf '%s\n' "$subs" | tr -d '\\' | tr '|' ' '); do
			echo "nfskeys $cmd $s README.md"
		done
	done >>"$T_TMP/documented"
# the per-command pages' COMMANDS tags: the first word, and "(or ALIAS)"
for page in "$man"/nfskeys-*.1; do
	cmd=$(basename "$page" .1); cmd=${cmd#nfskeys-}
	tags "$page" | while IFS= read -r t; do
		echo "nfskeys $cmd $(first_word "$t") $(basename "$page")"
		a=$(printf '%s\n' "$t" | sed -n 's/.*(or " *\([a-z-]*\).*/\1/p')
		[ -n "$a" ] && echo "nfskeys $cmd $a $(basename "$page")"
	done
done >>"$T_TMP/documented"
# nfskeys(1): tags "CMD SUB ..." of a command that has subcommands, and a tag block's
# "SUB | SUB | ..." line
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/"//g' "$man/nfskeys.1" | awk '
	/^\.SH/ { in_c = ($2 == "COMMANDS") }
	in_c && prev == ".TP" { sub(/^\.[A-Z]+ /, ""); cmd = $1; if ($2 ~ /^[a-z][a-z-]*$/) print cmd, $2 }
	in_c && /^\.BR [a-z-]+ \| / { sub(/^\.BR /, ""); n = split($0, w, / \| /)
		for (i = 1; i <= n; i++) print cmd, w[i] }
	{ prev = $0 }' | while read -r cmd sub; do
		grep -q "^$cmd " "$T_TMP/nfskeys.tree" && echo "nfskeys $cmd $sub nfskeys.1"
	done >>"$T_TMP/documented"
tags "$man/nfsattr.1" | while IFS= read -r t; do
	echo "nfsattr $(first_word "$t") - nfsattr.1"
done >>"$T_TMP/documented"
check "the documentation names subcommands (at least 40)" \
	test "$(wc -l <"$T_TMP/documented")" -ge 40
bad=
while read -r prog cmd sub where; do
	if [ "$prog" = nfsattr ]; then exists nfsattr "$cmd" || bad="$bad $cmd($where)"
	else exists nfskeys "$cmd" "$sub" || bad="$bad $cmd $sub($where)"; fi
done <"$T_TMP/documented"
check_eq "every subcommand the man pages and README name exists" "" "$bad"

# 3. The --help lists are the tables.
# help_rows: a --help's "Commands:" block, one name (and alias) a line
help_rows() {
	sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z|-]*\).*/\1/p' | tr '|' '\n' | sort
}
bad=
for cmd in $(awk 'NF == 2 { print $1 }' "$T_TMP/nfskeys.tree" | uniq); do
	want=$(awk -v c="$cmd" '$1 == c { print $2 }' "$T_TMP/nfskeys.tree" | sort)
	got=$(nk "$cmd" --help 2>&1 | help_rows)
	[ "$want" = "$got" ] || { bad="$bad $cmd"; diag "$cmd: table" $want "$cmd --help:" $got; }
done
check_eq "each 'nfskeys CMD --help' lists exactly its table's subcommands" "" "$bad"
check_eq "'nfsattr --help' lists exactly its table's commands" "$(sort "$T_TMP/nfsattr.tree")" \
	"$(na --help | help_rows)"
# the top-level help: "CMD  Help: a, b (alias), c" (continued on the next lines)
bad=
nk help | sed -n '/^Commands:/,/^$/p' | awk '
	/^  [a-z]/ { cmd = $1; sub(/^  [a-z-]+ +/, ""); if (!sub(/^[^:]*: /, "")) { cmd = ""; next } }
	/^    / { sub(/^ +/, "") }
	cmd != "" { gsub(/[(),]/, " "); n = split($0, w, / +/)
		for (i = 1; i <= n; i++) if (w[i] != "") print cmd, w[i] }' | sort >"$T_TMP/top"
awk 'NF == 2 && $1 != "keys"' "$T_TMP/nfskeys.tree" | sort >"$T_TMP/want-top"
check_eq "'nfskeys help' lists each command's subcommands as its table does" \
	"$(cat "$T_TMP/want-top")" "$(cat "$T_TMP/top")"
