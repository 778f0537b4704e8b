#!/bin/sh
# Resource limits of both daemons (nfskeys-idmapd, nfskeys-attrd), each on its own socket:
# 1000 concurrent clients answered, and another client served while all 1000 still hold
# their connections; past Max-Clients extra clients are closed at once, counted and logged;
# a silent client and one stalled mid-record do not hold up others (another client is
# answered while both are still connected) and, with a short Idle-Timeout, are dropped,
# counted as idle, and no sooner than the timeout by the daemon's own clock; a message of
# exactly the size cap is answered and one byte more drops the connection; out of
# descriptors (RLIMIT_NOFILE 64) the daemon neither spins nor dies.
# No check bounds how long anything takes: the first daemon of each kind has Idle-Timeout
# 600 s, so nothing is idle-dropped however slow the machine, and the waits are hang guards
# (tests/harness/rpc-limits.py: 120 s) that fail a check only when something hangs.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/faults.sh"

ulimit -n 4096 2>/dev/null || skip_all "cannot raise RLIMIT_NOFILE to 4096 (ulimit -n)"
plan 34
LIM="python3 $top_srcdir/tests/harness/rpc-limits.py"
val() { sed -n "s/^$1=//p" "$T_TMP/lim.out"; }
# the daemon's sockets (the listening one, its clients'; not its store's files)
socks() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'socket:'; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# limits NAME SOCK PROG PID LOG CAP OTHER-CMD ALIVE-CMD: the checks common to both daemons
# (Idle-Timeout 600 s).  OTHER-CMD (run by sh meanwhile) and ALIVE-CMD (eval'd here) must
# succeed only on the daemon's own answer: a client that falls back to something else when
# it gets none proves nothing about the daemon.
limits() {
	name=$1 sock=$2 prog=$3 pid=$4 log=$5 cap=$6 other=$7 alive=$8
	s0=$(socks "$pid")
	$LIM "$sock" "$prog" 1 clients 1000 20 "$other" >"$T_TMP/lim.out" 2>&1
	check_eq "$name: 1000 concurrent clients all answered" 1000 "$(val answered)"
	check_eq "$name: another client served while all 1000 still hold their connections (rc, held)" \
		"0 1000" "$(val other_rc) $(val held_open)"
	check_eq "$name: past Max-Clients 1010, extra clients closed at once (answered/closed)" \
		"10/10" "$(val extra_answered)/$(val extra_closed)"
	check_eq "$name: a held client is still answered" 0 "$(val first_again)"
	check_contains "$name: refusals logged" "Max-Clients (1010) reached: refusing new clients" "$(cat "$log")"
	# (a hang guard: closing 1010 connections takes the daemon far less)
	t_wait_for "[ \$(socks $pid) -le $s0 ]" 60
	check "$name: sockets back to $s0 after the clients left ($(socks "$pid"))" \
		test "$(socks "$pid")" -le "$s0"

	$LIM "$sock" "$prog" 1 stall >"$T_TMP/lim.out" 2>&1
	check_eq "$name: silent and stalled clients do not hold up others: one is answered while both are connected" \
		"0 True True" "$(val normal_status) $(val silent_open) $(val partial_open)"
	check_eq "$name: ... and answered again" 0 "$(val normal_again)"

	$LIM "$sock" "$prog" 1 cap "$cap" >"$T_TMP/lim.out" 2>&1
	check_eq "$name: a message of exactly $cap bytes is answered; $cap + 1 drops the client" \
		"0/None" "$(val at_cap)/$(val over_cap)"
	check "$name: alive after all that" eval "$alive"
}

# idle NAME SOCK PROG STATS-CMD: with Idle-Timeout 2 s, the silent client and the one
# stalled mid-record are dropped, the daemon counts both as idle, and by its own clock
# (uptime_seconds, read before the two connect and after both are gone) at least 2 s went
# by: not at once, not early.  (STATS-CMD prints the daemon's stats.  Both stayed
# connected under Idle-Timeout 600 s: limits' stall.)
idle() {
	name=$1 stats=$4
	istat() { sh -c "$stats" | awk -v n="$1" '$1 == n { print $2 }'; }
	n0=$(istat idle_closed_total)
	$LIM "$2" "$3" 1 idle "$stats | awk '\$1 == \"uptime_seconds\" { print \$2 }'" \
		>"$T_TMP/lim.out" 2>&1
	check_eq "$name: Idle-Timeout 2 s: the silent and the stalled client are dropped (waited at most 120 s: a hang guard)" \
		"True True" "$(val silent_dropped) $(val partial_dropped)"
	check_eq "$name: ... counted as closed for idleness (idle_closed_total $n0 -> $(istat idle_closed_total))" \
		2 "$(($(istat idle_closed_total) - ${n0:-0}))"
	up0=$(val cmd_before) up1=$(val cmd_after)
	check "$name: ... once idle for Idle-Timeout by the daemon's clock (uptime $up0 s -> $up1 s)" \
		test "$((${up1:-0} - ${up0:-0}))" -ge 2
}

# --- nfskeys-idmapd
t_idmapd_conf "[Idmapd]" "Max-Clients = 1010" "Idle-Timeout = 600" "Max-Request = 4096"
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
limits idmapd "$IDMAPD_SOCK" 0x20004e01 "$IDMAPD_PID" "$T_TMP/idmapd.log" 4096 \
	"'$NFSKEYS' -c '$IDMAPD_CONF' idmapd lookup name-to-uid alice@example.test" \
	"kill -0 $IDMAPD_PID && '$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping"
check_eq "idmapd: refusals counted" 10 "$(t_idmapd_stat connections_refused_total)"
check_eq "idmapd: none of those clients closed for idleness (Idle-Timeout 600 s)" 0 \
	"$(t_idmapd_stat idle_closed_total)"
t_idmapd_stop
check_eq "idmapd: stops cleanly" 0 "$?"

# Out of descriptors: accept fails with EMFILE while 100 clients wait.  The CPU the daemon
# uses is measured while they are all connected (no clock decides when); a loaded machine
# can only give a spinning daemon less CPU, never a quiet one more.
(ulimit -n 64; exec $T_DAEMON_WRAPPER "$IDMAPD" --foreground --config "$IDMAPD_CONF") \
	>>"$T_TMP/idmapd.log" 2>&1 &
IDMAPD_PID=$!
t_on_exit "kill -9 $IDMAPD_PID"
t_wait_for "'$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping" $T_DAEMON_WAIT
$LIM "$IDMAPD_SOCK" 0x20004e01 1 hold-until 100 "$T_TMP/release" >"$T_TMP/hold.out" 2>&1 &
hold=$!
t_wait_for "grep -q '^connected=' '$T_TMP/hold.out'" 120
t_wait_for "grep -q 'Too many open files' '$T_TMP/idmapd.log'" 120
c0=$(cpu_ticks "$IDMAPD_PID")
sleep 2
c1=$(cpu_ticks "$IDMAPD_PID")
held=$(sed -n 's/^connected=//p' "$T_TMP/hold.out")
touch "$T_TMP/release"
wait $hold
diag "idmapd out of descriptors: $held clients connected (in the backlog) meanwhile"
check "idmapd out of descriptors: does not spin ($((c1 - c0)) ticks of CPU in 2 s)" \
	test $((c1 - c0)) -lt 50
check_contains "... and says why" "Too many open files" "$(cat "$T_TMP/idmapd.log")"
t_wait_for "'$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping" 60
check "... and serves again once the clients are gone" \
	"$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test
t_idmapd_stop

# Idle-Timeout 2 s
t_idmapd_conf "[Idmapd]" "Idle-Timeout = 2"
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
idle idmapd "$IDMAPD_SOCK" 0x20004e01 "'$NFSKEYS' -c '$IDMAPD_CONF' idmapd stats"
t_idmapd_stop

# --- nfskeys-attrd (its message cap is fixed: 256 KiB)
ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR=$(t_real_bin "$top_builddir/tools/nfsattr/nfsattr")
ACONF="$T_TMP/attr.conf"
ASOCK="$T_TMP/attrd.sock"
# attrd_start IDLE-TIMEOUT: sets APID
attrd_start() {
	printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\nMax-Clients = 1010\nIdle-Timeout = %s\n' \
		"$T_TMP/attr.db" "$ASOCK" "$1" >"$ACONF"
	$T_DAEMON_WRAPPER "$ATTRD" -f -c "$ACONF" >>"$T_TMP/attrd.log" 2>&1 &
	APID=$!
	t_on_exit "kill -9 $APID"
	# ("nfsattr stats" exits 0 with no daemon: it reads the store.  Only the daemon's answer
	# carries uptime_seconds; tests/harness/attrd.sh.)
	t_wait_for "t_attrd_alive $APID '$ACONF'" $T_DAEMON_WAIT ||
		{ sed 's/^/# /' "$T_TMP/attrd.log"; fail_all "attrd: does not answer over $ASOCK"; }
}
astat() { "$NFSATTR" -c "$ACONF" stats | awk -v n="$1" '$1 == n { print $2 }'; }
attrd_start 600
limits attrd "$ASOCK" 0x20004e02 "$APID" "$T_TMP/attrd.log" 262144 \
	"'$NFSATTR' -c '$ACONF' stats | grep -q '^uptime_seconds '" "t_attrd_alive $APID '$ACONF'"
check_eq "attrd: none of those clients closed for idleness (Idle-Timeout 600 s)" 0 \
	"$(astat idle_closed_total)"
kill "$APID"; wait "$APID"
check_eq "attrd: stops cleanly" 0 "$?"
attrd_start 2
idle attrd "$ASOCK" 0x20004e02 "'$NFSATTR' -c '$ACONF' stats"
kill "$APID"; wait "$APID"
