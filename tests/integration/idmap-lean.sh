#!/bin/sh
# nfskeys-upcall runs for every kernel ID-mapping miss: it and the core library must not
# pull in Kerberos, LDAP or OpenSSL (those live only in the krb5/ldap backend plugins).
# The helper request-key runs is the lean fast path: not even libnfskeys (and so no
# SQLite, libmount); its fallback nfskeys-upcall-full carries the engine.
. "$top_srcdir/tests/harness/lib.sh"
plan 5
command -v readelf >/dev/null 2>&1 || { for i in 1 2 3 4 5; do skip "readelf missing"; done; exit 0; }

# The lean helper links no libtool library, so it is never a wrapper script.
helper="$top_builddir/tools/nfskeys-upcall"
full="$top_builddir/tools/.libs/nfskeys-upcall-full"
[ -f "$full" ] || full="$top_builddir/tools/.libs/lt-nfskeys-upcall-full"
[ -f "$full" ] || full="$top_builddir/tools/nfskeys-upcall-full"
lib="$top_builddir/libnfskeys/.libs/libnfskeys.so"
heavy='lib(krb5|k5crypto|gssapi_krb5|ldap|lber|crypto|ssl)[.-]'

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
h=$(needed "$helper")
check_eq "nfskeys-upcall needs no krb5/ldap/crypto ($h)" "" "$(echo "$h" | tr ' ' '\n' | grep -E "$heavy")"
case "$h" in
*libc.so*) check_eq "nfskeys-upcall needs neither libnfskeys nor SQLite/libmount ($h)" "" \
	"$(echo "$h" | tr ' ' '\n' | grep -E 'lib(nfskeys|sqlite3|mount|blkid|selinux|m)[.]so')" ;;
*) not_ok "readelf could not read $helper ($h)" ;;
esac
f=$(needed "$full")
case "$f" in
*libnfskeys*) check_eq "nfskeys-upcall-full needs no krb5/ldap/crypto ($f)" "" \
	"$(echo "$f" | tr ' ' '\n' | grep -E "$heavy")" ;;
*) not_ok "readelf could not read $full ($f)" ;;
esac
l=$(needed "$lib")
check_eq "libnfskeys.so needs no krb5/ldap/crypto ($l)" "" "$(echo "$l" | tr ' ' '\n' | grep -E "$heavy")"
case "$l" in *libnfskeys*|*libkeyutils*) ok "readelf saw the library's dependencies" ;;
*) case "$h" in *libnfskeys*) ok "readelf saw the helper's dependencies" ;; *) not_ok "readelf output not understood: $h" ;; esac ;; esac
