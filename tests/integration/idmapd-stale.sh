#!/bin/sh
# nfskeys-idmapd with the ldap backend against a real slapd: when the directory is down,
# expired positive answers are served stale within Stale-Limit, then names map to nobody
# with the short nobody TTL; when it comes back, fresh answers return.  A hung directory
# (slapd stopped with SIGSTOP) delays only the lookups that need it: cached answers are
# still given at once.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/slapd.sh"

t_idmapd_slapd_users 0 1 2 3 4 5 6 7 8 9
plan 13

cat >"$IDMAPD_CONF" <<CONF
[General]
Domain = ldap.test
[Translation]
Method = ldap
[LDAP]
URI = $SLAPD_URI
Base = $S
User-Base = ou=people,$S
Timeout = 1
Search-Timeout = 2
Backoff-Max = 1
[Idmap]
Positive-TTL = 2
[Mapping]
Nobody-TTL = 7
[Idmapd]
Socket = $IDMAPD_SOCK
Kernel-Keyrings = nfskeys-test-none-$$
Refresh-Ahead = 0
Stale-Limit = 4
Stale-TTL = 1
Stale-Wait = 300
CONF
look() { "$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup --nobody name-to-uid "$1@ldap.test" 2>&1; }
nobody=$(id -u nobody 2>/dev/null || echo 65534)

t_idmapd_start || { cat "$T_TMP/idmapd.log"; }
check_contains "lookup through LDAP" "10001	" "$(look user1)"
look user2 >/dev/null

# Directory hung: a miss waits for the LDAP search timeout, a cached answer does not.
kill -STOP "$(cat "$SLAPD_DIR/slapd.pid")"
look user5 >"$T_TMP/slow.out" &
slow=$!
sleep 0.2
out=$(look user2)
check_contains "cached answer while LDAP hangs" "10002	" "$out"
check "given while the lookup that needs LDAP still waits" kill -0 "$slow"
kill -CONT "$(cat "$SLAPD_DIR/slapd.pid")"
wait $slow

# A fresh fetch of user1 at a known time, then the directory goes down and the answer
# expires (Positive-TTL 2 s): served stale.
"$NFSKEYS" -c "$IDMAPD_CONF" idmapd flush name-to-uid user1@ldap.test >/dev/null
look user1 >/dev/null

t_slapd_kill
sleep 2.3
out=$(look user1)
check_contains "expired answer served while LDAP is down" "10001	" "$out"
check_contains "and marked stale" "stale" "$out"
check_contains "with the short Stale-TTL" "ttl=1 " "$out"
stale=$(t_idmapd_stat 'lookups_total{result="stale"}')
check "stale answers are counted ($stale)" test "${stale:-0}" -ge 1

# Past the Stale-Limit (4 s after expiry): nobody, with the short nobody TTL.
sleep 4.5
out=$(look user1)
check_contains "past the limit the name maps to nobody" "$nobody	" "$out"
ttl=$(echo "$out" | sed -n 's/.*ttl=\([0-9]*\).*/\1/p')
check "with a short TTL ($ttl s <= 7)" test "${ttl:-999}" -le 7

# Directory back: a real answer again (after the backend's backoff and Stale-TTL retry).
t_slapd_restart
t_wait_for "look user1 | grep -q '^10001	'" 10
check_contains "LDAP back: fresh answer" "10001	" "$(look user1)"

# Directory hung while an answer expires: after Stale-Wait (300 ms) the waiting caller
# gets the stale answer instead of waiting for the search timeout (2 s).
"$NFSKEYS" -c "$IDMAPD_CONF" idmapd flush name-to-uid user3@ldap.test >/dev/null 2>&1
look user3 >/dev/null
kill -STOP "$(cat "$SLAPD_DIR/slapd.pid")"
sleep 2.3
out=$(look user3)
kill -CONT "$(cat "$SLAPD_DIR/slapd.pid")"
check_contains "hung directory: expired answer served stale" "10003	ttl=1 backend=ldap stale" "$out"
check_contains "by the Stale-Wait timer, not after the search timeout" \
	"backend slow; serving the stale answer" "$(cat "$T_TMP/idmapd.log")"
t_idmapd_stop
rc=$?
check_eq "daemon stops cleanly (exit 0; under ASan: no leaks)" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T_TMP/idmapd.log" | tail -60
