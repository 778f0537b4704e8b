#!/bin/sh
# The sid backend's ad ranges when the directory does not answer: a directory that takes
# connections and never replies (tests/harness/tcp-proxy.py in hang mode).  The first
# lookup waits AD-Timeout once (no second try on a new connection), then the range backs
# off: the lookups queued behind it fail at once, without a connection each, the failure
# is logged once with the next try, and after the backoff the next lookup tries again,
# the wait doubling.  Counted at the proxy (its connections), not timed.
. "$top_srcdir/tests/harness/lib.sh"
plan 6

echo hang >"$T_TMP/mode"
python3 "$top_srcdir/tests/harness/tcp-proxy.py" 127.0.0.1 9 "$T_TMP/mode" "$T_TMP/port" \
	>"$T_TMP/proxy.log" 2>&1 &
t_on_exit "kill $!"
t_wait_for "test -s '$T_TMP/port'" 10 || diag "the proxy did not start: $(cat "$T_TMP/proxy.log")"
DOM=S-1-5-21-1000-2000-3000
cat >"$T_TMP/nfskeys.conf" <<CONF
[General]
Domain = nfskeys.test
[Translation]
Method = sid
[SID]
Auto-Domains = no
State-File = $T_TMP/slices
$DOM = ad 100000 - 199999
AD-URI = ldap://127.0.0.1:$(cat "$T_TMP/port")
AD-Base = dc=nfskeys,dc=test
AD-Timeout = 1
CONF
accepts() { grep -c '^accept' "$T_TMP/proxy.log"; }

# five SIDs of the domain in one process (the plugin's state is the process's)
printf '%s\n' "$DOM-1101" "$DOM-1102" "$DOM-1103" "$DOM-1104" "$DOM-1105" |
	"$NFSKEYS" -c "$T_TMP/nfskeys.conf" idmap sid -L - >"$T_TMP/out" 2>"$T_TMP/err"
sed 's/^/# /' "$T_TMP/err"
check_eq "directory silent: each of the five SIDs has no mapping" 5 \
	"$(grep -c "^nfskeys: idmap sid: $DOM-110[1-5]: no mapping" "$T_TMP/err")"
# one connection; two if this host stalled the process past the 1 s backoff between two
# lookups (a second try on a new connection per lookup made ten)
n=$(accepts)
check "... with one connection to the directory for all five ($n), not one or two each" \
	test "$n" -ge 1 -a "$n" -le 2
uri="ldap://127.0.0.1:$(cat "$T_TMP/port")"
check_eq "... the failure logged once, with the next try" \
	"nfskeys: warning: idmap sid ad: $uri: bind: Timed out; next try in 1 s" \
	"$(grep 'warning: idmap sid ad' "$T_TMP/err" | head -2)"

# after the backoff the next lookup tries again, and the backoff doubles: two lookups in
# nfskeys-idmapd (whose plugin state lasts), the second 1.5 s after the first failure was
# logged
. "$top_srcdir/tests/harness/idmapd.sh"
cat >>"$T_TMP/nfskeys.conf" <<CONF
[Idmapd]
Socket = $IDMAPD_SOCK
Kernel-Keyrings = nfskeys-test-none-$$
CONF
IDMAPD_CONF="$T_TMP/nfskeys.conf"
t_idmapd_start || diag "$(cat "$T_TMP/idmapd.log")"
n0=$(accepts)
"$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup sid-to-uid "$DOM-1201" >"$T_TMP/l1" 2>&1
t_wait_for "grep -q 'next try in 1 s' '$T_TMP/idmapd.log'" 30
sleep 1.5
"$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup sid-to-uid "$DOM-1202" >"$T_TMP/l2" 2>&1
sed 's/^/# /' "$T_TMP/l1" "$T_TMP/l2" "$T_TMP/idmapd.log"
check_eq "after the backoff the next lookup connects again (one connection each)" 2 \
	"$(($(accepts) - n0))"
check_contains "... and, failing again, backs off twice as long" "next try in 2 s" \
	"$(cat "$T_TMP/idmapd.log")"
check "... both SIDs failed" eval '! grep -q "^[0-9]" "$T_TMP/l1" "$T_TMP/l2"'
t_idmapd_stop
