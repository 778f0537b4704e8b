#!/bin/sh
# The two daemons look alike and share no name: every function and variable of
# nfskeys-idmapd is idmapd_* or private to its file, attrd's attrd_*, and no symbol, static
# or not, nor a struct or enum tag, is defined by both (a reader who greps a name lands in
# one daemon).  Both answer calls from a dispatch table of common/rpc-dispatch.h rows.
. "$top_srcdir/tests/harness/lib.sh"
command -v nm >/dev/null 2>&1 || skip_all "nm not installed"
plan 6

# defined ROOT DIR: every symbol the objects of DIR define, local ones too, without the
# .N suffix the compiler gives a local it copied; main is everyone's (and so is main.cold,
# the part of it the compiler moves out of line: seen in the ASan build), and names
# starting with "_" are the compiler's and the sanitizers' own (ASan's _sub_I_00099_1
# constructors), never the project's.
defined() {
	nm --defined-only "$1/$2"/*.o 2>/dev/null | awk 'NF == 3 { print $3 }' |
		sed 's/\.[0-9]*$//' | grep -v -x -e main -e 'main\.cold' -e '\..*' -e '_.*' | sort -u
}
# tags DIR: the struct, union and enum tags DIR's sources define.
tags() {
	cat "$top_srcdir/$1"/*.[ch] | grep -oE '^(struct|union|enum) [a-z_0-9]+ \{' |
		sed 's/ {$//' | sort -u
}

defined "$top_builddir" idmapd >"$T_TMP/idmapd"
defined "$top_builddir" attrd >"$T_TMP/attrd"
check_contains "the objects of nfskeys-idmapd were read" idmapd_dispatch "$(cat "$T_TMP/idmapd")"
check_contains "the objects of nfskeys-attrd were read" attrd_dispatch "$(cat "$T_TMP/attrd")"
check_eq "no symbol defined by both daemons" "" "$(comm -12 "$T_TMP/idmapd" "$T_TMP/attrd" |
	tr '\n' ' ')"

tags idmapd >"$T_TMP/idmapd-tags"
tags attrd >"$T_TMP/attrd-tags"
check_eq "no struct or enum tag defined by both daemons" "" \
	"$(comm -12 "$T_TMP/idmapd-tags" "$T_TMP/attrd-tags" | tr '\n' ' ')"

# one dispatch table each, of the one row type
check_contains "nfskeys-idmapd answers from a table of rpc-dispatch.h rows" \
	"RPC_PROC_ROW(idmapd_proc, struct idmapd);" "$(cat "$top_srcdir/idmapd/idmapd.h")"
check_contains "nfskeys-attrd answers from a table of rpc-dispatch.h rows" \
	"RPC_PROC_ROW(attrd_proc, struct attrd);" "$(cat "$top_srcdir/attrd/attrd.h")"
