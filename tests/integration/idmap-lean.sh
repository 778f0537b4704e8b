#!/bin/sh
# nfskeys-upcall runs for every kernel ID-mapping miss: it and the core library must not
# pull in Kerberos, LDAP or OpenSSL (those live only in the krb5/ldap backend plugins).
# The helper request-key runs is the lean fast path: not even libnfskeys (and so no
# SQLite, libmount), and where configure could, a static PIE that loads nothing at all;
# its fallback nfskeys-upcall-full carries the engine.
. "$top_srcdir/tests/harness/lib.sh"
plan 13
command -v readelf >/dev/null 2>&1 || { for i in $(seq 13); do skip "readelf missing"; done; exit 0; }

# The lean helper links no libtool library, so it is never a wrapper script.
helper="$top_builddir/tools/upcall/nfskeys-upcall"
full="$top_builddir/tools/upcall/.libs/nfskeys-upcall-full"
[ -f "$full" ] || full="$top_builddir/tools/upcall/.libs/lt-nfskeys-upcall-full"
[ -f "$full" ] || full="$top_builddir/tools/upcall/nfskeys-upcall-full"
lib="$top_builddir/libnfskeys/.libs/libnfskeys.so"
heavy='lib(krb5|k5crypto|gssapi_krb5|ldap|lber|crypto|ssl)[.-]'

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
interp() { readelf -lW "$1" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p'; }
# the functions a static binary carries (its symbol table: the build tree is not stripped)
defined() { nm "$1" 2>/dev/null | awk '$2 ~ /^[TtWw]$/ { print $3 }'; }
h=$(needed "$helper")
nss_etc='(getpw|getgr|getsp|gethostby|getservby|getaddrinfo|getnameinfo|setlocale|newlocale|iconv_open|__nss_)[a-z0-9_]*'
# configure's verdict (tools/upcall/Makemodule.am): a static PIE unless the toolchain or a
# sanitizer build ruled it out
if grep -q '^NFSKEYS_UPCALL_LINK = -static-pie' "$top_builddir/Makefile"; then
	static=yes
	check_eq "nfskeys-upcall is a static PIE: no interpreter, no NEEDED library" \
		"interp= needed=" "interp=$(interp "$helper") needed=$h"
	syms=$(defined "$helper")
	check_contains "its symbol table is readable (it carries keyctl_instantiate)" \
		keyctl_instantiate "$syms"
	# nothing of Kerberos, LDAP, OpenSSL, SQLite, libmount or libnfskeys linked in
	check_eq "nfskeys-upcall carries no krb5/gss/ldap/crypto/sqlite/libmount/libnfskeys code" "" \
		"$(echo "$syms" | grep -E '^(krb5_|gss_|ldap_|ber_|EVP_|SSL_|sqlite3_|mnt_|nfskeys_)' | head -n3)"
	# Static glibc would dlopen NSS modules (getpw*, getaddrinfo, ...) or, after setlocale(),
	# iconv/gettext modules: none of those entry points is linked in, so the C locale stays
	# and nothing is ever loaded.
	check_eq "nor any NSS, setlocale or iconv entry point" "" \
		"$(echo "$syms" | grep -xE "$nss_etc" | head -n3)"
else
	static=no
	if t_is_asan; then
		skip "static PIE: sanitizer builds link nfskeys-upcall dynamically"
	else
		skip "static PIE: configure could not link one here (libc.a, libkeyutils.a?), see config.log"
	fi
	check_eq "nfskeys-upcall needs no krb5/ldap/crypto ($h)" "" "$(echo "$h" | tr ' ' '\n' | grep -E "$heavy")"
	case "$h" in
	*libc.so*) check_eq "nfskeys-upcall needs neither libnfskeys nor SQLite/libmount ($h)" "" \
		"$(echo "$h" | tr ' ' '\n' | grep -E 'lib(nfskeys|sqlite3|mount|blkid|selinux|m)[.]so')" ;;
	*) not_ok "readelf could not read $helper ($h)" ;;
	esac
	check_eq "it imports no NSS, setlocale or iconv entry point" "" \
		"$(readelf --dyn-syms -W "$helper" | awk '$7 == "UND" { print $8 }' | sed 's/@.*//' |
			grep -xE "$nss_etc" | head -n3)"
fi
f=$(needed "$full")
case "$f" in
*libnfskeys*) check_eq "nfskeys-upcall-full needs no krb5/ldap/crypto ($f)" "" \
	"$(echo "$f" | tr ' ' '\n' | grep -E "$heavy")" ;;
*) not_ok "readelf could not read $full ($f)" ;;
esac
l=$(needed "$lib")
check_eq "libnfskeys.so needs no krb5/ldap/crypto ($l)" "" "$(echo "$l" | tr ' ' '\n' | grep -E "$heavy")"
case "$l" in *libkeyutils*) ok "readelf saw the library's dependencies ($l)" ;;
*) not_ok "readelf output not understood: $l" ;; esac

# They run as root for any process that asks for a key: they must never enter a namespace
# (setns/unshare) a caller could have chosen, nor run NSS inside one.  Nothing in them
# imports either call (the imports are read from the dynamic symbol table; the full
# helper's nfskeys_key_instantiate import shows the reading works), nor does the static helper
# carry either.
imports() { readelf --dyn-syms -W "$1" | awk '$7 == "UND" { print $8 }' | sed 's/@.*//'; }
check_contains "the dynamic imports are readable (nfskeys-upcall-full imports nfskeys_key_instantiate)" \
	nfskeys_key_instantiate "$(imports "$full")"
ns=
for f in "$full" "$lib"; do
	ns="$ns$(imports "$f" | grep -xE 'setns|unshare' | sed "s|^|$(basename "$f"):|")"
done
if [ $static = yes ]; then
	ns="$ns$(defined "$helper" | grep -xE 'setns|unshare' | sed 's|^|nfskeys-upcall:|')"
else
	ns="$ns$(imports "$helper" | grep -xE 'setns|unshare' | sed 's|^|nfskeys-upcall:|')"
fi
check_eq "no namespace switch (setns/unshare) in the helpers or libnfskeys" "" "$ns"

# One command line for both (common/upcall-args.h): the lean helper hands what it does not
# take to nfskeys-upcall-full, which reports it.
run() { "$helper" "$@" >"$T_TMP/out" 2>&1; echo "rc=$? $(head -n1 "$T_TMP/out")"; }
check_eq "--version (through the full helper)" "rc=0 nfskeys-upcall $(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"/\1/p' "$top_builddir/config.h")" \
	"$(run --version)"
check_eq "a bad -t names it" "rc=2 nfskeys-upcall: bad timeout '+5'" "$(run -t +5 1 uid:x@y)"
check_eq "a bad key serial names it" "rc=2 nfskeys-upcall: bad key serial '0'" "$(run 0 uid:x@y)"
check_eq "KEY DESCRIPTION are required" "rc=2 Usage: nfskeys-upcall [OPTIONS] KEY DESCRIPTION" \
	"$(run -t 5 1)"
