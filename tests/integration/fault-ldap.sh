#!/bin/sh
# LDAP slowed, hung, refusing and down, through a fault-injecting TCP proxy in front of a
# real slapd: the idmap ldap backend (connect/bind Timeout 1 s, Search-Timeout 2 s) and
# nfskeys-attrd's LDAP sync (LDAP-Timeout 1 s) answer within their timeouts with a clear
# error, and succeed when the delay is under the timeout.  No time is asserted: the
# proxy's own record (tcp-proxy.py) says the fault was in the path, the error names the
# timeout, and every wait is a hang guard (GUARD, 120 s, far beyond any load).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"
. "$top_srcdir/tests/harness/faults.sh"

[ -f "$NFSKEYS_PLUGIN_DIR/idmap-ldap.so" ] || skip_all "the ldap backend plugin was not built"
t_slapd_start "dc=nfskeys,dc=test" || skip_all "slapd cannot run here (slapd, ldap-utils, back_mdb)"
t_slapd_stop
sed -i "/inetorgperson.schema/a include $top_srcdir/data/nfskeys-attr.schema" "$SLAPD_DIR/slapd.conf"
t_slapd_restart || { sed 's/^/# /' "$SLAPD_DIR/slapd.log" | tail -20
	fail_all "slapd rejects the shipped data/nfskeys-attr.schema"; }
S=$SLAPD_SUFFIX
{
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$S"
	for i in 1 2 3 4 5 6 7 8; do
		printf 'dn: uid=user%d,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\nuid: user%d\ncn: user%d\nuidNumber: %d\ngidNumber: 20000\nhomeDirectory: /home/user%d\n\n' \
			$i "$S" $i $i $((10000 + i)) $i
	done
	printf 'dn: ou=nfskeys,%s\nobjectClass: organizationalUnit\nou: nfskeys\n\n' "$S"
	printf 'dn: cn=home,ou=nfskeys,%s\nobjectClass: nfskeysDirectoryPolicy\ncn: home\nnfskeysDomain: nfs://fleet\nnfskeysPath: /export/home\nnfskeysAttribute: actimeo=60\n' "$S"
} >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" || fail_all "ldapadd of entries using data/nfskeys-attr.schema failed"
t_proxy_start "$SLAPD_PORT" || skip_all "the TCP proxy did not start (python3)"
plan 24

cat >"$T_TMP/nfskeys.conf" <<CONF
[General]
Domain = ldap.test
[Translation]
Method = ldap
[LDAP]
URI = ldap://127.0.0.1:$PROXY_PORT/
Base = $S
User-Base = ou=people,$S
Timeout = 1
Search-Timeout = 2
Backoff-Max = 1
CONF
GUARD=120
field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p" | tr -d '"'; }
# One lookup in a fresh process (a new connection through the proxy): sets A (answer) and
# E (stderr); a lookup that hangs is ended by timeout(1) (A empty).
lookup() {
	A=$(echo "name-to-uid $1@ldap.test" |
		timeout $GUARD "$NFSKEYS" -c "$T_TMP/nfskeys.conf" idmap query --no-cache 2>"$T_TMP/err")
	E=$(cat "$T_TMP/err")
}

lookup user1
check_eq "through the proxy: user1 -> 10001" 10001 "$(echo "$A" | field id)"

# Every chunk held 150 ms: bind and search take two round trips, all under the timeouts.
t_proxy_mode delay 150
lookup user2
check_eq "delay 150 ms per chunk (under the timeouts): answered" 10002 "$(echo "$A" | field id)"
n=$(t_proxy_count delayed)
check "... and the delay was in the path ($n chunks held 150 ms by the proxy)" test "$n" -ge 2

# Every chunk held 3 s: the bind waits for Timeout (1 s) and fails.
t_proxy_mode delay 3000
lookup user3
check_eq "delay 3 s per chunk: backend failure" "Host is down" "$(echo "$A" | field error)"
n=$(t_proxy_count delayed)
check "... the proxy was holding its bind ($n chunks held)" test "$n" -ge 1
check_contains "... and stderr names the server and the timeout" \
	"ldap://127.0.0.1:$PROXY_PORT/: anonymous bind: Timed out" "$E"

# Accept and never answer.
t_proxy_mode hang
lookup user4
check_eq "hanging server: backend failure" "Host is down" "$(echo "$A" | field error)"
n=$(t_proxy_count "accept hang")
check "... the proxy took the connection and never answered ($n)" test "$n" -ge 1
check_contains "... saying it timed out" "Timed out" "$E"

# Close at once.
t_proxy_mode refuse
lookup user5
check_eq "refusing server: backend failure" "Host is down" "$(echo "$A" | field error)"
n=$(t_proxy_count "accept refuse")
check "... the proxy closed the connection at once ($n)" test "$n" -ge 1
check_contains "... saying it cannot contact the server" "Can't contact LDAP server" "$E"

# Nothing listening at all.
t_proxy_stop
lookup user5
check_eq "server down: backend failure" "Host is down" "$(echo "$A" | field error)"
check_contains "... saying it cannot contact the server" "Can't contact LDAP server" "$E"

# An established connection that then hangs: Search-Timeout (2 s) bounds the search.
t_proxy_start "$SLAPD_PORT" || not_ok "proxy restart"
sed -i "s|^URI = .*|URI = ldap://127.0.0.1:$PROXY_PORT/|" "$T_TMP/nfskeys.conf"
mkfifo "$T_TMP/in"
"$NFSKEYS" -c "$T_TMP/nfskeys.conf" idmap query --no-cache <"$T_TMP/in" >"$T_TMP/out" 2>"$T_TMP/qerr" &
qpid=$!
exec 3>"$T_TMP/in"
t_on_exit "kill $qpid"
ask() {
	want=$(($(wc -l <"$T_TMP/out") + 1))
	echo "name-to-uid $1@ldap.test" >&3
	t_wait_for "[ \$(wc -l <'$T_TMP/out') -ge $want ]" $GUARD
	A=$(sed -n "${want}p" "$T_TMP/out")
}
ask user6
check_eq "long-lived engine connected" 10006 "$(echo "$A" | field id)"
t_proxy_mode hang
ask user7
check_eq "connection hangs mid-session: backend failure" "Host is down" "$(echo "$A" | field error)"
# (answered while the proxy still holds the search: it stays in hang mode until below)
n=$(t_proxy_count held)
check "... the proxy held the search on the open connection ($n chunks)" test "$n" -ge 1
t_proxy_mode forward
sleep 1.2 # Backoff-Max 1 s
ask user8
check_eq "proxy forwards again: the engine recovers" 10008 "$(echo "$A" | field id)"
exec 3>&-
wait $qpid

# nfskeys-attrd's sync through the proxy: a hang costs LDAP-Timeout and is logged; the
# daemon keeps answering meanwhile; a delay under the timeout still syncs.
ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR=$(t_real_bin "$top_builddir/tools/nfsattr/nfsattr")
cat >"$T_TMP/attr.conf" <<EOF
[Attr]
Store = $T_TMP/attr.db
[Attrd]
Socket = $T_TMP/attrd.sock
LDAP-URI = ldap://127.0.0.1:$PROXY_PORT/
LDAP-Base = ou=nfskeys,$S
LDAP-Bind-DN = $SLAPD_ROOTDN
LDAP-Bind-Password-File = $SLAPD_ROOTPW_FILE
LDAP-Allow-Cleartext-Bind = yes
Sync-Interval = 1
LDAP-Timeout = 1
EOF
na() { "$NFSATTR" -c "$T_TMP/attr.conf" "$@"; }
t_proxy_mode hang
$T_DAEMON_WRAPPER "$ATTRD" -f -c "$T_TMP/attr.conf" -v >"$T_TMP/attrd.log" 2>&1 &
APID=$!
t_on_exit "kill $APID"
t_attrd_wait "$T_TMP/attrd.log"
t_wait_for "grep -q 'LDAP sync failed' '$T_TMP/attrd.log'" $GUARD
n=$(t_proxy_count "accept hang")
check "attrd: hung LDAP (the proxy took $n connections, never answered): the sync fails" \
	sh -c "[ $n -ge 1 ] && grep -q 'LDAP sync failed' '$T_TMP/attrd.log'"
check_contains "... with a clear message" "LDAP sync failed" \
	"$(grep 'LDAP sync failed' "$T_TMP/attrd.log" | head -n1)"
# the answer must come from the daemon itself (with no daemon, nfsattr stats answers
# fast from the store): its pid alive and its own uptime_seconds in the answer
ATTRD_PID=$APID ATTRD_CONF="$T_TMP/attr.conf"
t_attrd_alive; alive=$?
check "... and the daemon itself answers meanwhile (pid $APID alive, its stats over the socket)" \
	test "$alive" = 0
# (the daemon's own count of failed syncs, in an answer it gives while the server hangs)
f=$(na stats | awk '$1 == "ldap_failures_total" { print $2 }')
check "... and counts the failed syncs in that answer (ldap_failures_total ${f:-none})" \
	test "${f:-0}" -ge 1
t_proxy_mode delay 100
actimeo() { na show nfs://fleet/export/home/x | awk '$1 == "actimeo" { print $2 }'; }
t_wait_for '[ "$(actimeo)" = 60 ]' $GUARD
check_eq "delay 100 ms per chunk (under LDAP-Timeout): synced" "60" "$(actimeo)"
kill "$APID"; wait "$APID"
check_eq "attrd stops cleanly after the faults (exit 0)" 0 "$?"
