#!/bin/sh
# make install into a temporary DESTDIR: the public headers under include/nfskeys/, the
# library with the soname the libtool version gives, a libnfskeys.pc that pkg-config
# resolves, and a program built only from what was installed links and runs.  No unit is
# enabled for anyone (no .wants link: the renewal timer is each user's to enable).  The
# packages' path check (scripts/build-debs --check-paths) refuses a package made of this
# install (its units run /usr/local/sbin) and a request-key route that kept @sbindir@, and accepts
# one whose programs are under /usr.  Then make uninstall leaves no file behind.
. "$top_srcdir/tests/harness/lib.sh"
plan 22

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

check_eq "no unit enabled by make install (no .wants link anywhere)" "" \
	"$(find "$dest" -path '*.wants*' | sed "s,^$dest,,")"

# --- the packages' path check, on packages made here with dpkg-deb
# mkdeb NAME ROOT: NAME.deb of the tree ROOT (a control file added)
mkdeb() {
	mkdir -p "$2/DEBIAN"
	printf 'Package: %s\nVersion: 1\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: t\n' \
		"$1" >"$2/DEBIAN/control"
	dpkg-deb -Znone --root-owner-group -b "$2" "$T_TMP/$1.deb" >/dev/null 2>&1
}
pathcheck() { sh "$top_srcdir/scripts/build-debs" --check-paths "$@" 2>&1; }
if ! command -v dpkg-deb >/dev/null 2>&1; then
	for i in 1 2 3 4; do skip "the packages' path check: dpkg-deb missing"; done
else
	# what make install put under $prefix, as a package (the units only: small and enough)
	mkdir -p "$T_TMP/inst"
	(cd "$dest" && find . \( -name '*.service' -o -name '*.timer' \) -print | tar -cf - -T -) |
		(cd "$T_TMP/inst" && tar -xf -)
	unit=$(find "$T_TMP/inst" -name nfskeys-attrd.service | head -n 1)
	if [ -n "$unit" ] && mkdeb inst "$T_TMP/inst"; then
		out=$(pathcheck "$T_TMP/inst.deb")
		rc=$?
		case $prefix in
		/usr) check_eq "a package of this install (prefix /usr) passes the path check" "0|" "$rc|$out" ;;
		*) check_eq "a package of this install (prefix $prefix) fails the path check" 1 $rc
		   check_contains "... naming the unit and its program" \
			"nfskeys-attrd.service: names '$prefix/sbin/nfskeys-attrd', outside /usr, /etc, /lib, /bin, /sbin" "$out" ;;
		esac
	else
		skip "a package of this install: no nfskeys-attrd.service installed (built without systemd)"
		[ "$prefix" = /usr ] || skip "... (same)"
	fi
	[ "$prefix" = /usr ] && skip "(the prefix is /usr: nothing of the install to refuse)"
	mkdir -p "$T_TMP/good/usr/lib/systemd/system" "$T_TMP/bad/etc/request-key.d"
	printf '[Service]\nExecStart=/usr/sbin/x --foreground\nExecReload=/bin/kill -HUP $MAINPID\n' \
		>"$T_TMP/good/usr/lib/systemd/system/x.service"
	printf 'create\tid_resolver\tuid:*\t*\t@sbindir@/nfskeys-upcall %%k %%d\n' \
		>"$T_TMP/bad/etc/request-key.d/x.conf"
	mkdeb good "$T_TMP/good" && mkdeb bad "$T_TMP/bad"
	out=$(pathcheck "$T_TMP/good.deb")
	check_eq "a unit whose programs are under /usr and /bin passes" "0|" "$?|$out"
	out=$(pathcheck "$T_TMP/bad.deb")
	check_eq "a request-key route that kept @sbindir@ fails, named" \
		"1|bad.deb: /etc/request-key.d/x.conf: names '@sbindir@/nfskeys-upcall', outside /usr, /etc, /lib, /bin, /sbin" \
		"$?|$out"
fi

make -C "$top_builddir" uninstall DESTDIR="$dest" >"$T_TMP/uninstall.log" 2>&1
check_eq "make uninstall" 0 $?
check_eq "nothing left after uninstall" "" "$(find "$dest" -type f -o -type l | sed "s,^$dest,,")"
