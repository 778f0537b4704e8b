#!/bin/sh
# doc/security/FINDINGS.md D6: work queued for a connection that closes is cancelled.  The ldap
# backend against a real slapd made slow (a proxy holds every chunk 400 ms: about 0.8 s a
# search), one worker.  uid 65534 pipelines 16 lookups of distinct names and closes;
# at once the worker queue is empty again (only the running lookup is left, detached: its
# answer fills the cache and goes to nobody), another user's lookup is answered with at
# most the running searches run before it (the daemon's backend counters, not a clock),
# and only the searches that had started ran against the directory.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/slapd.sh"
. "$top_srcdir/tests/harness/faults.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (another uid)"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 missing (run as another uid)"
t_idmapd_slapd_users $(seq 0 20)
plan 8
chmod 755 "$T_TMP"
cp "$top_srcdir/tests/harness/idmapd-stress.py" "$T_TMP/"
chmod 644 "$T_TMP/idmapd-stress.py"
t_proxy_start "$SLAPD_PORT" || fail_all "the TCP proxy did not start"

t_idmapd_conf "[General]" "Domain = ldap.test" "[Translation]" "Method = ldap" \
	"[LDAP]" "URI = ldap://127.0.0.1:$PROXY_PORT/" "Base = $S" "User-Base = ou=people,$S" \
	"Timeout = 5" "Search-Timeout = 10" "[Idmapd]" "Workers = 1" \
	"Max-Queue-Per-User = 32" "Stale-Limit = 0" "Refresh-Ahead = 0"
chmod 644 "$IDMAPD_CONF"
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; fail_all "nfskeys-idmapd did not start"; }
chmod 777 "$IDMAPD_SOCK"
look() { timeout "$2" "$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid "$1@ldap.test"; }
backend_calls() {
	"$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats |
		awk '$1 ~ /^backend_requests_total/ { n += $2 } END { print n + 0 }'
}

look user0 10 >/dev/null || fail_all "first lookup through LDAP failed"
t_proxy_mode delay 400
calls0=$(backend_calls)

keys=
for i in $(seq 1 16); do keys="$keys user$i@ldap.test"; done
# the client closes after 1 s: one search runs, 15 lookups wait in the queue
setpriv --reuid=65534 --regid=65534 --clear-groups \
	/usr/bin/python3 "$T_TMP/idmapd-stress.py" "$IDMAPD_SOCK" burst 1 $keys >"$T_TMP/burst.out" 2>&1
depth=$(t_idmapd_stat queue_depth)
jobs=$(t_idmapd_stat queue_jobs)
diag "right after the close: queue_depth $depth, queue_jobs $jobs," \
	"queue_cancelled_total $(t_idmapd_stat queue_cancelled_total)"
check_eq "the burst was sent" "sent=16" "$(cat "$T_TMP/burst.out")"
check_eq "the queue is empty at once after the client closed" 0 "$depth"
check "... only the running lookups are left (queue_jobs $jobs <= 2)" test "$jobs" -le 2
check "... the others were cancelled ($(t_idmapd_stat queue_cancelled_total) >= 14)" \
	test "$(t_idmapd_stat queue_cancelled_total)" -ge 14

# (120 s: a hang guard; 15 queued searches at about 0.8 s each would be answered well
# within it, and the backend count below tells them apart)
out=$(look user20 120)
calls=$(($(backend_calls) - calls0))
check_contains "another user's lookup is answered" "10020" "$out"
check "... without waiting for the cancelled ones: $calls backend calls by then (at most 3)" \
	test "$calls" -le 3

t_proxy_mode forward
sleep 2
calls=$(($(backend_calls) - calls0))
diag "backend calls after the burst: $calls (16 sent, 1 other lookup)"
check "backend calls run after the burst: $calls (at most 3: the running ones + the other's)" \
	test "$calls" -le 3
check "the daemon is fine" look user0 5
