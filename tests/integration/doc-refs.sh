#!/bin/sh
# The project's files stand on their own: none cites a document outside the repository
# (the planning notes kept beside the checkout) or a tracker or work-session number, which
# mean nothing to a reader of the tree; and every document a file names (doc/X.md, X.md)
# exists in the repository.  debian/changelog is history and may cite anything.  The
# checker is first shown to catch each kind of citation on a small tree made here, so a
# checker that finds nothing cannot pass.
. "$top_srcdir/tests/harness/lib.sh"
plan 8

# Citations of outside documents, and of numbered issues or sessions (any case).
P_OUT='\.\./shared/|shared/(DESIGN|KERNEL-INTERFACES|STYLE|TESTING-NOTES)'
P_NUM='(^|[^A-Za-z])(issue|session)s? #?[0-9]'

# doc_files ROOT: the files to read, one per line, relative to ROOT: the tracked files of
# a git checkout, else (a release tarball) every file but the generated ones.
doc_files() {
	if [ "$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$1" && pwd -P)" ]; then
		git -C "$1" ls-files
	else
		(cd "$1" && find . -type f ! -path './.git/*' ! -path './_*' \
			! -path './autom4te.cache/*' ! -path './build-aux/*' ! -path './m4/*' \
			! -name Makefile.in ! -name Makefile ! -name configure ! -name 'config.*' \
			! -name aclocal.m4 ! -name '*.png' | sed 's|^\./||')
	fi | grep -v -x -e 'debian/changelog' -e ''
}

# doc_refs ROOT: one line per offence ("FILE:LINE: text" or "FILE: cites X"), nothing
# when the tree is clean.  A man page writes a hyphen as "\-".
doc_refs() {
	root=$1
	list="$T_TMP/files"
	doc_files "$root" >"$list"
	(cd "$root" && tr '\n' '\0' <"$list" | xargs -0 grep -nIiE -e "$P_OUT" -e "$P_NUM" --)
	(cd "$root" && tr '\n' '\0' <"$list" |
		xargs -0 grep -oHIE '(([A-Za-z0-9_.]|\\?-)+/)*[A-Z]([A-Z0-9_]|\\?-)*[A-Z]\.md' --) |
		sed 's/\\-/-/g' | sort -u |
		while IFS= read -r hit; do
			f=${hit%%:*}
			ref=${hit#*:}
			d=$(dirname "$f")
			b=$(basename "$ref")
			for c in "$ref" "$d/$ref" "$b" "doc/$b" "doc/security/$b" "$d/$b"; do
				[ -f "$root/$c" ] && continue 2
			done
			echo "$f: cites $ref, which is not in the repository"
		done
	return 0
}

# a tree with one of each offence, and a changelog and a real document that are fine
B="$T_TMP/bad"
mkdir -p "$B/doc" "$B/src" "$B/debian"
printf '# Design\n' >"$B/doc/DESIGN.md"
printf '/* the formats: doc/DESIGN.md */\n' >"$B/src/good.c"
# (the offending texts are assembled at run time, so this file does not cite them itself)
printf '/* see ..%s/KERNEL-INTERFACES.md */\n' /shared >"$B/src/outside.c"
printf '/* as Issue %s item 2 asks */\n' 35 >"$B/src/issue.c"
printf '# measured in session %s\n' 4 >"$B/src/session.sh"
printf 'the layout: doc/%s.md\n' NOWHERE >"$B/src/missing.md"
printf 'nfskeys (0.1) unstable; urgency=low\n  * issue %s fixed\n' 7 >"$B/debian/changelog"
out=$(doc_refs "$B")
echo "$out" | sed 's/^/# bad tree: /'
check_contains "the checker finds a path to an outside document" "src/outside.c:1:" "$out"
check_contains "the checker finds an issue number" "src/issue.c:1:" "$out"
check_contains "the checker finds a session number" "src/session.sh:1:" "$out"
check_contains "the checker finds a document that does not exist" \
	"src/missing.md: cites doc/NOWHERE.m""d" "$out"
case "$out" in
*debian/changelog* | *good.c* | *DESIGN.md:*) not_ok "the changelog and a real document are not offences" ;;
*) ok "the changelog and a real document are not offences" ;;
esac

n=$(doc_files "$top_srcdir" | wc -l)
check "nfskeys: the files were listed ($n)" [ "$n" -gt 100 ]
out=$(doc_refs "$top_srcdir")
[ -z "$out" ] || echo "$out" | sed 's/^/# /'
check_eq "nfskeys: no file cites an outside document, an issue or a session" "" "$out"
check "nfskeys: doc/DESIGN.md and doc/KERNEL-INTERFACES.md exist" \
	[ -f "$top_srcdir/doc/DESIGN.md" -a -f "$top_srcdir/doc/KERNEL-INTERFACES.md" ]
