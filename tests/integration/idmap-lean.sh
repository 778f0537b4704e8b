#!/bin/sh
# nfskeys-upcall runs for every kernel ID-mapping miss: it and the core library must not
# pull in Kerberos, LDAP or OpenSSL (those live only in the krb5/ldap backend plugins).
# The helper request-key runs is the lean fast path: not even libnfskeys (and so no
# SQLite, libmount); its fallback nfskeys-upcall-full carries the engine.
. "$top_srcdir/tests/harness/lib.sh"
plan 7
command -v readelf >/dev/null 2>&1 || { for i in 1 2 3 4 5 6 7; do skip "readelf missing"; done; exit 0; }

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

# They run as root for any process that asks for a key: they must never enter a namespace
# (setns/unshare) a caller could have chosen, nor run NSS inside one.  Nothing in them
# imports either call (the imports are read from the dynamic symbol table; the helper's
# keyctl_instantiate import shows the reading works).
imports() { readelf --dyn-syms -W "$1" | awk '$7 == "UND" { print $8 }' | sed 's/@.*//'; }
check_contains "the dynamic imports are readable (nfskeys-upcall imports keyctl_instantiate)" \
	keyctl_instantiate "$(imports "$helper")"
ns=
for f in "$helper" "$full" "$lib"; do
	ns="$ns$(imports "$f" | grep -xE 'setns|unshare' | sed "s|^|$(basename "$f"):|")"
done
check_eq "no namespace switch (setns/unshare) in the helpers or libnfskeys" "" "$ns"
