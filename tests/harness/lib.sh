# Shared shell helpers for integration tests: TAP output, a private temp dir removed on
# exit, and paths into the build tree.  Source it:  . "$top_srcdir/tests/harness/lib.sh"
set -u

: "${top_srcdir:?run through make check (top_srcdir unset)}"
: "${top_builddir:?run through make check (top_builddir unset)}"

TAP_N=0
TAP_FAILED=0
TAP_PLANNED=
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/nfskeys-test.XXXXXX")
T_CLEANUPS=

# Register a command to run at exit (in reverse order of registration).
t_on_exit() { T_CLEANUPS="$*
$T_CLEANUPS"; }

t_exit_handler() {
	rc=$?
	printf '%s\n' "$T_CLEANUPS" | while IFS= read -r c; do
		[ -n "$c" ] && eval "$c" >/dev/null 2>&1
	done
	[ -n "$T_DAEMON_VALGRIND" ] && ! t_daemon_valgrind_verdict && rc=1
	rm -rf "$T_TMP"
	if [ -z "$TAP_PLANNED" ]; then echo "1..$TAP_N"; fi
	exit $rc
}
trap t_exit_handler EXIT
trap 'exit 130' INT TERM

# T_TAP_TIMES=FILE: each result's number after the seconds since boot (/proc/uptime, read
# without a fork), to see where a test spends its time (tests/kernel/guest-lib.sh sets it)
T_TAP_TIMES=
t_tap_time() {
	[ -n "$T_TAP_TIMES" ] && read -r _tt_up _tt_idle </proc/uptime &&
		echo "$_tt_up $TAP_N" >>"$T_TAP_TIMES"
	return 0
}
plan() { TAP_PLANNED=$1; echo "1..$1"; t_tap_time; }
ok() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N - $*"; t_tap_time; }
not_ok() {
	TAP_N=$((TAP_N + 1)); TAP_FAILED=$((TAP_FAILED + 1)); echo "not ok $TAP_N - $*"; t_tap_time
}
skip() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N # SKIP $*"; t_tap_time; }
skip_all() { echo "1..0 # SKIP $*"; TAP_PLANNED=0; exit 0; }
diag() { printf '# %s\n' "$@"; }
# fail_all REASON: the test cannot go on because of the project's own failure (a shipped
# file a real server rejects, ...), not the machine's: a failed check, then exit 1.  Never a
# skip: a skip says "not testable here", and this is testable and broken.
fail_all() { not_ok "$*"; exit 1; }

# check DESCRIPTION COMMAND...: ok when COMMAND exits 0
check() {
	d=$1; shift
	if "$@" >"$T_TMP/.out" 2>&1; then ok "$d"; else not_ok "$d"; sed 's/^/# /' "$T_TMP/.out"; fi
}

# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else
		not_ok "$1"; diag "expected: $2" "actual:   $3"; fi
}

# check_contains DESCRIPTION NEEDLE HAYSTACK
check_contains() {
	case "$3" in
	*"$2"*) ok "$1" ;;
	*) not_ok "$1"; diag "expected to contain: $2" "actual: $3" ;;
	esac
}

# A free TCP port on 127.0.0.1.
t_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# t_wait_for CMD [SECONDS]: until the command in CMD succeeds (polled every 0.1 s); 1 when
# it has not after SECONDS (default 10) or T_WAIT_GUARD seconds (120), whichever is longer.
# Every wait is a hang guard, never a bound on how fast: it returns as soon as CMD
# succeeds, so only a CMD that never does (a hang, a broken behaviour) costs the guard,
# and a loaded machine that is merely slow fails nothing.
T_WAIT_GUARD=${T_WAIT_GUARD:-120}
t_wait_for() {
	_tw=${2:-10}
	[ "$_tw" -ge "$T_WAIT_GUARD" ] 2>/dev/null || _tw=$T_WAIT_GUARD
	n=$((_tw * 10))
	while [ $n -gt 0 ]; do
		if eval "$1" >/dev/null 2>&1; then return 0; fi
		sleep 0.1; n=$((n - 1))
	done
	return 1
}

t_is_asan() { [ "${NFSKEYS_ASAN:-no}" = yes ]; }

# Under make check-valgrind (NFSKEYS_VALGRIND=yes) start programs, daemons above all, as
# "$T_VALGRIND program args": it works for libtool wrappers and plain binaries, and the
# program exits 99 on an invalid access or a definite/indirect leak.  Empty otherwise.
# Add such a test to VALGRIND_TESTS in your region of tests/Makemodule.am.
T_VALGRIND=
if [ "${NFSKEYS_VALGRIND:-no}" = yes ]; then
	T_VALGRIND="$top_builddir/libtool --mode=execute ${VALGRIND:-valgrind} -q --error-exitcode=99 \
--leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
--suppressions=$top_srcdir/tests/harness/valgrind.supp"
fi

# Daemons started by the harness and the daemon-facing tests run as
# "$T_DAEMON_WRAPPER daemon args": NFSKEYS_DAEMON_WRAPPER when set (any prefix command),
# else under make check-valgrind valgrind with a log per process in $T_TMP.  At exit such a
# test fails when a log reports an error or a definite leak, when a log has no final
# summary (the daemon was killed, or never stopped: its leak check never ran), and when no
# daemon ran under valgrind at all (nothing was checked).  Stop daemons with SIGTERM; a
# test that kills one on purpose (SIGKILL) says so with t_daemon_killed PID after waiting.
# --fair-sched=yes: valgrind runs one thread at a time, and its default lock lets a busy
# thread (a reload building its configuration) starve the event loop for seconds.
# (No -q: the "ERROR SUMMARY" line at the end is how a finished leak check is recognised.)
T_DAEMON_WRAPPER=${NFSKEYS_DAEMON_WRAPPER:-}
T_DAEMON_VALGRIND=
# seconds a daemon may take to start answering (30 when wrapped); t_wait_for waits at
# least T_WAIT_GUARD (120 s) in any case: the figure matters only to callers that use it
# otherwise
T_DAEMON_WAIT=10
if [ -z "$T_DAEMON_WRAPPER" ] && [ "${NFSKEYS_VALGRIND:-no}" = yes ]; then
	T_DAEMON_VALGRIND=1
	T_DAEMON_WRAPPER="$top_builddir/libtool --mode=execute ${VALGRIND:-valgrind} \
--error-exitcode=99 --fair-sched=yes --leak-check=full --show-leak-kinds=definite \
--errors-for-leak-kinds=definite --suppressions=$top_srcdir/tests/harness/valgrind.supp \
--log-file=$T_TMP/valgrind-daemon.%p.log"
fi
[ -n "$T_DAEMON_WRAPPER" ] && T_DAEMON_WAIT=30

# t_daemon_killed PID: the daemon PID was killed on purpose (after wait): its valgrind log
# has no leak check to judge.
t_daemon_killed() {
	[ -f "$T_TMP/valgrind-daemon.$1.log" ] &&
		mv "$T_TMP/valgrind-daemon.$1.log" "$T_TMP/valgrind-killed.$1.log"
	return 0
}

t_daemon_valgrind_verdict() {
	_n=0
	for _l in "$T_TMP"/valgrind-daemon.*.log; do
		[ -f "$_l" ] || continue
		_n=$((_n + 1))
		if ! grep -q 'ERROR SUMMARY: ' "$_l"; then
			not_ok "valgrind: $(basename "$_l") has no summary: the daemon was killed or never stopped, its leak check never ran"
			tail -5 "$_l" | sed 's/^/# /'
			return 1
		fi
		grep -q 'ERROR SUMMARY: 0 errors' "$_l" && continue
		not_ok "valgrind: errors or definite leaks in a daemon ($(basename "$_l"))"
		grep -v -E '^==[0-9]+== *(Warning|$)' "$_l" | sed 's/^/# /' | head -80
		return 1
	done
	if [ "$_n" = 0 ]; then
		not_ok "valgrind: no daemon ran under valgrind (nothing was checked)"
		return 1
	fi
	diag "valgrind: $_n daemon run(s), each stopped cleanly, no errors or definite leaks"
	return 0
}

NFSKEYS="$top_builddir/tools/nfskeys/nfskeys"

# Programs run as another uid.  The build tree may sit under a directory that uid cannot
# enter (a clone in root's home or in a mktemp -d is 0700), so such programs come from the
# install that make check makes once per run into a 0755 directory (check-other-uid-install
# in tests/Makemodule.am).  t_ou_load reads where it is and sets T_OU_ENV, the prefix that
# points the dynamic loader and the plugin loader there:
#   setpriv --reuid=U ... $T_OU_ENV "$(t_ou nfsattr)" ARGS
# A test that drops privileges fails (not skips) when the install is missing.
T_OU_ENV=
t_ou_load() {
	_e="$top_builddir/tests/other-uid.env"
	if [ ! -f "$_e" ]; then
		not_ok "programs for other uids: $_e missing (run through make check, which installs them)"
		exit 1
	fi
	. "$_e"
	if [ ! -d "$T_OU_ROOT" ]; then
		not_ok "programs for other uids: $T_OU_ROOT is gone (run make check again)"
		exit 1
	fi
	T_OU_ENV="env LD_LIBRARY_PATH=$T_OU_LIBDIR NFSKEYS_PLUGIN_DIR=$T_OU_PLUGINDIR"
}
# t_ou NAME: the installed copy of the program NAME (bin, sbin or libexec)
t_ou() {
	[ -n "$T_OU_ENV" ] || t_ou_load
	for _d in "$T_OU_BINDIR" "$T_OU_SBINDIR" "$T_OU_LIBEXECDIR"; do
		[ -x "$_d/$1" ] && { echo "$_d/$1"; return 0; }
	done
	echo "t_ou: $1 not installed under $T_OU_ROOT" >&2
	echo "/nonexistent/$1"
	return 1
}
