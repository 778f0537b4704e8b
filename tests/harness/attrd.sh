# Start and stop nfskeys-attrd for integration tests (sourced after lib.sh).
# ATTRD_CONF: the configuration the daemon and nfsattr use (default $T_TMP/nfskeys.conf);
# ATTRD_LOG: where the daemon's output goes (default $T_TMP/attrd.log, appended to).
# t_attrd_start [ARGS...]: start "$T_DAEMON_WRAPPER nfskeys-attrd -f -c $ATTRD_CONF ARGS" in
#   the background and wait until it answers; sets ATTRD_PID; fails (1) when it does not.
# t_attrd_answers [CONF]: a daemon answers over the socket CONF (default $ATTRD_CONF)
#   names.  ("nfsattr stats" alone proves nothing: with no daemon it reads the store and
#   exits 0; only the daemon's answer carries uptime_seconds.)
# t_attrd_alive [PID [CONF]]: PID (default ATTRD_PID) still runs and the daemon answers.
# t_attrd_stop: SIGTERM, wait; returns the daemon's exit status (0 for a clean stop; under
#   valgrind 99 on an error or a definite leak).
# t_attrd_wait LOG [N]: until LOG says "listening on" N times (default 1).
ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR="$top_builddir/tools/nfsattr/nfsattr"
: "${ATTRD_CONF:=$T_TMP/nfskeys.conf}"
: "${ATTRD_LOG:=$T_TMP/attrd.log}"
ATTRD_PID=

t_attrd_answers() {
	"$NFSATTR" -c "${1:-$ATTRD_CONF}" stats 2>/dev/null | grep -q '^uptime_seconds '
}

t_attrd_alive() {
	_p=${1:-$ATTRD_PID}
	[ -n "$_p" ] && kill -0 "$_p" 2>/dev/null && t_attrd_answers "${2:-}"
}

t_attrd_start() {
	$T_DAEMON_WRAPPER "$ATTRD" -f -c "$ATTRD_CONF" "$@" >>"$ATTRD_LOG" 2>&1 &
	ATTRD_PID=$!
	t_on_exit "kill -9 $ATTRD_PID"
	t_wait_for "kill -0 $ATTRD_PID && t_attrd_answers" $T_DAEMON_WAIT
}

t_attrd_stop() {
	[ -n "$ATTRD_PID" ] || return 0
	kill -TERM "$ATTRD_PID" 2>/dev/null
	wait "$ATTRD_PID"
	_rc=$?
	ATTRD_PID=
	return $_rc
}

t_attrd_wait() {
	t_wait_for "[ \$(grep -c 'listening on' '$1' 2>/dev/null) -ge ${2:-1} ]" "$T_DAEMON_WAIT"
}
