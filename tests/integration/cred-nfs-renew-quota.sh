#!/bin/sh
# nfskeys nfs renew, as an ordinary user against the kernel's default key quota (200 keys,
# 20000 bytes for a non-root uid): 60 renewals of a KEYRING:persistent ticket keep the
# cache at one ticket (a renewed ticket replaces the old, it does not pile up until
# add_key fails with EDQUOT), and a ticket whose renewable life ends soon is renewed with a
# warning that says until when and what to do.  A real MIT KDC on loopback.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/kdc.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (runs the renewals as uid 65534)"
U=65534
USER_NAME=$(getent passwd $U | cut -d: -f1)
[ -n "$USER_NAME" ] || skip_all "no user with uid $U"
t_ou_load
plan 9

kdc_start NFSKEYS.TEST
kdc_kadmin "addprinc -randkey -maxrenewlife \"7 days\" renewer"
kdc_kadmin "addprinc -randkey -maxlife \"20 minutes\" -maxrenewlife \"1 hour\" shortrenew"
# what the user runs must be within the user's reach (the clone may be 0700)
W=$(mktemp -d /tmp/nfskeys-renew.XXXXXX) && chmod 755 "$W" || fail_all "temp dir"
t_on_exit "rm -rf '$W'"
kdc_ktadd "$W/renewer.kt" renewer
kdc_ktadd "$W/short.kt" shortrenew
chown $U "$W/renewer.kt" "$W/short.kt"
cp "$KRB5_CONFIG" "$W/krb5.conf" && chmod 644 "$W/krb5.conf"
CC="KEYRING:persistent:$U:nfskeys-renew-$$"
as_user() {
	setpriv --reuid=$U --regid=$U --clear-groups \
		$T_OU_ENV KRB5_CONFIG="$W/krb5.conf" KRB5CCNAME=FILE:/dev/null "$@"
}
NK=$(t_ou nfskeys)
t_on_exit "as_user kdestroy -c $CC"
# the quota line of uid 65534 in /proc/key-users: keys/maxkeys bytes/maxbytes
quota() { awk -v u="$U:" '$1 == u { print $4, $5 }' /proc/key-users; }
# the keys in the cache's own keyring (tickets and the principal), seen by the user
cache_keys() { as_user klist -c "$CC" 2>/dev/null | grep -c ' krbtgt/'; }

as_user "$NK" nfs login -k "$W/renewer.kt" -p renewer -c "$CC" >"$T_TMP/out" 2>&1
check_eq "the user logs in with a keytab" 0 $?
before=$(cache_keys)
check_eq "... one ticket (the TGT) in the cache" 1 "$before"
max=$(quota | awk '{ split($2, b, "/"); print b[2] }')
case "$max" in '' | *[!0-9]*) not_ok "the user's byte quota is known (got '$max')" ;;
*) ok "the user's byte quota is known ($max bytes)" ;; esac

fails=0
i=0
while [ $i -lt 60 ]; do
	as_user "$NK" nfs renew -c "$CC" >"$T_TMP/renew" 2>&1 || { fails=$((fails + 1)); cp "$T_TMP/renew" "$T_TMP/renew.fail"; }
	i=$((i + 1))
done
check_eq "60 renewals in a row all succeed" 0 "$fails"
[ "$fails" = 0 ] || diag "$(cat "$T_TMP/renew.fail")"
check_eq "... and the cache still holds one ticket" 1 "$(cache_keys)"
q=$(quota)
bytes=$(echo "$q" | awk '{ split($2, b, "/"); print b[1] }')
# one TGT costs well under 2 KiB; 60 piled up would pass the 20000-byte default quota
check "... the user's keys use under a quarter of the byte quota ($bytes of $max)" \
	test "${bytes:-99999999}" -lt "$((max / 4))"
case "$(cat "$T_TMP/renew")" in *warning*) not_ok "... no warning with 7 days of renewable life" ;;
*) ok "... no warning with 7 days of renewable life" ;; esac

# a ticket whose renewable life ends within the hour: renewed, with the warning
as_user "$NK" nfs logout -c "$CC" >/dev/null 2>&1
as_user "$NK" nfs login -k "$W/short.kt" -p shortrenew -c "$CC" >/dev/null 2>&1
sleep 1.2
err=$(as_user "$NK" nfs renew -c "$CC" 2>&1 >/dev/null); rc=$?
check_eq "a ticket renewable for one more hour is renewed" 0 "$rc"
check_contains "... with a warning that says to log in again" \
	"can be renewed only until" "$err"
