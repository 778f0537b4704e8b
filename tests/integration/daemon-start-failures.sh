#!/bin/sh
# Daemon start failures and background mode, with the exit status each man page documents
# and a message naming the cause (the same for both daemons: 3 configuration, 4 socket):
# a malformed configuration, an
# unloadable backend, a socket path under a file, a socket directory on a read-only
# filesystem, a socket already in use (the first daemon keeps serving, and the error names
# its pid); nfskeys-idmapd in
# the background reports ready only once it answers, and a bad configuration fails the
# start itself.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/attrd.sh"
plan 32

# start_fails NAME RC CAUSE CMD...: CMD exits RC, saying CAUSE (timeout(1) with 120 s is a
# hang guard, far beyond any load: a daemon that hangs instead of failing exits 124)
start_fails() {
	n=$1 rc=$2 cause=$3; shift 3
	timeout 120 "$@" >"$T_TMP/out" 2>&1
	got=$?
	check_eq "$n: exit $rc" "$rc" "$got"
	check_contains "$n: says why" "$cause" "$(cat "$T_TMP/out")"
}
printf '[General\nDomain = x\n' >"$T_TMP/bad.conf"
touch "$T_TMP/afile"
RO="$T_TMP/ro"
mkdir "$RO"
ro_ok=no
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then ro_ok=yes; fi
# ro-run DIR CMD...: CMD with a read-only filesystem mounted on DIR (a private mount
# namespace; a script, so that timeout can run it)
cat >"$T_TMP/ro-run" <<'SH'
#!/bin/sh
exec unshare -m --propagation private sh -c 'mount -t tmpfs -o ro nfskeys-ro "$0" && exec "$@"' "$@"
SH
chmod +x "$T_TMP/ro-run"

# --- nfskeys-idmapd
t_idmapd_conf
sed 's/^Method = .*/Method = static,no-such-backend/' "$IDMAPD_CONF" >"$T_TMP/backend.conf"
start_fails "idmapd, malformed config" 3 "bad.conf:1: section header without closing ']'" \
	"$IDMAPD" -f -c "$T_TMP/bad.conf"
start_fails "idmapd, unloadable backend" 3 "unknown backend 'no-such-backend'" \
	"$IDMAPD" -f -c "$T_TMP/backend.conf"
start_fails "idmapd, socket path under a file" 4 "cannot listen on $T_TMP/afile/i.sock: $T_TMP/afile is not a directory" \
	"$IDMAPD" -f -c "$IDMAPD_CONF" -s "$T_TMP/afile/i.sock"
if [ $ro_ok = yes ]; then
	start_fails "idmapd, socket directory read-only" 4 "cannot listen on $RO/i.sock: Read-only file system" \
		"$T_TMP/ro-run" "$RO" "$IDMAPD" -f -c "$IDMAPD_CONF" -s "$RO/i.sock"
else
	skip "needs root and unshare -m (a read-only mount)"; skip "needs root and unshare -m"
fi
t_idmapd_start || { not_ok "first idmapd starts"; exit 1; }
start_fails "idmapd, socket in use" 4 "cannot listen on $IDMAPD_SOCK: Address already in use" \
	"$IDMAPD" -f -c "$IDMAPD_CONF"
check_contains "... naming the daemon that listens there by its pid ($IDMAPD_PID)" \
	"pid $IDMAPD_PID (stop it first)" "$(cat "$T_TMP/out")"
check_contains "... the first daemon still answers" "2001	" \
	"$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test)"
t_idmapd_stop; rc=$?
check_eq "... and stops cleanly" 0 "$rc"
# background: the start returns once the daemon answers; its pid is the one ping reports
rm -f "$IDMAPD_SOCK"
timeout 120 "$IDMAPD" -c "$IDMAPD_CONF" >"$T_TMP/bg.out" 2>&1
rc=$?
out=$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd ping 2>&1)
bgpid=$(printf '%s\n' "$out" | sed -n 's/.* pid \([0-9]*\) .*/\1/p')
[ -n "$bgpid" ] && t_on_exit "kill -9 $bgpid"
check_eq "idmapd in the background: the start exits 0" 0 "$rc"
check_contains "... and the daemon answers at once" "generation 1 on $IDMAPD_SOCK" "$out"
check "... from a process of its own (pid $bgpid, detached)" test -n "$bgpid" -a -d "/proc/${bgpid:-0}"
check_eq "... it stops on SIGTERM" gone "$(kill "$bgpid" 2>/dev/null; t_wait_for "! kill -0 $bgpid" 10 && echo gone)"
timeout 120 "$IDMAPD" -c "$T_TMP/bad.conf" >"$T_TMP/bgbad.out" 2>&1
check_eq "idmapd in the background, malformed config: the start exits 3" 3 "$?"
check_contains "... saying why" "section header without closing ']'" "$(cat "$T_TMP/bgbad.out")"

# --- nfskeys-attrd
ATTRD_CONF="$T_TMP/attrd.conf"
printf '[Attr]\nStore = %s/attr.db\n[Attrd]\nSocket = %s/attrd.sock\n' "$T_TMP" "$T_TMP" >"$ATTRD_CONF"
sed '$a Admin-Group = no-such-group-nfskeys' "$ATTRD_CONF" >"$T_TMP/group.conf"
start_fails "attrd, malformed config" 3 "bad.conf:1: section header without closing ']'" \
	"$ATTRD" -c "$T_TMP/bad.conf"
start_fails "attrd, unknown Admin-Group" 3 "no group 'no-such-group-nfskeys'" "$ATTRD" -c "$T_TMP/group.conf"
start_fails "attrd, socket path under a file" 4 "cannot listen on $T_TMP/afile/a.sock: $T_TMP/afile is not a directory" \
	"$ATTRD" -c "$ATTRD_CONF" -s "$T_TMP/afile/a.sock"
if [ $ro_ok = yes ]; then
	start_fails "attrd, socket directory read-only" 4 "cannot listen on $RO/a.sock: Read-only file system" \
		"$T_TMP/ro-run" "$RO" "$ATTRD" -c "$ATTRD_CONF" -s "$RO/a.sock"
else
	skip "needs root and unshare -m (a read-only mount)"; skip "needs root and unshare -m"
fi
t_attrd_start || { not_ok "first attrd starts"; exit 1; }
start_fails "attrd, socket in use" 4 "cannot listen on $T_TMP/attrd.sock: Address already in use" \
	"$ATTRD" -c "$ATTRD_CONF"
check_contains "... naming the daemon that listens there by its pid ($ATTRD_PID)" \
	"pid $ATTRD_PID (stop it first)" "$(cat "$T_TMP/out")"
check "... the first daemon still answers" t_attrd_alive
t_attrd_stop; rc=$?
check_eq "... and stops cleanly" 0 "$rc"
