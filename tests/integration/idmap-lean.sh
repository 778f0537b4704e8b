#!/bin/sh
# nfskeys-upcall runs for every kernel ID-mapping miss: it and the core library must not
# pull in Kerberos, LDAP or OpenSSL (those live only in the krb5/ldap backend plugins).
. "$top_srcdir/tests/harness/lib.sh"
plan 3
command -v readelf >/dev/null 2>&1 || { skip "readelf missing"; skip "readelf missing"; skip "readelf missing"; exit 0; }

helper="$top_builddir/tools/.libs/nfskeys-upcall"
[ -f "$helper" ] || helper="$top_builddir/tools/.libs/lt-nfskeys-upcall"
[ -f "$helper" ] || helper="$top_builddir/tools/nfskeys-upcall"
lib="$top_builddir/libnfskeys/.libs/libnfskeys.so"
heavy='lib(krb5|k5crypto|gssapi_krb5|ldap|lber|crypto|ssl)[.-]'

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
h=$(needed "$helper")
check_eq "nfskeys-upcall needs no krb5/ldap/crypto ($h)" "" "$(echo "$h" | tr ' ' '\n' | grep -E "$heavy")"
l=$(needed "$lib")
check_eq "libnfskeys.so needs no krb5/ldap/crypto ($l)" "" "$(echo "$l" | tr ' ' '\n' | grep -E "$heavy")"
case "$l" in *libnfskeys*|*libkeyutils*) ok "readelf saw the library's dependencies" ;;
*) case "$h" in *libnfskeys*) ok "readelf saw the helper's dependencies" ;; *) not_ok "readelf output not understood: $h" ;; esac ;; esac
