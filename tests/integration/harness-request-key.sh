#!/bin/sh
# The request-key routes tests install under the real /etc/request-key.d (the kernel runs
# /sbin/request-key, which reads only /etc; see doc/TESTING.md) are named after the test
# and gone when the test ends: at a normal exit, after fail_all, and when the test is
# interrupted (SIGINT, as ^C in make check) or terminated (SIGTERM).
. "$top_srcdir/tests/harness/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (writes /etc/request-key.d)"
[ -d /etc/request-key.d ] && [ -w /etc/request-key.d ] || skip_all "no writable /etc/request-key.d"
command -v keyctl >/dev/null 2>&1 || skip_all "keyctl not installed (apt-get install keyutils)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 not installed"
plan 10
# a harness that fails this test leaves the children's routes: take them away here
t_on_exit "rm -f /etc/request-key.d/nfskeys-test-rk-child-test-*.conf"

# A test in miniature: routes like a real one (t_route_like_enable_upcalls: the route and
# the catch-all file), says where, then ends as $1 says.
child="$T_TMP/rk-child-test.sh"
{
	echo '. "$top_srcdir/tests/harness/lib.sh"'
	echo '. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"'
	echo 't_route_like_enable_upcalls /bin/false || exit 9'
	echo 'ls /etc/request-key.d/ | grep -F "$T_CALLOUT" >"$OUT/files"'
	echo 'case $1 in'
	echo 'ok) exit 0 ;;'
	echo 'fail) fail_all "a deliberate failure" ;;'
	echo 'wait) touch "$OUT/ready"; sleep 60 ;;'
	echo 'esac'
} >"$child"

# run_child MODE [SIGNAL]: the child in its own process group with SIGINT not ignored (as
# a test under make is: a shell ignores SIGINT in its background jobs), SIGNAL sent to
# the group once it has routed.  Prints the files it had, one a line.
run_child() {
	out="$T_TMP/out-$1-${2:-none}"
	mkdir -p "$out"
	OUT=$out top_srcdir=$top_srcdir top_builddir=$top_builddir NFSKEYS=$NFSKEYS \
		python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setpgid(0, 0)
os.execvp("sh", ["sh"] + sys.argv[1:])' "$child" "$1" >"$out/tap" 2>&1 &
	pid=$!
	if [ -n "${2:-}" ]; then
		t_wait_for "test -f $out/ready" 30 || diag "the child did not get ready"
		kill -s "$2" -- "-$pid"
	fi
	wait "$pid"
	echo $? >"$out/rc"
	cat "$out/files" 2>/dev/null
}

for m in "ok" "fail" "wait INT" "wait TERM"; do
	set -- $m
	files=$(run_child "$1" ${2:-})
	what="${2:+SIG}${2:-exit $1}"
	n=$(printf '%s\n' "$files" | grep -c '^nfskeys-test-rk-child-test-.*\.conf$')
	check_eq "$what: the child routed through two files named after the test" 2 "$n"
	left=
	for f in $files; do [ -e "/etc/request-key.d/$f" ] && left="$left $f"; done
	check_eq "$what: none is left in /etc/request-key.d" "" "$left"
done
rm -f "$T_TMP"/out-*/files
check_eq "an interrupted child exits 130" 130 "$(cat "$T_TMP/out-wait-INT/rc")"
check_eq "a failed child exits 1" 1 "$(cat "$T_TMP/out-fail-none/rc")"
