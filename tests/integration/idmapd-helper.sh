#!/bin/sh
# nfskeys-upcall in front of nfskeys-idmapd, through real request-key upcalls: the helper
# asks the daemon (its answer wins even when the file changed under it), falls back to
# in-process resolution when the daemon is killed, gone or wedged (short timeout), and
# links neither libtirpc nor Kerberos/LDAP/OpenSSL.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"
plan 11

# The lean helper (no libtool library, never a wrapper script).
helper_bin="$top_builddir/tools/upcall/nfskeys-upcall"
if t_is_asan; then
	# ASan intercepts libtirpc's XDR functions and needs the shared library.
	skip "ASan build links the shared libtirpc (XDR interceptors)"
	skip "ASan build links the shared libtirpc (XDR interceptors)"
elif grep -q '^NFSKEYS_UPCALL_LINK = -static-pie' "$top_builddir/Makefile"; then
	# a static PIE (tools/upcall/Makemodule.am): its own symbol table says what it carries
	check_eq "nfskeys-upcall (static PIE) carries no libtirpc-gss/krb5/ldap/crypto code" "" \
		"$(nm "$helper_bin" | awk '{ print $NF }' | grep -E '^(authgss_|gss_|krb5_|ldap_|EVP_|SSL_)' | head -n3)"
	check_eq "and has no interpreter: the dynamic loader maps nothing for it" "" \
		"$(readelf -lW "$helper_bin" | grep -i 'program interpreter')"
else
needed=$(readelf -d "$helper_bin" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case "$needed" in
*libc.so*)
	heavy=$(echo "$needed" | tr ' ' '\n' | grep -E 'lib(tirpc|gssapi|krb5|k5crypto|ldap|lber|crypto|ssl)[.-]')
	check_eq "nfskeys-upcall links no libtirpc/gssapi/krb5/ldap/crypto ($needed)" "" "$heavy" ;;
*) skip "readelf could not read $helper_bin" ;;
esac
# Transitively too: what the dynamic loader actually maps for the helper.
all=$(LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs" ldd "$helper_bin" 2>/dev/null | awk '{ print $1 }' | tr '\n' ' ')
case "$all" in
*libc.so*)
	heavy=$(echo "$all" | tr ' ' '\n' | grep -E 'lib(tirpc|gssapi|krb5|k5crypto|ldap|lber|crypto|ssl)[.-]')
	check_eq "nor does anything it loads ($all)" "" "$heavy" ;;
*) skip "ldd could not read $helper_bin" ;;
esac
fi

t_idmapd_conf "[Idmapd]" "Helper-Timeout = 300"
# The lean helper; it execs tools/upcall/nfskeys-upcall-full (next to it) when it must fall back.
helper_exec="$top_builddir/tools/upcall/nfskeys-upcall"
cat >"$T_TMP/helper.sh" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
LD_LIBRARY_PATH='$top_builddir/libnfskeys/.libs'; export LD_LIBRARY_PATH
exec '$helper_exec' -c '$IDMAPD_CONF' "\$@" 2>>'$T_TMP/helper.err'
SH
chmod +x "$T_TMP/helper.sh"
if ! t_route_upcalls "$T_TMP/helper.sh"; then
	for i in 1 2 3 4 5 6 7 8; do skip "needs root, keyctl and a writable /etc/request-key.d"; done
	exit 0
fi
payload() { t_upcall "$1" | head -n1; }

t_idmapd_start
misses0=$(t_idmapd_stat 'lookups_total{result="miss"}')
check_eq "upcall through the daemon: uid:alice -> 2001" "$(t_hex 2001)00" \
	"$(payload uid:alice@example.test)"
misses1=$(t_idmapd_stat 'lookups_total{result="miss"}')
check_eq "the daemon resolved it (one miss counted)" $((misses0 + 1)) "$misses1"

# Change the file without telling the daemon: the daemon's answer still wins.
sed -i 's/^alice@example.test = 2001/alice@example.test = 2005/' "$IDMAPD_CONF"
check_eq "the helper takes the daemon's answer" "$(t_hex 2001)00" \
	"$(payload uid:alice@example.test)"

# Wedged daemon: the helper gives up after Helper-Timeout and resolves itself.  The daemon
# stays stopped until the test continues it, so an upcall that waited for it would not
# return: the answer must come from the helper's own resolution (2005, the file; the
# daemon says 2001) while the daemon is still stopped.  The hang guard is 30 s here, a
# hundred times Helper-Timeout (no load stretches 300 ms that far) and half the largest
# Helper-Timeout there is: a helper that waited the schema's maximum fails too.
kill -STOP "$IDMAPD_PID"
T_UPCALL_GUARD=30
check_eq "daemon stopped (SIGSTOP): helper falls back to in-process, no hang (guard 30 s)" \
	"$(t_hex 2005)00" "$(payload uid:alice@example.test)"
T_UPCALL_GUARD=120
check_eq "and does not wait for it (Helper-Timeout 300 ms): answered while it is stopped" T \
	"$(sed 's/.*) //' "/proc/$IDMAPD_PID/stat" | cut -d' ' -f1)"
kill -CONT "$IDMAPD_PID"

# A clean stop first (under make check-valgrind this run's leak check is the one judged),
# then a second run to kill.
t_idmapd_stop; rc=$?
check_eq "the daemon stops cleanly on SIGTERM (exit 0)" 0 "$rc"
t_idmapd_start || { not_ok "the daemon starts again"; sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
# Killed mid-run (socket left behind, nobody listening): fall back.
kill -9 "$IDMAPD_PID"; wait "$IDMAPD_PID" 2>/dev/null; t_daemon_killed "$IDMAPD_PID"; IDMAPD_PID=
check "the stale socket is still there" test -S "$IDMAPD_SOCK"
check_eq "daemon killed: helper falls back and answers correctly" "$(t_hex 2005)00" \
	"$(payload uid:alice@example.test)"
rm -f "$IDMAPD_SOCK"
check_eq "no socket at all: helper answers in-process (user:10003)" \
	"$(t_hex user3@example.test)" "$(payload user:10003)"
