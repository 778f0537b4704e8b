# Real services for integration tests, all stopped when the test exits.  Source it after
# lib.sh:
#     . "$top_srcdir/tests/harness/lib.sh"; . "$top_srcdir/tests/harness/services.sh"
# It brings the one KDC and one slapd harness (kdc.sh: kdc_start, kdc_addprinc,
# kdc_kinit...; slapd.sh: t_slapd_start, t_slapd_load...) and a starter for any daemon.
. "$top_srcdir/tests/harness/kdc.sh"
. "$top_srcdir/tests/harness/slapd.sh"

# t_daemon_start NAME COMMAND...: run COMMAND in the background (it must stay in the
# foreground), output in $T_TMP/NAME.log; sets T_DAEMON_PID; killed at exit (TERM, then
# KILL after a second).  Under make check-valgrind, prefix COMMAND with $T_VALGRIND.
t_daemon_start() {
	_n=$1; shift
	"$@" >"$T_TMP/$_n.log" 2>&1 &
	T_DAEMON_PID=$!
	t_on_exit "t_daemon_stop $T_DAEMON_PID"
}

# t_daemon_stop PID: TERM, wait up to a second, then KILL.
t_daemon_stop() {
	kill "$1" 2>/dev/null || return 0
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 10 ]; do sleep 0.1; _i=$((_i + 1)); done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}
