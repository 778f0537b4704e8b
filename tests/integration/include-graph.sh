#!/bin/sh
# doc/ARCHITECTURE.md's rule, kept by a check: no include goes up a floor and no modules
# include each other in a circle (scripts/include-graph).  The checker is first shown to
# catch both on a small tree made here, so a checker that finds nothing cannot pass.
. "$top_srcdir/tests/harness/lib.sh"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
plan 5

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
