#!/bin/sh
# doc/security/FINDINGS.md D2: a descriptor passed to a daemon must not hang its loop.  A FUSE
# file system (tests/harness/fuse-hang.c) never answers FLUSH (sent on every close()) nor
# GETATTR of /hangdir when the daemons call.  Each daemon is handed such descriptors on
# calls that take none and on those that take one; every time, another client must still
# be answered at once.  Needs root, /dev/fuse, libfuse3 (pkg-config fuse3) and cc.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (FUSE mount, daemons)"
[ -c /dev/fuse ] || skip_all "no /dev/fuse"
pkg-config --exists fuse3 2>/dev/null || skip_all "libfuse3 development files missing (pkg-config fuse3)"
${CC:-cc} -o "$T_TMP/fuse-hang" "$top_srcdir/tests/harness/fuse-hang.c" \
	$(pkg-config --cflags --libs fuse3) 2>"$T_TMP/cc.log" ||
	skip_all "cannot build the FUSE server: $(head -1 "$T_TMP/cc.log")"

plan 23
FDPASS="python3 $top_srcdir/tests/harness/fd-pass.py"
ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR="$top_builddir/tools/nfsattr/nfsattr"
val() { sed -n "s/^$1=//p" "$T_TMP/fd.out"; }
# answered DESCRIPTION SHELL-COMMAND: ok when it succeeds.  The FUSE server never answers
# FLUSH nor that GETATTR, so a daemon whose loop waited on one would never answer again:
# GUARD (120 s, far beyond any load) is a hang guard, not a bound on how fast.
GUARD=120
answered() { check "$1" timeout $GUARD sh -c "$2"; }
xstr() {
	python3 -c 'import struct,sys; b=sys.argv[1].encode(); print((struct.pack(">I",len(b))+b+b"\0"*(-len(b)%4)).hex())' "$1"
}
LOOKUP_ARGS=0000000100000001$(xstr alice@example.test) # idmapd: name-to-uid, nobody ok
SET_ARGS=00000001$(xstr cache)$(xstr none)             # attrd: cache=none
LOOKUP_ATTR_ARGS=$(xstr nfs://x/y)$(xstr /a)00000000   # attrd: a lookup

t_idmapd_conf
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n' "$T_TMP/attr.db" "$T_TMP/attrd.sock" \
	>>"$IDMAPD_CONF"
ASOCK="$T_TMP/attrd.sock"
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
$T_DAEMON_WRAPPER "$ATTRD" -f -c "$IDMAPD_CONF" -v >>"$T_TMP/attrd.log" 2>&1 &
ATTRD_PID=$!
t_on_exit "kill -9 $ATTRD_PID"
# attrd answers: its pid runs and its stats carry uptime_seconds, which only the daemon
# gives ("nfsattr stats" with no daemon reads the store and exits 0 too)
attr_ok="kill -0 $ATTRD_PID && '$NFSATTR' -c '$IDMAPD_CONF' stats | grep -q '^uptime_seconds '"
t_wait_for "$attr_ok" $T_DAEMON_WAIT || fail_all "nfskeys-attrd answers: $(tail -3 "$T_TMP/attrd.log")"

MNT="$T_TMP/mnt"
mkdir "$MNT"
"$T_TMP/fuse-hang" "$MNT" "$IDMAPD_PID" "$ATTRD_PID" >"$T_TMP/fuse.log" 2>&1 &
FUSE_PID=$!
t_wait_for "[ -f '$MNT/file' ]" $GUARD || { not_ok "FUSE mount"; cat "$T_TMP/fuse.log"; exit 1; }
# The connection ends when its server dies (SIGKILL: its threads wait in pause());
# /sys/fs/fuse/connections/N/abort too where fusectl is mounted.
abort_fuse() {
	n=$(mountpoint -d "$MNT" 2>/dev/null | cut -d: -f2)
	[ -n "$n" ] && [ -e "/sys/fs/fuse/connections/$n/abort" ] &&
		echo 1 >"/sys/fs/fuse/connections/$n/abort"
	kill -9 "$FUSE_PID" 2>/dev/null
	wait "$FUSE_PID" 2>/dev/null
	umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	return 0
}
t_on_exit abort_fuse
idmap_ok="'$NFSKEYS' -c '$IDMAPD_CONF' idmapd lookup name-to-uid alice@example.test"

# --- idmapd takes no descriptor at all
timeout $GUARD $FDPASS "$IDMAPD_SOCK" 0x20004e01 2 "$MNT/file" rdonly "$LOOKUP_ARGS" >"$T_TMP/fd.out" 2>&1
check_eq "idmapd: a lookup with a FUSE file's descriptor attached is answered" 0 "$(val status)"
answered "idmapd: after that connection closed, another client is answered (no FLUSH on the loop)" "$idmap_ok"
check "idmapd: holds no descriptor of the FUSE mount" \
	sh -c "! ls -l /proc/$IDMAPD_PID/fd | grep -q '$MNT'"

# --- attrd: descriptors only with SET/UNSET, only O_PATH directories
timeout $GUARD $FDPASS "$ASOCK" 0x20004e02 2 "$MNT/file" rdonly "$SET_ARGS" >"$T_TMP/fd.out" 2>&1
sed 's/^/# /' "$T_TMP/fd.out"
check_eq "attrd: set with a plain file's descriptor is answered" 0 "$(val status)"
check "... and refused ($(val res_status))" test "$(val res_status)" -lt 0
answered "attrd: another client is answered meanwhile (the descriptor is not closed on the loop)" "$attr_ok"

timeout $GUARD $FDPASS "$ASOCK" 0x20004e02 2 "$MNT/dir" dir "$SET_ARGS" >"$T_TMP/fd.out" 2>&1
sed 's/^/# /' "$T_TMP/fd.out"
check "attrd: set with an O_RDONLY directory is refused (O_PATH only)" test "$(val res_status)" -lt 0
answered "... another client is answered" "$attr_ok"

timeout $GUARD $FDPASS "$ASOCK" 0x20004e02 2 "$MNT/hangdir" pathdir "$SET_ARGS" >"$T_TMP/fd.out" 2>&1
sed 's/^/# /' "$T_TMP/fd.out"
check_eq "attrd: set on an O_PATH directory whose GETATTR hangs is answered" 0 "$(val status)"
answered "... another client is answered" "$attr_ok"

SECOND="2:$SET_ARGS" timeout $GUARD $FDPASS "$ASOCK" 0x20004e02 4 "$T_TMP" pathdir \
	"$LOOKUP_ATTR_ARGS" >"$T_TMP/fd.out" 2>&1
sed 's/^/# /' "$T_TMP/fd.out"
check_eq "attrd: a lookup with a descriptor attached is answered" 0 "$(val status)"
check_contains "... and the descriptor is not kept for the next call (set without one)" \
	"no directory descriptor" "$(val message2)"
SECOND="2:$SET_ARGS" timeout $GUARD $FDPASS "$ASOCK" 0x20004e02 1 "$T_TMP" pathdir "" \
	>"$T_TMP/fd.out" 2>&1
check_contains "attrd: nor after a ping" "no directory descriptor" "$(val message2)"

timeout $GUARD $FDPASS "$ASOCK" 0x20004e02 2 "$T_TMP" pathdir "$SET_ARGS" >"$T_TMP/fd.out" 2>&1
check_eq "attrd: a set with an O_PATH directory (what nfsattr sends) still works" 0 "$(val res_status)"

# --- attrd: a directory of a mount of another namespace (the caller's own copy of the
# FUSE mount, unshare -m) whose path the dentry cache cannot confirm (entry_timeout 0, as
# NFS with actimeo=0): the lookup that confirms it runs in a thread, never on the loop
OTHERNS="unshare -m --propagation private"
timeout $GUARD $OTHERNS $FDPASS "$ASOCK" 0x20004e02 2 "$MNT/dir" pathdir "$SET_ARGS" \
	>"$T_TMP/fd.out" 2>&1
sed 's/^/# /' "$T_TMP/fd.out"
check_eq "attrd: a set from another mount namespace on a path to revalidate works" \
	0 "$(val res_status)"
placing() { timeout $GUARD "$NFSATTR" -c "$IDMAPD_CONF" stats | sed -n 's/^placing  *//p'; }
# two sets whose lookup (GETATTR of /hangdir from attrd's thread) never returns
for i in 1 2; do
	FDPASS_TIMEOUT=$GUARD $OTHERNS $FDPASS "$ASOCK" 0x20004e02 2 "$MNT/hangdir" pathdir \
		"$SET_ARGS" >"$T_TMP/hang$i.out" 2>&1 &
	eval "HANG$i=\$!"
	t_wait_for "[ \"\$(placing)\" = $i ]" $GUARD
done
check_eq "attrd: two sets wait on the file server, each in its thread (stats: placing)" \
	2 "$(placing)"
answered "... another client is answered meanwhile" "$attr_ok"
timeout $GUARD $OTHERNS $FDPASS "$ASOCK" 0x20004e02 2 "$MNT/hangdir" pathdir "$SET_ARGS" \
	>"$T_TMP/fd.out" 2>&1
check_eq "... a third of the same uid is refused at once (EBUSY)" -16 "$(val res_status)"
check_contains "... saying why" "already wait for their file servers" "$(val message)"
check "both daemons alive" kill -0 "$IDMAPD_PID" "$ATTRD_PID"
abort_fuse
wait "$HANG1" "$HANG2"
check "the waiting sets are answered, refused, once the file system is gone" \
	sh -c "grep -q '^res_status=-' '$T_TMP/hang1.out' && grep -q '^res_status=-' '$T_TMP/hang2.out'"
check_eq "... and nothing waits any more" 0 "$(placing)"
check "idmapd stops cleanly" t_idmapd_stop
