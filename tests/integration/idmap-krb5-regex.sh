#!/bin/sh
# The krb5 backend with a realm configuration carrying auth_to_local rules (no KDC is
# needed to map names), Local-Realms enforcement, and the regex backend with idmapd.conf's
# [Regex] vocabulary, all through one batch of `nfskeys idmap query` each.
. "$top_srcdir/tests/harness/lib.sh"

cat >"$T_TMP/krb5.conf" <<'KRB'
[libdefaults]
	default_realm = NFSKEYS.TEST
	dns_lookup_kdc = false
	dns_lookup_realm = false
[realms]
	NFSKEYS.TEST = {
		kdc = 127.0.0.1:1
		auth_to_local_names = {
			boss = daemon
		}
		auth_to_local = RULE:[1:$1](svc-.*)s/^svc-//
		auth_to_local = RULE:[1:$1@$0](.*@OTHER\.TEST)s/@.*//
		auth_to_local = DEFAULT
	}
	OTHER.TEST = {
		kdc = 127.0.0.1:1
	}
KRB
KRB5_CONFIG="$T_TMP/krb5.conf"; export KRB5_CONFIG

field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p" | tr -d '"'; }
run() { # CONF -> answers file
	"$NFSKEYS" -c "$1" idmap query <"$T_TMP/req" >"$T_TMP/ans" 2>"$T_TMP/err"
}
a() { sed -n "${1}p" "$T_TMP/ans"; }
enoent="No such file or directory"
plan 21

printf '[General]\nDomain = nfskeys.test\nLocal-Realms = NFSKEYS.TEST,OTHER.TEST\n[Translation]\nMethod = nsswitch\nGSS-Methods = krb5\n' >"$T_TMP/k1.conf"
cat >"$T_TMP/req" <<'REQ'
principal-to-ids root@NFSKEYS.TEST
principal-to-ids svc-bin@NFSKEYS.TEST
principal-to-ids boss@NFSKEYS.TEST
principal-to-ids bin@OTHER.TEST
principal-to-ids root@EVIL.TEST
principal-to-ids host/vm@NFSKEYS.TEST
principal-to-ids nosuchuser@NFSKEYS.TEST
name-to-uid root@nfskeys.test
REQ
run "$T_TMP/k1.conf"
check_eq "DEFAULT rule: root@NFSKEYS.TEST -> 0" 0 "$(a 1 | field id)"
check_eq "answered by krb5" krb5 "$(a 1 | field backend)"
check_eq "RULE strips svc-: svc-bin -> bin (2)" 2 "$(a 2 | field id)"
check_eq "auth_to_local_names: boss -> daemon (1)" 1 "$(a 3 | field id)"
check_eq "daemon's primary group" 1 "$(a 3 | field gid)"
check_eq "second local realm's rule: bin@OTHER.TEST -> 2" 2 "$(a 4 | field id)"
check_eq "realm outside Local-Realms refused" "$enoent" "$(a 5 | field error)"
check_eq "a host principal has no local name" "$enoent" "$(a 6 | field error)"
check_eq "a mapped name missing from NSS" "$enoent" "$(a 7 | field error)"
check_eq "names still go through Method (nsswitch)" nsswitch "$(a 8 | field backend)"
out=$("$NFSKEYS" -c "$T_TMP/k1.conf" idmap explain --principal root@EVIL.TEST 2>&1)
check_contains "explain names the realm cause" "cause: realm not in Local-Realms" "$out"
check_contains "explain names the config line" "[General] Local-Realms" "$out"

printf '[General]\nDomain = nfskeys.test\n[Translation]\nGSS-Methods = krb5\n' >"$T_TMP/k2.conf"
printf 'principal-to-ids root@NFSKEYS.TEST\nprincipal-to-ids bin@OTHER.TEST\n' >"$T_TMP/req"
run "$T_TMP/k2.conf"
check_eq "no Local-Realms: the default realm is local" 0 "$(a 1 | field id)"
check_eq "no Local-Realms: another realm is not" "$enoent" "$(a 2 | field error)"

cat >"$T_TMP/r.conf" <<'CONF'
[General]
Domain = corp.test
[Translation]
Method = regex
[Regex]
User-Regex = ^u-([a-z0-9_]+)@corp\.test$
Group-Regex = ^g-([a-z0-9_]+)@corp\.test$
Prepend-Before-User = u-
Append-After-User = @corp.test
Prepend-Before-Group = g-
Append-After-Group = @corp.test
Group-Name-Prefix = www-
Group-Name-No-Prefix-Regex = ^(root|users)$
CONF
cat >"$T_TMP/req" <<'REQ'
name-to-uid u-daemon@corp.test
name-to-uid daemon@corp.test
uid-to-name 1
group-to-gid g-data@corp.test
gid-to-group 33
group-to-gid g-root@corp.test
gid-to-group 0
REQ
run "$T_TMP/r.conf"
check_eq "regex: u-daemon -> 1" 1 "$(a 1 | field id)"
check_eq "regex: a name outside the pattern" "$enoent" "$(a 2 | field error)"
check_eq "regex: uid 1 -> u-daemon@corp.test" "u-daemon@corp.test" "$(a 3 | field name)"
check_eq "regex: Group-Name-Prefix: g-data -> www-data (33)" 33 "$(a 4 | field id)"
check_eq "regex: gid 33 -> g-data@corp.test (prefix stripped)" "g-data@corp.test" "$(a 5 | field name)"
check_eq "regex: No-Prefix-Regex: g-root -> root (0)" 0 "$(a 6 | field id)"
check_eq "regex: gid 0 -> g-root@corp.test" "g-root@corp.test" "$(a 7 | field name)"
