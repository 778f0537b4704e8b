#!/bin/sh
# nfskeys-attrd reaches the library only through its public headers and the daemon side
# libnfskeys/nfskeys-attr-daemon.h, plus the typed configuration schema every program reads
# its keys through (conf-schema.h, conf-get.h; doc/ARCHITECTURE.md).  It still links the internal
# library, so the compiler does not hold it there: check the includes of attrd/, and that
# every library symbol the daemon's objects need is exported (libnfskeys.sym) or declared
# in the daemon header.
. "$top_srcdir/tests/harness/lib.sh"
plan 4

# 1. includes: of libnfskeys/, only the installed headers and the daemon header
pub=$(cd "$top_srcdir/libnfskeys" && ls nfskeys.h nfskeys-*.h | grep -vx 'nfskeys-attr-daemon.h')
bad=""
for f in "$top_srcdir"/attrd/*.[ch]; do
	for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		[ -f "$top_srcdir/libnfskeys/$h" ] || continue
		case $h in nfskeys-attr-daemon.h | conf-schema.h | conf-get.h) continue ;; esac
		echo "$pub" | grep -qx "$h" && continue
		bad="$bad ${f#"$top_srcdir"/}:$h"
	done
done
check_eq "attrd/ includes no private header of the library but nfskeys-attr-daemon.h and the config schema's" "" "$bad"

# 2. symbols: the daemon's objects against what the internal library defines
lib="$top_builddir/libnfskeys/.libs/libnfskeys-internal.a"
objs=$(ls "$top_builddir"/attrd/nfskeys_attrd-*.o 2>/dev/null)
if [ ! -f "$lib" ] || [ -z "$objs" ]; then
	not_ok "the internal library and nfskeys-attrd's objects are built"
	exit 1
fi
ok "the internal library and nfskeys-attrd's objects are built ($(echo "$objs" | wc -l) objects)"

nm --defined-only "$lib" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ { print $3 }' | sort -u >"$T_TMP/libdef"
# shellcheck disable=SC2086
nm -u $objs | awk 'NF == 2 { print $2 }' | sort -u >"$T_TMP/undef"
comm -12 "$T_TMP/libdef" "$T_TMP/undef" >"$T_TMP/used"
sed -e 's,/\*.*\*/,,g' "$top_srcdir/libnfskeys/libnfskeys.sym" |
	grep -E '^[[:space:]]*[a-z_][a-z0-9_]*;' | tr -d ' \t;' | sort -u >"$T_TMP/exported"
cat "$top_srcdir/libnfskeys/nfskeys-attr-daemon.h" "$top_srcdir/common/conf-schema.h" \
	"$top_srcdir/libnfskeys/conf-get.h" | grep -oE '\b[a-z_][a-z0-9_]*\(' | tr -d '(' |
	sort -u >"$T_TMP/declared"
sort -u "$T_TMP/exported" "$T_TMP/declared" >"$T_TMP/allowed"
n=$(wc -l <"$T_TMP/used")
if [ "$n" -lt 10 ]; then
	not_ok "nfskeys-attrd uses the library (only $n symbols found: nm output not understood?)"
else
	ok "nfskeys-attrd uses $n symbols of the library"
fi
beyond=$(comm -23 "$T_TMP/used" "$T_TMP/allowed" | tr '\n' ' ')
check_eq "every library symbol nfskeys-attrd uses is public, in nfskeys-attr-daemon.h or the config schema" "" \
	"$beyond"
