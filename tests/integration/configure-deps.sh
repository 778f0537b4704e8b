#!/bin/sh
# configure stops with the name of the Debian package to install when a dependency is
# missing: hide one .pc file (libkeyutils, checked first) from pkg-config and run configure.
. "$top_srcdir/tests/harness/lib.sh"

# every required dependency's failure message names its package
missing=
reqs=$(sed -n 's/^NFSKEYS_REQUIRE(\[[A-Z0-9_]*\], \[\([^] ]*\)[^]]*\], \[\([^]]*\)\]).*/\1=\2/p' \
	"$top_srcdir/configure.ac")
for req in $reqs; do
	grep -q "${req%%=*} .*not found: install the Debian package ${req#*=} (apt-get install ${req#*=})" \
		"$top_srcdir/configure" || missing="$missing $req"
done
check_eq "configure names the Debian package of every required dependency" "" "$missing"
check_eq "every NFSKEYS_REQUIRE line of configure.ac was checked" \
	"$(grep -c '^NFSKEYS_REQUIRE(' "$top_srcdir/configure.ac")" "$(echo "$reqs" | grep -c =)"

# and really stops with it (once: configure is slow, the sanitizer build skips this)
if t_is_asan; then
	skip "configure run: done in the default build"; skip "configure run: done in the default build"
	exit 0
fi
if [ -f "$top_srcdir/config.status" ]; then
	skip "source tree is configured in place; configure cannot run out of tree"
	skip "source tree is configured in place; configure cannot run out of tree"
	exit 0
fi
pcdir="$T_TMP/pc"
mkdir -p "$pcdir" "$T_TMP/build"
for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' '); do
	for pc in "$d"/*.pc; do
		[ -e "$pc" ] || continue
		case $(basename "$pc") in libkeyutils.pc) continue ;; esac
		[ -e "$pcdir/$(basename "$pc")" ] || ln -s "$pc" "$pcdir/"
	done
done
# Reuse the build tree's answers to the compiler and libtool checks (the slow part), but
# none about pkg-config results or the environment.
sed -n '/^## Cache variables/,/^## Output variables/p' "$top_builddir/config.log" |
	grep -E '^[a-z_]+_cv_' | grep -Ev '^(pkg_cv_|ac_cv_env_)' >"$T_TMP/config.cache"
(cd "$T_TMP/build" && PKG_CONFIG_LIBDIR="$pcdir" PKG_CONFIG_PATH= \
	"$top_srcdir/configure" -q --cache-file="$T_TMP/config.cache" >"$T_TMP/out" 2>&1)
rc=$?
check_eq "configure fails without libkeyutils" 1 "$rc"
check_contains "and names the Debian package" \
	"libkeyutils >= 1.5 not found: install the Debian package libkeyutils-dev (apt-get install libkeyutils-dev)" \
	"$(cat "$T_TMP/out")"
