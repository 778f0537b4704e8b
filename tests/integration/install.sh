#!/bin/sh
# make install into a temporary DESTDIR: the public headers under include/nfskeys/, the
# library with the soname the libtool version gives, a libnfskeys.pc that pkg-config
# resolves, and a program built only from what was installed links and runs.  Then
# make uninstall leaves no file behind.
. "$top_srcdir/tests/harness/lib.sh"
plan 17

dest="$T_TMP/dest"
# a make started by a test must not inherit the jobserver of the make running the tests
unset MAKEFLAGS MFLAGS MAKELEVEL
eval "$(make -s -C "$top_builddir" print-config)"

if make -C "$top_builddir" install DESTDIR="$dest" >"$T_TMP/install.log" 2>&1; then
	ok "make install DESTDIR=..."
else
	not_ok "make install DESTDIR=..."; tail -20 "$T_TMP/install.log" | sed 's/^/# /'
	exit 1
fi

inc="$dest$includedir/nfskeys"
missing=
for h in nfskeys.h $(sed -n 's/^#include "\(.*\)"/\1/p' "$top_srcdir/libnfskeys/nfskeys.h"); do
	[ -f "$inc/$h" ] || missing="$missing $h"
done
check_eq "public headers (and those nfskeys.h includes) under include/nfskeys/" "" "$missing"
check_eq "internal headers are not installed" "" \
	"$(cd "$dest$includedir" && find . -name 'libnfskeys-private.h' -o -name 'macros.h' -o -name 'ini.h')"

lib="$dest$libdir/libnfskeys.so"
check "libnfskeys.so development link" test -L "$lib"
soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check_eq "soname follows CURRENT-AGE" "libnfskeys.so.$soversion" "$soname"
check "the soname file exists" test -e "$dest$libdir/$soname"

pc="$dest$pkgconfigdir/libnfskeys.pc"
check "libnfskeys.pc installed" test -f "$pc"
flags=$(PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_LIBDIR="$dest$pkgconfigdir" \
	pkg-config --cflags --libs libnfskeys 2>&1 | sed 's/[[:space:]]*$//')
check_eq "pkg-config --cflags --libs libnfskeys" "-I$dest$includedir/nfskeys -L$dest$libdir -lnfskeys" "$flags"

cat >"$T_TMP/prog.c" <<'EOC'
#include <stdio.h>
#include <nfskeys.h>

int main(void)
{
	struct nfskeys_ctx *ctx = NULL;

	if (nfskeys_ctx_new("/dev/null", &ctx) < 0)
		return 1;
	printf("%s\n", nfskeys_ctx_get_conf_path(ctx));
	nfskeys_ctx_unref(ctx);
	return 0;
}
EOC
# shellcheck disable=SC2086 # flag lists
if $CC -std=c99 -Wall -Wextra -Werror $SAN_CFLAGS -o "$T_TMP/prog" "$T_TMP/prog.c" $flags \
	$SAN_LDFLAGS >"$T_TMP/cc.log" 2>&1; then
	ok "a program using only the installed header and .pc compiles and links"
else
	not_ok "a program using only the installed header and .pc compiles and links"
	sed 's/^/# /' "$T_TMP/cc.log"
fi
out=$(LD_LIBRARY_PATH="$dest$libdir" "$T_TMP/prog" 2>&1)
check_eq "it runs against the installed library" "/dev/null" "$out"
check_contains "and loads it from the install tree" "$dest$libdir/$soname" \
	"$(LD_LIBRARY_PATH="$dest$libdir" ldd "$T_TMP/prog" 2>/dev/null)"

check_eq "nfskeys installed and runs" "nfskeys $(sed -n 's/^AC_INIT(\[nfskeys\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")" \
	"$(LD_LIBRARY_PATH="$dest$libdir" "$dest$bindir/nfskeys" --version 2>&1)"
missing=
for f in "$mandir/man1/nfskeys.1" "$mandir/man5/nfskeys.conf.5" "$sysconfdir/nfskeys/nfskeys.conf"; do
	[ -f "$dest$f" ] || missing="$missing $f"
done
for d in "$sysconfdir/nfskeys/conf.d" "$pkgplugindir"; do
	[ -d "$dest$d" ] || missing="$missing $d/"
done
check_eq "man pages, example config, conf.d/ and the plugin directory" "" "$missing"
# the daemons' state and runtime directories (a source install runs the daemons too)
check_eq "state and runtime directories, mode 755" "755 755" \
	"$(stat -c %a "$dest$statedir" "$dest$rundir" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
check_eq "tmpfiles.d snippet makes them at boot" \
	"d $rundir 0755 root root -|d $statedir 0755 root root -" \
	"$(grep '^d ' "$dest$tmpfilesdir/nfskeys.conf" 2>&1 | tr '\n' '|' | sed 's/|$//')"

make -C "$top_builddir" uninstall DESTDIR="$dest" >"$T_TMP/uninstall.log" 2>&1
check_eq "make uninstall" 0 $?
check_eq "nothing left after uninstall" "" "$(find "$dest" -type f -o -type l | sed "s,^$dest,,")"
