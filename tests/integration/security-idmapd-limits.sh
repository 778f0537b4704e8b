#!/bin/sh
# doc/security/FINDINGS.md D5: one user cannot take nfskeys-idmapd's capacity from the others.
#  - connection slots: uid 65534 opens 150 connections against Max-Clients = 100; with
#    Max-Clients-Per-User = 20 it gets 20 and another user still connects;
#  - the worker queue: uid 65534 runs a connect-send-close loop (16 lookups of new keys
#    per connection, never read) for 10 s while root looks a name up every 20 ms; the
#    per-user queue bound refuses the flood (-EAGAIN, counted), root's lookups keep
#    being answered, and the daemon's memory stays bounded (figures in the output).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (another uid)"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 missing (run as another uid)"
plan 9
chmod 755 "$T_TMP"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# uid 65534 runs the drivers: copies in the 0755 temp dir (the source tree may be out of
# its reach, as in a clone under a 0700 parent)
cp "$top_srcdir/tests/harness/idmapd-stress.py" "$top_srcdir/tests/harness/rpc-limits.py" "$T_TMP/"
chmod 644 "$T_TMP/idmapd-stress.py" "$T_TMP/rpc-limits.py"
STRESS="$T_TMP/idmapd-stress.py"
LIM="$T_TMP/rpc-limits.py"
val() { sed -n "s/^$1=//p" "$2"; }
rss() { awk '$1 == "'"$1"':" { print $2 }' "/proc/$IDMAPD_PID/status"; }

t_idmapd_conf "[Idmapd]" "Max-Clients = 100" "Max-Clients-Per-User = 20" \
	"Max-Queue-Per-User = 8" "Workers = 1" "Cache-Size = 4096"
chmod 644 "$IDMAPD_CONF"
# ASan keeps freed memory in a quarantine (256 MiB by default), which would read as growth
t_is_asan && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
chmod 777 "$IDMAPD_SOCK"

as_nobody /usr/bin/python3 "$LIM" "$IDMAPD_SOCK" 0x20004e01 1 hold 150 5 >"$T_TMP/hold.out" 2>&1 &
HOLD=$!
t_wait_for "[ \$('$NFSKEYS' -c '$IDMAPD_CONF' idmapd stats | awk '\$1 == \"connections_refused_user_total\" { print \$2 }') -ge 100 ]" 10
check "another user connects and is answered while uid 65534 holds what it can" \
	timeout 3 "$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test
check "... uid 65534 was held to 20 connections (refused: $(t_idmapd_stat connections_refused_user_total))" \
	test "$(t_idmapd_stat connections_refused_user_total)" -ge 100
check_eq "... and Max-Clients was never reached" 0 "$(t_idmapd_stat connections_refused_total)"
check_contains "... logged" "refusing more" "$(cat "$T_TMP/idmapd.log")"
wait $HOLD

"$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test >/dev/null
rss0=$(rss VmRSS)
as_nobody /usr/bin/python3 "$STRESS" "$IDMAPD_SOCK" churn 10 >"$T_TMP/churn.out" 2>&1 &
CHURN=$!
python3 "$STRESS" "$IDMAPD_SOCK" probe 10 alice@example.test >"$T_TMP/probe.out" 2>&1
wait $CHURN
rss1=$(rss VmRSS)
hwm=$(rss VmHWM)
sed 's/^/# /' "$T_TMP/churn.out" "$T_TMP/probe.out"
diag "daemon VmRSS before ${rss0} kB, after ${rss1} kB, peak ${hwm} kB;" \
	"queue_refused_total $(t_idmapd_stat queue_refused_total)," \
	"cache_entries $(t_idmapd_stat cache_entries)"
check "root's lookups during the flood: answered ($(val other_answered "$T_TMP/probe.out"))" \
	test "$(val other_answered "$T_TMP/probe.out")" -gt 100
check_eq "... none failed" 0 "$(val other_failed "$T_TMP/probe.out")"
check "... p99 $(val other_p99_ms "$T_TMP/probe.out") ms (under 1000)" \
	awk "BEGIN { exit !($(val other_p99_ms "$T_TMP/probe.out") < 1000) }"
check "the per-user queue bound refused the flood ($(t_idmapd_stat queue_refused_total))" \
	test "$(t_idmapd_stat queue_refused_total)" -gt 0
check "memory bounded: VmRSS grew $(((rss1 - rss0) / 1024)) MiB (under 64)" \
	test $((rss1 - rss0)) -lt 65536
