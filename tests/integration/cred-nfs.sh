#!/bin/sh
# nfskeys nfs against a real MIT KDC on loopback: login by keytab and by password,
# status, renew (renewal extends the expiry; a keytab re-acquires what cannot be
# renewed), logout, the default KEYRING:persistent:<uid> cache, and clear errors for a
# wrong password, an unknown principal and an unreachable KDC within a bounded time.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/kdc.sh"
plan 36

kdc_start NFSKEYS.TEST
kdc_addprinc alice 'alice-Pw-7'
kdc_addprinc nfsuser/client.test
kdc_ktadd "$T_TMP/user.kt" nfsuser/client.test
kdc_kadmin "addprinc -randkey -maxrenewlife 0 norenew"
kdc_ktadd "$T_TMP/norenew.kt" norenew
kdc_kadmin "addprinc -pw short-Pw-7 -maxlife 30m shortlife"
CC="KEYRING:persistent:$(id -u):nfskeys-test-$$"
t_on_exit "kdestroy -c $CC"

status_field() { sed -n "s/^$1: *//p" "$T_TMP/status"; }

# login by keytab
"$NFSKEYS" nfs login -k "$T_TMP/user.kt" -c "$CC" >"$T_TMP/out" 2>&1
check_eq "login by keytab" 0 $?
"$NFSKEYS" nfs status -c "$CC" >"$T_TMP/status" 2>&1
check_eq "status succeeds" 0 $?
check_eq "status shows the principal" "nfsuser/client.test@NFSKEYS.TEST" "$(status_field principal)"
check_eq "status shows the cache" "$CC" "$(status_field cache)"
exp1=$(status_field expires)
case "$exp1" in 20[0-9][0-9]-*) ok "status shows the expiry ($exp1)" ;; *) not_ok "status shows the expiry"; diag "$(cat "$T_TMP/status")" ;; esac
check_contains "the ticket really is in the keyring cache" "nfsuser/client.test@NFSKEYS.TEST" "$(klist -c "$CC" 2>&1)"

# renew extends the expiry (ticket times have one-second resolution)
sleep 1.2
"$NFSKEYS" nfs renew -c "$CC" >"$T_TMP/status" 2>&1
check_eq "renew succeeds" 0 $?
exp2=$(status_field expires)
check "renew extends the expiry ($exp1 -> $exp2)" expr "$exp2" \> "$exp1"

# logout
"$NFSKEYS" nfs logout -c "$CC" >"$T_TMP/out" 2>&1
check_eq "logout" 0 $?
klist -c "$CC" >/dev/null 2>&1
check_eq "logout destroyed the cache" 1 $?
err=$("$NFSKEYS" nfs status -c "$CC" 2>&1); rc=$?
check_eq "status after logout fails" 1 "$rc"
check_contains "... saying there are no credentials" "no NFS credentials" "$err"
"$NFSKEYS" nfs logout -c "$CC" >/dev/null 2>&1
check_eq "second logout fails" 1 $?

# login by password, from standard input
printf 'alice-Pw-7\n' | "$NFSKEYS" nfs login -p alice -c "$CC" >"$T_TMP/status" 2>&1
check_eq "login by password" 0 $?
check_eq "... as alice" "alice@NFSKEYS.TEST" "$(status_field principal)"
check_eq "... no warning for a 10-hour ticket" "" "$(grep -i warning "$T_TMP/status")"
"$NFSKEYS" nfs logout -c "$CC" >/dev/null 2>&1

# a renewable ticket shorter than the hourly renewal timer's period ends between two runs
# (and an ended ticket cannot be renewed): login and renew say so
printf 'short-Pw-7\n' | "$NFSKEYS" nfs login -p shortlife -c "$CC" >"$T_TMP/status" 2>&1
check_eq "login with a 30-minute ticket" 0 $?
check_contains "... warns that the hourly renewal timer cannot keep it" \
	"ends in 30 min, before the next run of the hourly renewal timer" "$(cat "$T_TMP/status")"
"$NFSKEYS" nfs renew -c "$CC" >"$T_TMP/status" 2>&1
check_contains "... and so does renew" "before the next run of the hourly renewal timer" \
	"$(cat "$T_TMP/status")"
"$NFSKEYS" nfs logout -c "$CC" >/dev/null 2>&1

# tickets that cannot be renewed: renew fails clearly, or re-acquires from a keytab
"$NFSKEYS" nfs login -k "$T_TMP/norenew.kt" -c "$CC" >"$T_TMP/status" 2>&1
check_eq "login with a non-renewable principal" "no" "$(status_field renewable)"
expn=$(status_field expires)
err=$("$NFSKEYS" nfs renew -c "$CC" 2>&1); rc=$?
check_eq "renew without a keytab fails" 1 "$rc"
check_contains "... saying why" "not renewable" "$err"
sleep 1.2
"$NFSKEYS" nfs renew -k "$T_TMP/norenew.kt" -c "$CC" >"$T_TMP/status" 2>&1
check_eq "renew with the keytab re-acquires" 0 $?
exp3=$(status_field expires)
check "... with a later expiry ($expn -> $exp3)" expr "$exp3" \> "$expn"
"$NFSKEYS" nfs logout -c "$CC" >/dev/null 2>&1

# errors, each under a hang guard (timeout(1), 120 s, far beyond any load: exit 124)
G="timeout 120"
err=$(printf 'wrong-password\n' | $G "$NFSKEYS" nfs login -p alice -c "$CC" 2>&1); rc=$?
check_eq "wrong password fails" 1 "$rc"
check_contains "... saying so" "wrong password" "$err"
err=$(printf 'x\n' | $G "$NFSKEYS" nfs login -p nobody-here -c "$CC" 2>&1); rc=$?
check_contains "unknown principal fails clearly" "not found in Kerberos database" "$err"
dead=$(t_free_port)
sed "s/127.0.0.1:$KDC_PORT/127.0.0.1:$dead/" "$KRB5_CONFIG" >"$T_TMP/dead.conf"
err=$(printf 'alice-Pw-7\n' | KRB5_CONFIG="$T_TMP/dead.conf" $G "$NFSKEYS" nfs login -p alice -c "$CC" 2>&1); rc=$?
check_eq "unreachable KDC fails" 1 "$rc"
check_contains "... saying it cannot reach the KDC" "Cannot contact any KDC" "$err"
# an address nobody answers from (TEST-NET-1): bounded by request_timeout
sed "s/127.0.0.1:$KDC_PORT/192.0.2.1:$dead/" "$KRB5_CONFIG" >"$T_TMP/blackhole.conf"
err=$(printf 'alice-Pw-7\n' | KRB5_CONFIG="$T_TMP/blackhole.conf" $G "$NFSKEYS" nfs login -p alice -c "$CC" 2>&1)
rc=$?
check_contains "KDC at an unanswering address fails clearly" "Cannot contact any KDC" "$err"
check_eq "... on its own (exit 1, not ended by the hang guard)" 1 "$rc"

# the default cache: KEYRING:persistent:<uid>
"$NFSKEYS" nfs login -k "$T_TMP/user.kt" >"$T_TMP/status" 2>&1
check_eq "login into the default cache" 0 $?
check_contains "... which is KEYRING:persistent:<uid>" "KEYRING:persistent:$(id -u)" "$(status_field cache)"
"$NFSKEYS" nfs logout >/dev/null 2>&1
check_eq "logout from the default cache" 0 $?

# the systemd user units that run renew
svc="$top_builddir/data/nfskeys-nfs-renew.service"
check "renew service runs the installed nfskeys (@bindir@ substituted)" \
	grep -qE '^ExecStart=/[^@ ]*/nfskeys nfs renew$' "$svc"
check "renew timer repeats hourly and is installable" sh -c \
	"grep -q '^OnUnitActiveSec=1h' '$top_srcdir/data/nfskeys-nfs-renew.timer' &&
	 grep -q '^WantedBy=timers.target' '$top_srcdir/data/nfskeys-nfs-renew.timer'"
