#!/bin/sh
# Resource limits of both daemons (nfskeys-idmapd, nfskeys-attrd), each on its own socket:
# 1000 concurrent clients answered while another client still gets through quickly; past
# Max-Clients extra clients are closed at once, counted and logged; a silent client and
# one stalled mid-record do not hold up others and are dropped after Idle-Timeout; a
# message of exactly the size cap is answered and one byte more drops the connection; out
# of descriptors (RLIMIT_NOFILE 64) the daemon neither spins nor dies.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/faults.sh"

ulimit -n 4096 2>/dev/null || skip_all "cannot raise RLIMIT_NOFILE to 4096 (ulimit -n)"
plan 28
LIM="python3 $top_srcdir/tests/harness/rpc-limits.py"
in_range() { [ "$2" -ge "$1" ] && [ "$2" -le "$3" ]; }
val() { sed -n "s/^$1=//p" "$T_TMP/lim.out"; }
fds() { ls "/proc/$1/fd" | wc -l; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# limits NAME SOCK PROG PID LOG CAP OTHER-CMD ALIVE-CMD: the checks common to both daemons.
# OTHER-CMD (run by sh meanwhile) and ALIVE-CMD (eval'd here) must succeed only on the
# daemon's own answer: a client that falls back to something else when it gets none proves
# nothing about the daemon.
limits() {
	name=$1 sock=$2 prog=$3 pid=$4 log=$5 cap=$6 other=$7 alive=$8
	sleep 1 # attrd opens its store's WAL files just after it starts answering
	fd0=$(fds "$pid")
	$LIM "$sock" "$prog" 1 clients 1000 20 "$other" >"$T_TMP/lim.out" 2>&1
	check_eq "$name: 1000 concurrent clients all answered" 1000 "$(val answered)"
	check "$name: another client meanwhile succeeds quickly ($(val other_ms) ms)" \
		test "$(val other_rc)" = 0 -a "$(val other_ms)" -lt 3000
	check_eq "$name: past Max-Clients 1010, extra clients closed at once (answered/closed)" \
		"10/10" "$(val extra_answered)/$(val extra_closed)"
	check_eq "$name: a held client is still answered" 0 "$(val first_again)"
	check_contains "$name: refusals logged" "Max-Clients (1010) reached: refusing new clients" "$(cat "$log")"
	t_wait_for "[ \$(ls /proc/$pid/fd | wc -l) -le $fd0 ]" 10
	check "$name: descriptors back to $fd0 after the clients left ($(fds "$pid"))" \
		test "$(fds "$pid")" -le "$fd0"

	$LIM "$sock" "$prog" 1 stall >"$T_TMP/lim.out" 2>&1
	check "$name: silent and stalled clients do not hold up others ($(val normal_ms) ms)" \
		test "$(val normal_status)" = 0 -a "$(val normal_ms)" -lt 1000
	check "$name: silent client dropped after Idle-Timeout 2 s ($(val silent_dropped_ms) ms)" \
		in_range 1500 "$(val silent_dropped_ms)" 6000
	check "$name: client stalled mid-record dropped too ($(val partial_dropped_ms) ms)" \
		in_range 1500 "$(val partial_dropped_ms)" 6000

	$LIM "$sock" "$prog" 1 cap "$cap" >"$T_TMP/lim.out" 2>&1
	check_eq "$name: a message of exactly $cap bytes is answered; $cap + 1 drops the client" \
		"0/None" "$(val at_cap)/$(val over_cap)"
	check "$name: alive after all that" eval "$alive"
}

# --- nfskeys-idmapd
t_idmapd_conf "[Idmapd]" "Max-Clients = 1010" "Idle-Timeout = 2" "Max-Request = 4096"
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
limits idmapd "$IDMAPD_SOCK" 0x20004e01 "$IDMAPD_PID" "$T_TMP/idmapd.log" 4096 \
	"'$NFSKEYS' -c '$IDMAPD_CONF' idmapd lookup name-to-uid alice@example.test" \
	"kill -0 $IDMAPD_PID && '$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping"
check_eq "idmapd: refusals counted" 10 "$(t_idmapd_stat connections_refused_total)"
t_idmapd_stop
check_eq "idmapd: stops cleanly" 0 "$?"

# Out of descriptors: accept fails with EMFILE while 100 clients wait.
(ulimit -n 64; exec $T_DAEMON_WRAPPER "$IDMAPD" --foreground --config "$IDMAPD_CONF") \
	>>"$T_TMP/idmapd.log" 2>&1 &
IDMAPD_PID=$!
t_on_exit "kill -9 $IDMAPD_PID"
t_wait_for "'$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping" 10
$LIM "$IDMAPD_SOCK" 0x20004e01 1 hold 100 3 >"$T_TMP/hold.out" 2>&1 &
hold=$!
sleep 0.5
c0=$(cpu_ticks "$IDMAPD_PID")
sleep 2
c1=$(cpu_ticks "$IDMAPD_PID")
wait $hold
check "idmapd out of descriptors: does not spin ($((c1 - c0)) ticks of CPU in 2 s)" \
	test $((c1 - c0)) -lt 50
check_contains "... and says why" "Too many open files" "$(cat "$T_TMP/idmapd.log")"
t_wait_for "'$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping" 10
check "... and serves again once the clients are gone" \
	"$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test
t_idmapd_stop

# --- nfskeys-attrd (its message cap is fixed: 256 KiB)
ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR=$(t_real_bin "$top_builddir/tools/nfsattr")
ACONF="$T_TMP/attr.conf"
ASOCK="$T_TMP/attrd.sock"
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\nMax-Clients = 1010\nIdle-Timeout = 2\n' \
	"$T_TMP/attr.db" "$ASOCK" >"$ACONF"
$T_DAEMON_WRAPPER "$ATTRD" -f -c "$ACONF" >"$T_TMP/attrd.log" 2>&1 &
APID=$!
t_on_exit "kill -9 $APID"
# ("nfsattr stats" exits 0 with no daemon: it reads the store.  Only the daemon's answer
# carries uptime_seconds; tests/harness/attrd.sh.)
t_wait_for "t_attrd_alive $APID '$ACONF'" $T_DAEMON_WAIT ||
	{ sed 's/^/# /' "$T_TMP/attrd.log"; fail_all "attrd: does not answer over $ASOCK"; }
limits attrd "$ASOCK" 0x20004e02 "$APID" "$T_TMP/attrd.log" 262144 \
	"'$NFSATTR' -c '$ACONF' stats | grep -q '^uptime_seconds '" "t_attrd_alive $APID '$ACONF'"
kill "$APID"; wait "$APID"
check_eq "attrd: stops cleanly" 0 "$?"
