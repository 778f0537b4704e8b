#!/bin/sh
# doc/security/FINDINGS.md D5: one user cannot take nfskeys-idmapd's capacity from the others.
#  - connection slots: uid 65534 opens 150 connections against Max-Clients = 100; with
#    Max-Clients-Per-User = 20 it gets 20 and another user still connects;
#  - the worker queue: uid 65534 runs a connect-send-close loop (16 lookups of new keys
#    per connection, never read); once the daemon refuses some of it, root makes 100
#    lookups (every 20 ms); the per-user queue bound refuses the flood (-EAGAIN, counted,
#    and still refusing while root's lookups are answered), all of root's are answered,
#    and the daemon's memory stays bounded (figures in the output).
# No check is a time: the flood and the held connections last until the test ends them,
# and every wait is a hang guard (120 s or more, far beyond any load).
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

as_nobody /usr/bin/python3 "$LIM" "$IDMAPD_SOCK" 0x20004e01 1 hold-until 150 "$T_TMP/release" \
	>"$T_TMP/hold.out" 2>&1 &
HOLD=$!
t_wait_for "[ \$('$NFSKEYS' -c '$IDMAPD_CONF' idmapd stats | awk '\$1 == \"connections_refused_user_total\" { print \$2 }') -ge 100 ]" 120
timeout 120 "$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test >/dev/null
rc=$?
check_eq "another user connects and is answered while uid 65534 holds what it can (still holding)" \
	"0 alive" "$rc $(kill -0 $HOLD 2>/dev/null && [ ! -e "$T_TMP/release" ] && echo alive)"
check "... uid 65534 was held to 20 connections (refused: $(t_idmapd_stat connections_refused_user_total))" \
	test "$(t_idmapd_stat connections_refused_user_total)" -ge 100
check_eq "... and Max-Clients was never reached" 0 "$(t_idmapd_stat connections_refused_total)"
check_contains "... logged" "refusing more" "$(cat "$T_TMP/idmapd.log")"
touch "$T_TMP/release"
wait $HOLD

"$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test >/dev/null
rss0=$(rss VmRSS)
as_nobody /usr/bin/python3 "$STRESS" "$IDMAPD_SOCK" churn "until:$T_TMP/stop-churn" \
	>"$T_TMP/churn.out" 2>&1 &
CHURN=$!
t_on_exit "touch '$T_TMP/stop-churn'"
t_wait_for "[ \$(t_idmapd_stat queue_refused_total) -gt 0 ]" 120
ref0=$(t_idmapd_stat queue_refused_total)
python3 "$STRESS" "$IDMAPD_SOCK" probe count:100 alice@example.test >"$T_TMP/probe.out" 2>&1
# (a stats call in the flood may time out on a slow machine, ASan's: asked again, the
# flood still on)
ref1=
for _try in 1 2 3 4 5 6 7 8 9 10; do
	ref1=$(t_idmapd_stat queue_refused_total)
	[ -n "$ref1" ] && break
done
churning=$(kill -0 $CHURN 2>/dev/null && echo yes)
touch "$T_TMP/stop-churn"
wait $CHURN
rss1=$(rss VmRSS)
hwm=$(rss VmHWM)
sed 's/^/# /' "$T_TMP/churn.out" "$T_TMP/probe.out"
diag "daemon VmRSS before ${rss0} kB, after ${rss1} kB, peak ${hwm} kB;" \
	"queue_refused_total $(t_idmapd_stat queue_refused_total)," \
	"cache_entries $(t_idmapd_stat cache_entries)"
check_eq "root's lookups during the flood: all 100 answered" 100 \
	"$(val other_answered "$T_TMP/probe.out")"
check_eq "... none failed" 0 "$(val other_failed "$T_TMP/probe.out")"
check "... while the flood went on and was refused (queue_refused_total $ref0 -> $ref1)" \
	test "$churning" = yes -a "${ref1:-0}" -gt "${ref0:-0}"
check "the per-user queue bound refused the flood ($(t_idmapd_stat queue_refused_total))" \
	test "$(t_idmapd_stat queue_refused_total)" -gt 0
check "memory bounded: VmRSS grew $(((rss1 - rss0) / 1024)) MiB (under 64)" \
	test $((rss1 - rss0)) -lt 65536
