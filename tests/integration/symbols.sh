#!/bin/sh
# The shared library exports exactly the symbols listed in libnfskeys.sym: no more (a
# leaked internal) and no fewer (a listed symbol that no longer exists).
. "$top_srcdir/tests/harness/lib.sh"
plan 3

lib="$top_builddir/libnfskeys/.libs/libnfskeys.so"
[ -f "$lib" ] || { not_ok "library built"; exit 1; }
ok "library built"

sed -e 's,/\*.*\*/,,g' "$top_srcdir/libnfskeys/libnfskeys.sym" |
	grep -E '^[[:space:]]*[a-z_][a-z0-9_]*;' | tr -d ' \t;' | sort -u >"$T_TMP/listed"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sed 's/@.*//' |
	grep -v '^NFSKEYS_' | sort -u >"$T_TMP/exported"

extra=$(comm -13 "$T_TMP/listed" "$T_TMP/exported" | tr '\n' ' ')
missing=$(comm -23 "$T_TMP/listed" "$T_TMP/exported" | tr '\n' ' ')
check_eq "no symbol exported beyond libnfskeys.sym" "" "$extra"
check_eq "every symbol in libnfskeys.sym is exported" "" "$missing"
