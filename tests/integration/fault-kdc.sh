#!/bin/sh
# The KDC slowed, hung and refusing, through a fault-injecting TCP proxy in front of a real
# MIT krb5kdc (clients reach it over TCP only, request_timeout = 3 s, max_retries = 1):
# `nfskeys nfs login` and `nfskeys afs login` succeed under a delay, and return with a clear
# error when the KDC hangs or refuses.  No time is asserted: the proxy's own record says
# the fault was in the path (chunks it delayed, requests it held or refused), and each
# command runs under a hang guard of 300 s (timeout(1): exit 124, never one of the exit
# statuses checked).  (The hang costs MIT krb5's own bound, ~25 s; the two commands wait
# side by side.)
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/kdc.sh"
. "$top_srcdir/tests/harness/faults.sh"

kdc_start NFSKEYS.TEST
kdc_addprinc alice 'alice-Pw-7'
kdc_addprinc afs/nfskeys.test
t_proxy_start "$KDC_PORT" || skip_all "the TCP proxy did not start (python3)"
plan 17

# The same realm, reached through the proxy over TCP only (udp_preference_limit = 1),
sed -e "s|kdc = 127.0.0.1:$KDC_PORT|kdc = 127.0.0.1:$PROXY_PORT|" \
	-e "s|request_timeout = .*|request_timeout = 3\n\tudp_preference_limit = 1|" \
	"$KRB5_CONFIG" >"$T_TMP/proxy.conf"
grep -q "127.0.0.1:$PROXY_PORT" "$T_TMP/proxy.conf" || skip_all "cannot rewrite krb5.conf"
CC="KEYRING:persistent:$(id -u):nfskeys-fault-$$"
t_on_exit "kdestroy -c $CC"
GUARD=300
login() { # run nfs login with alice's password through the proxy; sets RC, OUT
	OUT=$(printf 'alice-Pw-7\n' | KRB5_CONFIG="$T_TMP/proxy.conf" \
		timeout $GUARD "$NFSKEYS" nfs login -p alice -c "$CC" 2>&1)
	RC=$?
}
afs() { # afs login --print with the TGT in $KRB5CCNAME; sets RC, OUT
	OUT=$(KRB5_CONFIG="$T_TMP/proxy.conf" timeout $GUARD "$NFSKEYS" afs login nfskeys.test \
		--print 2>&1 >/dev/null)
	RC=$?
}

login
check_eq "nfs login through the proxy" 0 "$RC"
[ "$RC" = 0 ] || diag "$OUT"
"$NFSKEYS" nfs logout -c "$CC" >/dev/null 2>&1

t_proxy_mode delay 300
login
check_eq "KDC delayed 300 ms per chunk: nfs login succeeds" 0 "$RC"
n=$(t_proxy_count delayed)
check "... and the delay was in the path ($n chunks held 300 ms by the proxy)" test "$n" -ge 2
"$NFSKEYS" nfs logout -c "$CC" >/dev/null 2>&1

# A hanging KDC: MIT krb5 1.20 (installed here) ignores request_timeout (1.22 and later)
# and gives a TCP KDC 10 s, then tries UDP, then waits 15 s more with max_retries = 1:
# about 25 s.  nfs login and afs login run side by side to keep the test short; afs login
# first gets a fresh TGT straight from the KDC, so only its service ticket request goes
# through the proxy.
kdc_kinit alice 'alice-Pw-7'
t_proxy_mode hang
(login; echo "$RC" >"$T_TMP/nfs.rc"; printf '%s\n' "$OUT" >"$T_TMP/nfs.out") &
p1=$!
(afs; echo "$RC" >"$T_TMP/afs.rc"; printf '%s\n' "$OUT" >"$T_TMP/afs.out") &
p2=$!
wait $p1 $p2
# each command's requests went to the proxy, which took them and never answered
held=$(t_proxy_count "accept hang")
read RC <"$T_TMP/nfs.rc"; OUT=$(cat "$T_TMP/nfs.out")
check_eq "hanging KDC: nfs login fails (not ended by the hang guard)" 1 "$RC"
check_contains "... saying it cannot reach the KDC" "Cannot contact any KDC" "$OUT"
check "... after the proxy took requests and never answered ($held, both commands)" \
	test "$held" -ge 2
case "$OUT" in
*alice-Pw-7*) not_ok "... and the error text holds no password" ;;
*) ok "... and the error text holds no password" ;;
esac
read RC <"$T_TMP/afs.rc"; OUT=$(cat "$T_TMP/afs.out")
check_eq "hanging KDC: afs login fails (not ended by the hang guard)" 1 "$RC"
check_contains "... saying it cannot reach the KDC" "Cannot contact any KDC" "$OUT"
check_eq "... and no ticket for afs/nfskeys.test was cached" 0 \
	"$(klist 2>/dev/null | grep -c 'afs/nfskeys.test@')"

t_proxy_mode refuse
login
check_eq "refusing KDC: nfs login fails" 1 "$RC"
# (Normally "Cannot contact any KDC"; libkrb5 then also tries UDP on the proxy's port
# number, where another test's KDC may answer for another realm: "Invalid message type".)
check_contains "... saying it cannot get a ticket" "cannot get a ticket for alice@NFSKEYS.TEST" "$OUT"
n=$(t_proxy_count "accept refuse")
check "... refused by the proxy ($n connections closed at once)" test "$n" -ge 1
kdc_kinit alice 'alice-Pw-7'
n0=$(t_proxy_count "accept refuse")
afs
check_contains "refusing KDC: afs login fails clearly (rc $RC)" "1:nfskeys: no ticket for afs/nfskeys.test" \
	"$RC:$OUT"
n=$(($(t_proxy_count "accept refuse") - n0))
check "... refused by the proxy ($n connections closed at once)" test "$n" -ge 1

# nfskeys afs under a delay: the service ticket request through the proxy.
kdc_kinit alice 'alice-Pw-7'
t_proxy_mode delay 200
afs
check_eq "KDC delayed 200 ms per chunk: afs login --print succeeds" 0 "$RC"
[ "$RC" = 0 ] || diag "$OUT"
n=$(t_proxy_count delayed)
check "... and the delay was in the path ($n chunks held 200 ms by the proxy)" test "$n" -ge 2
