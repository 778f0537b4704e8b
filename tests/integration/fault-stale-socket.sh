#!/bin/sh
# Both daemons killed with SIGKILL leave their socket file behind: the clients say plainly
# that the daemon is not running, the upcall helper answers in-process, and a new daemon
# started with no manual cleanup replaces the stale socket, after which the clients and the
# helper use it again.  A second daemon does not take the socket of a live one.
# (idmapd-helper.sh covers the helper's fallback while the daemon is stopped or wedged.)
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/faults.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"
plan 16

t_idmapd_conf
t_idmapd_start || { cat "$T_TMP/idmapd.log"; exit 1; }
look() { "$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid "$1@example.test" 2>&1; }
check_contains "daemon answers" "2001" "$(look alice)"

# A second daemon on the same socket: refused, the first keeps it.
"$IDMAPD" --foreground --config "$IDMAPD_CONF" >"$T_TMP/second.log" 2>&1 &
p2=$!
t_wait_for "! kill -0 $p2" 10 || kill -9 $p2
wait $p2; rc=$?
check "a second idmapd refuses a live daemon's socket (exit $rc)" test "$rc" != 0
check_contains "... saying the address is in use" "in use" "$(cat "$T_TMP/second.log")"
check_contains "the first daemon still answers" "2001" "$(look alice)"

kill -KILL "$IDMAPD_PID"; wait "$IDMAPD_PID" 2>/dev/null; IDMAPD_PID=
check "SIGKILL leaves the socket file behind" test -S "$IDMAPD_SOCK"
out=$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd ping 2>&1); rc=$?
check_contains "client on the stale socket: exit 1, says not running (rc $rc)" \
	"1:nfskeys: ping: nfskeys-idmapd is not running (no listener on" "$rc:$out"

# The helper, through a real request-key upcall, with the stale socket: in-process answer.
helper_exec="$top_builddir/tools/upcall/nfskeys-upcall"
[ -x "$top_builddir/tools/upcall/.libs/nfskeys-upcall" ] && helper_exec="$top_builddir/tools/upcall/.libs/nfskeys-upcall"
cat >"$T_TMP/helper.sh" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
LD_LIBRARY_PATH='$top_builddir/libnfskeys/.libs'; export LD_LIBRARY_PATH
exec '$helper_exec' -c '$IDMAPD_CONF' "\$@" 2>>'$T_TMP/helper.err'
SH
chmod +x "$T_TMP/helper.sh"
if t_route_upcalls "$T_TMP/helper.sh"; then
	check_eq "helper on the stale socket answers in-process" "$(t_hex 2001)00" \
		"$(t_upcall uid:alice@example.test | head -n1)"
	routed=1
else
	skip "needs root, keyctl and a writable /etc/request-key.d"
	routed=
fi

# New daemon, no cleanup: it replaces the stale socket.
t_idmapd_start && ok "new idmapd starts over the stale socket" ||
	{ not_ok "new idmapd starts over the stale socket"; sed 's/^/# /' "$T_TMP/idmapd.log"; }
check_contains "clients recover" "10003" "$(look user3)"
if [ -n "$routed" ]; then
	m0=$(t_idmapd_stat 'lookups_total{result="miss"}')
	check_eq "helper recovers: user:10004" "$(t_hex user4@example.test)" \
		"$(t_upcall user:10004 | head -n1)"
	check_eq "... answered by the new daemon" $((m0 + 1)) \
		"$(t_idmapd_stat 'lookups_total{result="miss"}')"
else
	skip "no request-key route"; skip "no request-key route"
fi
t_idmapd_stop
check_eq "new daemon stops cleanly" 0 "$?"

# The same for nfskeys-attrd.
ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR=$(t_real_bin "$top_builddir/tools/nfsattr/nfsattr")
ACONF="$T_TMP/attr.conf"
ASOCK="$T_TMP/attrd.sock"
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n' "$T_TMP/attr.db" "$ASOCK" >"$ACONF"
A_PID=
t_on_exit '[ -n "$A_PID" ] && kill -9 $A_PID'
"$ATTRD" -f -c "$ACONF" >>"$T_TMP/attrd.log" 2>&1 &
A_PID=$!
t_attrd_wait "$T_TMP/attrd.log" 1
kill -KILL "$A_PID"; wait "$A_PID" 2>/dev/null; A_PID=
check "attrd: SIGKILL leaves the socket file behind" test -S "$ASOCK"
mkdir -p "$T_TMP/d"
"$NFSATTR" -c "$ACONF" set "$T_TMP/d" cache=none >"$T_TMP/out" 2>&1; rc=$?
check_contains "nfsattr on the stale socket: exit 5, not running (rc $rc)" \
	"5:nfsattr: nfskeys-attrd is not running (no listener on" "$rc:$(head -n1 "$T_TMP/out")"
$T_DAEMON_WRAPPER "$ATTRD" -f -c "$ACONF" >>"$T_TMP/attrd.log" 2>&1 &
A_PID=$!
t_attrd_wait "$T_TMP/attrd.log" 2 || sed 's/^/# /' "$T_TMP/attrd.log"
check "new attrd over the stale socket: set works" "$NFSATTR" -c "$ACONF" set "$T_TMP/d" cache=none
kill "$A_PID"; wait "$A_PID"; rc=$?; A_PID=
check_eq "new attrd stops cleanly" 0 "$rc"
