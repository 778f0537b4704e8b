#!/bin/sh
# doc/ARCHITECTURE.md's rule, kept by a check: no include goes up a floor and no modules
# include each other in a circle (scripts/include-graph); no files of one folder call each
# other in a circle (scripts/call-graph).  Each checker is first shown to catch what it looks for on a small tree made
# here, so a checker that finds nothing cannot pass.
. "$top_srcdir/tests/harness/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
plan 11

G="$top_srcdir/scripts/include-graph"

# a tree with one upward include (common/ -> libnfskeys/) and one circle (a <-> b)
B="$T_TMP/bad"
mkdir -p "$B/common" "$B/libnfskeys"
printf '#include "ctx-private.h"\n' >"$B/common/macros.h"
printf '' >"$B/libnfskeys/ctx-private.h"
printf '#include "b.h"\n' >"$B/libnfskeys/a.c"
printf '' >"$B/libnfskeys/a.h"
printf '#include "a.h"\n' >"$B/libnfskeys/b.c"
printf '' >"$B/libnfskeys/b.h"
out=$(python3 "$G" "$B")
rc=$?
check_eq "the checker fails a tree with an upward include and a circle" 1 "$rc"
check_contains "... and names the upward include" "UPWARD: common/macros.h includes libnfskeys/ctx-private.h" "$out"
check_contains "... and the circle" "CIRCLE: libnfskeys/a <-> libnfskeys/b" "$out"

out=$(python3 "$G" "$top_srcdir")
rc=$?
echo "$out" | sed 's/^/# /'
check_eq "nfskeys: no upward include, no circle (scripts/include-graph exits 0)" 0 "$rc"
check_contains "nfskeys: the graph was read (files counted)" "files," "$out"

# calls: the objects of the build tree, read with nm
if ! command -v nm >/dev/null 2>&1; then
	for i in 1 2 3 4 5 6; do skip "nm not installed"; done
	exit 0
fi
CC=${CC:-cc}
C="$top_srcdir/scripts/call-graph"
# objects built from SRC/FOLDER/NAME.c into SRC/_b/FOLDER/NAME.o
build_tree() {
	for f in "$1"/*/*.c; do
		d=$(basename "$(dirname "$f")")
		mkdir -p "$1/_b/$d"
		$CC -c -o "$1/_b/$d/$(basename "$f" .c).o" "$f" || return 1
	done
}
# a circle (a -> b -> a) and a file outside it (c -> a)
K="$T_TMP/calls"
mkdir -p "$K/common"
printf 'int b_f(void);\nint a_f(void) { return 1; }\nint a_g(void) { return b_f(); }\n' \
	>"$K/common/a.c"
printf 'int a_f(void);\nint b_f(void) { return a_f(); }\n' >"$K/common/b.c"
printf 'int a_g(void);\nint c_f(void) { return a_g(); }\n' >"$K/common/c.c"
build_tree "$K"
out=$(python3 "$C" "$K/_b" "$K")
rc=$?
check_eq "call-graph fails a tree with a call circle" 1 "$rc"
check_contains "... and names the circle (and only its files)" "CIRCLE: common/a <-> common/b
circles: 1" "$out"

# the sub-mount files of attrd/ called each other in a ring and were once let pass: no
# longer, any circle there fails like any other
rm -rf "$K"; mkdir -p "$K/attrd"
printf 'int j(void);\nint m(void) { return j(); }\n' >"$K/attrd/attrd-mounts.c"
printf 'int m(void);\nint j(void) { return m(); }\n' >"$K/attrd/attrd-mounts-jobs.c"
build_tree "$K"
out=$(python3 "$C" "$K/_b" "$K")
rc=$?
check_eq "call-graph fails a circle of attrd/'s sub-mount files" 1 "$rc"
check_contains "... and names it" "CIRCLE: attrd/attrd-mounts <-> attrd/attrd-mounts-jobs" "$out"

out=$(python3 "$C" --summary "$top_builddir" "$top_srcdir")
rc=$?
echo "$out" | sed 's/^/# /'
check_eq "nfskeys: no call circle inside a folder (scripts/call-graph)" 0 "$rc"
check_contains "nfskeys: the objects were read (modules counted)" "modules," "$out"
