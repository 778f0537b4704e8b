#!/bin/sh
# doc/security/FINDINGS.md D8: one user cannot take nfskeys-attrd's connection slots from the
# others.  uid 65534 opens 150 connections against Max-Clients = 100 with
# Max-Clients-Per-User = 20: it gets 20 (the rest are closed at once, counted and logged)
# and uid 65533 still connects and is answered.  Also: the systemd units' LimitNOFILE
# leaves room for the default Max-Clients, and a daemon started with fewer descriptors
# than Max-Clients needs says so.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/attrd.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (other uids)"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 missing (run as another uid)"
command -v prlimit >/dev/null || skip_all "prlimit (util-linux) missing"
plan 10
t_ou_load
chmod 755 "$T_TMP"
as_uid() { _u=$1; shift; setpriv --reuid="$_u" --regid="$_u" --clear-groups "$@"; }
cp "$top_srcdir/tests/harness/rpc-limits.py" "$T_TMP/"
chmod 644 "$T_TMP/rpc-limits.py"
LIM="$T_TMP/rpc-limits.py"
ASOCK="$T_TMP/attrd.sock"
stat_of() { "$NFSATTR" -c "$ATTRD_CONF" stats | awk -v k="$1" '$1 == k { print $2 }'; }

printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\nMax-Clients = 100\nMax-Clients-Per-User = 20\n' \
	"$T_TMP/attr.db" "$ASOCK" >"$ATTRD_CONF"
chmod 644 "$ATTRD_CONF"
t_attrd_start || { sed 's/^/# /' "$ATTRD_LOG"; fail_all "nfskeys-attrd did not start"; }

# uid 65534 holds its connections until the test releases them: everything below happens
# while it holds them
as_uid 65534 /usr/bin/python3 "$LIM" "$ASOCK" 0x20004e02 1 hold-until 150 "$T_TMP/release" \
	>"$T_TMP/hold.out" 2>&1 &
HOLD=$!
t_on_exit "kill $HOLD"
t_wait_for "grep -q connected= '$T_TMP/hold.out'" 120
# the daemon accepts (and refuses) the last of the backlog: all but 20 refused
want=$(($(sed -n 's/^connected=//p' "$T_TMP/hold.out") - 20))
t_wait_for "[ \"\$(stat_of connections_refused_user_total)\" -ge $want ]" 120
held=$(stat_of clients)
other=$(as_uid 65533 $T_OU_ENV "$(t_ou nfsattr)" -c "$ATTRD_CONF" stats 2>&1)
check_contains "uid 65533 connects and is answered by the daemon while uid 65534 holds what it can" \
	"uptime_seconds" "$other"
check "... uid 65534 was held to 20 connections (refused: $(stat_of connections_refused_user_total))" \
	test "$(stat_of connections_refused_user_total)" -ge 100
check "... the daemon had at most 21 clients meanwhile ($held)" test "$held" -le 21
check_eq "... and Max-Clients was never reached" 0 "$(stat_of connections_refused_total)"
check_contains "... logged" "refusing more" "$(cat "$ATTRD_LOG")"
check "... all while uid 65534 still held them" kill -0 $HOLD
touch "$T_TMP/release"
wait $HOLD
t_wait_for "[ \"\$(stat_of clients)\" -le 1 ]" 10
check "... root is not limited per user: 30 connections answered" \
	sh -c "python3 '$LIM' '$ASOCK' 0x20004e02 1 clients 30 0 true | grep -qx answered=30"
t_attrd_stop

# A unit's LimitNOFILE must leave room for the default Max-Clients (1024 in both daemons)
# plus the daemon's own descriptors.
for u in attrd idmapd; do
	n=$(sed -n 's/^LimitNOFILE=//p' "$top_srcdir/data/nfskeys-$u.service.in")
	check "nfskeys-$u.service sets LimitNOFILE ($n) to at least Max-Clients 1024 + 256" \
		test "${n:-0}" -ge 1280
done

# A daemon that cannot hold Max-Clients connections says so at start.
: >"$ATTRD_LOG"
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\nMax-Clients = 1000\n' \
	"$T_TMP/attr.db" "$ASOCK" >"$ATTRD_CONF"
T_DAEMON_WRAPPER="prlimit --nofile=256 -- $T_DAEMON_WRAPPER" t_attrd_start ||
	sed 's/^/# /' "$ATTRD_LOG"
check_contains "attrd with 256 descriptors and Max-Clients = 1000 warns" \
	"RLIMIT_NOFILE" "$(cat "$ATTRD_LOG")"
t_attrd_stop
