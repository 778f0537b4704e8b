#!/bin/sh
# Store faults of nfskeys-attrd beyond a process crash (FINDINGS.md S1-S3; the crash is
# fault-attrd-kill.sh).  The store lives on a small tmpfs in a private mount namespace.
# (a) Disk full: a change that needs space fails with a clear error naming the cause,
#     the policies set before stay intact and served (by the daemon and through the
#     library's read path), the daemon keeps running, and the same change succeeds once
#     space returns.  A change that fits in the existing WAL but whose snapshot cannot be
#     written is acknowledged (it is durable); the read path catches up as soon as space
#     returns, at the daemon's next call, without another change.
# (b) A damaged store at start (not SQLite at all, cut in half, 512 random bytes in the
#     middle): the daemon refuses to start, naming the file and the problem, and does not
#     change one byte of it (sha256 before and after); with the good copy back it starts.
# (c) Power loss, as far as this host allows: see the section below.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/attrd.sh"

if [ "$(id -u)" = 0 ] && [ -z "${NFSKEYS_STORE_NS:-}" ] && command -v unshare >/dev/null &&
   unshare -m --propagation private true 2>/dev/null; then
	NFSKEYS_STORE_NS=1 exec unshare -m --propagation private "${SHELL:-/bin/sh}" "$0" "$@"
fi
[ "$(id -u)" = 0 ] || skip_all "needs root (a tmpfs in a private mount namespace)"
[ -n "${NFSKEYS_STORE_NS:-}" ] || skip_all "unshare -m does not work here"
command -v sqlite3 >/dev/null || skip_all "sqlite3 CLI not installed (package sqlite3)"

ST="$T_TMP/state"
mkdir -p "$ST"
mount -t tmpfs -o size=4m,mode=0755 nfskeys-test "$ST" ||
	skip_all "cannot mount a tmpfs in the private namespace"
t_on_exit "umount -l '$ST'"
plan 39

CONF="$T_TMP/nfskeys.conf"
DB="$ST/attr.db"
SOCK="$T_TMP/attrd.sock"
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n' "$DB" "$SOCK" >"$CONF"
ATTRD_CONF=$CONF
na() { "$NFSATTR" -c "$CONF" "$@"; }
# kv ARGS...: nfsattr ARGS (a get) as KEY=VALUE lines
kv() { na "$@" | awk 'NR > 1 { print $1 "=" $2 }'; }
D1="$T_TMP/d1"
D2="$T_TMP/d2"
D3="$T_TMP/d3"
mkdir -p "$D1" "$D2" "$D3"
# views FILE: both directories as the daemon serves them and as the read path sees them
views() {
	for d in "$D1" "$D2"; do
		echo "daemon $d: $(kv -s "$SOCK" get "$d" | tr '\n' ' ')"
		echo "store $d: $(kv get "$d" | tr '\n' ' ')"
	done >"$1"
}
# big N: N user.bI keys of 1000 bytes each (about 40 KB to store)
big() {
	v=$(printf '%01000d' 7)
	i=1
	while [ "$i" -le "$1" ]; do printf 'user.b%d=%s\n' "$i" "$v"; i=$((i + 1)); done
}
fill() { dd if=/dev/zero of="$ST/fill" bs=4096 >/dev/null 2>&1; sync; }

t_attrd_start || { not_ok "daemon started"; sed 's/^/# /' "$ATTRD_LOG"; exit 1; }
ok "daemon started on a 4 MiB tmpfs"
na set "$D1" cache=read user.k=base >/dev/null && na set "$D2" user.j=base2 >/dev/null
views "$T_TMP/base"
check_contains "baseline policies set" "user.k=base" "$(cat "$T_TMP/base")"

# --- (a) disk full
fill
diag "free on the tmpfs: $(df -k "$ST" | awk 'NR == 2 { print $4 }') KiB"
out=$(na set "$D1" $(big 40) 2>&1); rc=$?
check_eq "set of 40 KB on a full disk: exit 1" 1 "$rc"
check_contains "... naming the cause" "No space left on device" "$out"
check_contains "... the daemon logs SQLite's reason with the store's path" \
	"$DB" "$(grep -i 'disk is full' "$ATTRD_LOG")"
check "the daemon keeps running and answering" t_attrd_alive
views "$T_TMP/full"
check "previous policies intact and served (daemon and read path)" cmp "$T_TMP/base" "$T_TMP/full"
out=$(na set "$D2" user.j=other 2>&1); rc=$?
[ "$rc" = 0 ] && diag "a small set fitted into the WAL's free pages"
check_eq "no half-applied change: the daemon serves none of the 40 keys" 0 \
	"$(kv -s "$SOCK" get "$D1" | grep -c '^user\.b')"
na set "$D2" user.j=base2 >/dev/null 2>&1
rm -f "$ST/fill"
check "space back: the same set succeeds" na set "$D1" $(big 40)
check_eq "... the daemon serves all 40 keys" 40 "$(kv -s "$SOCK" get "$D1" | grep -c '^user\.b')"
check_eq "... and so does the read path" 40 "$(kv get "$D1" | grep -c '^user\.b')"
check_eq "PRAGMA integrity_check" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"

# A change that fits in the WAL (restarted by a checkpoint, so its pages are reused) while
# the snapshot (a new file) cannot be written: acknowledged and durable, the read path lags
# until space returns, then catches up at the daemon's next call.
sqlite3 "$DB" 'PRAGMA wal_checkpoint(RESTART)' >/dev/null
fill
out=$(na set "$D3" user.k=during-full 2>&1); rc=$?
check_eq "small set with room in the WAL only: acknowledged (exit 0, durable)" 0 "$rc"
[ "$rc" = 0 ] || diag "$out"
check_contains "... the daemon serves it" "user.k=during-full" "$(kv -s "$SOCK" get "$D3")"
check_eq "... the read path does not yet (its snapshot could not be written)" "(no=attributes)" \
	"$(kv get "$D3")"
check_contains "... the snapshot could not be written (logged)" "publish snapshot" \
	"$(grep -i 'publish' "$ATTRD_LOG")"
rm -f "$ST/fill"
na stats >/dev/null
check_contains "space back: the read path shows it after the daemon's next call (no new change)" \
	"user.k=during-full" "$(kv get "$D3")"
check "the daemon is still running" t_attrd_alive
t_attrd_stop
check_eq "daemon stops cleanly" 0 "$?"

# --- (a') the sid backend's State-File on a full disk.  The assignment line must reach
# the file whole or not at all: the file is padded so that its page ends two bytes before
# the end of the line, so a write can only be cut inside the slice number (a half line
# "S-1-5-21-9-9-9 4" of "... 42" would read back as slice 4 and the next process would
# map the domain elsewhere).
NFSKEYS_BIN=$NFSKEYS
[ -x "$top_builddir/tools/nfskeys/.libs/nfskeys" ] && NFSKEYS_BIN="$top_builddir/tools/nfskeys/.libs/nfskeys"
sidconf() {
	printf '[General]\nDomain = sid.test\n[Translation]\nMethod = sid\n[SID]\nState-File = %s\nRange-Min = 100000\nRange-Max = 164000\nRange-Size = 1000\n' "$1"
}
sid() { LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs" "$NFSKEYS_BIN" -c "$1" idmap sid "$2" \
	2>>"$T_TMP/sid.err"; }
sidconf "$T_TMP/scratch.slices" >"$T_TMP/scratch.conf"
sidconf "$ST/slices" >"$T_TMP/sid.conf"
SID=S-1-5-21-9-9-19-500
sid "$T_TMP/scratch.conf" $SID >/dev/null
line=$(grep -v '^#' "$T_TMP/scratch.slices")
diag "the assignment line: $line"
python3 -c '
import sys
line = sys.argv[1] + "\n"
head = "# nfskeys idmap sid slice assignments: slice-name slice\n"
pad = 4096 - (len(line) - 2) - len(head)
body = ""
while pad > 0:
    n = min(pad, 80)
    body += "#" + "x" * (n - 2) + "\n" if n >= 2 else "\n"
    pad -= n
sys.stdout.write(head + body)' "$line" >"$ST/slices"
cp "$ST/slices" "$T_TMP/slices.before"
fill
out1=$(sid "$T_TMP/sid.conf" $SID)
rm -f "$ST/fill"
check_eq "full disk: the State-File is left as it was (no half line)" \
	"$(sha256sum <"$T_TMP/slices.before")" "$(sha256sum <"$ST/slices")"
out2=$(sid "$T_TMP/sid.conf" $SID)
check_eq "... and the next process maps the SID to the same id" "$out1" "$out2"
diag "first: $out1" "next: $out2" "$(cat "$T_TMP/sid.err")"

# --- (b) a damaged store at start
check_eq "the clean stop checkpointed the WAL away" "" "$(ls "$DB-wal" 2>/dev/null)"
check_eq "the stopped store passes integrity_check" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"
cp "$DB" "$T_TMP/good.db"
size=$(stat -c %s "$DB")
diag "store size $size bytes"
# refuse CASE: the daemon must exit (not 0, not killed by the timeout) naming the file and
# the problem, with the file unchanged
refuse() {
	sum=$(sha256sum <"$DB")
	: >"$T_TMP/start.log"
	timeout 120 "$ATTRD" -f -c "$CONF" >"$T_TMP/start.log" 2>&1
	rc=$?
	case $rc in 0 | 124) not_ok "$1: the daemon refuses to start (rc $rc)"
		sed 's/^/# /' "$T_TMP/start.log" ;;
	*) ok "$1: the daemon refuses to start (exit $rc)" ;; esac
	check_contains "$1: the message names the file" "$DB" "$(cat "$T_TMP/start.log")"
	check_contains "$1: ... and the problem" "$2" "$(cat "$T_TMP/start.log")"
	check_eq "$1: the file is unchanged (sha256)" "$sum" "$(sha256sum <"$DB")"
	grep -m1 "$DB" "$T_TMP/start.log" | sed 's/^/# /'
}
head -c 8192 /dev/urandom | base64 >"$DB"
refuse "not an SQLite file" "not a database"
head -c $((size / 2)) "$T_TMP/good.db" >"$DB"
refuse "cut in half" "damaged"
# garbage over the policy table's root page (not just "the middle": a free page there
# would be damage no reader ever meets, and quick_check rightly passes it)
cp "$T_TMP/good.db" "$DB"
root=$(sqlite3 "$DB" "SELECT rootpage FROM sqlite_schema WHERE name = 'attrs'")
psize=$(sqlite3 "$DB" "PRAGMA page_size")
head -c 512 /dev/zero | tr '\0' '\245' |
	dd of="$DB" bs=1 seek=$(((root - 1) * psize)) conv=notrunc 2>/dev/null
refuse "512 garbage bytes over the policy table (page $root)" "damaged"
cp "$T_TMP/good.db" "$DB"
t_attrd_start && ok "the good copy back: the daemon starts" || not_ok "the good copy back: the daemon starts"
check_contains "... and serves the policies" "user.j=base2" "$(kv -s "$SOCK" get "$D2")"
t_attrd_stop

# --- (c) power loss.  There is no device-mapper here (dm-flakey, dm-log-writes) to drop
# unsynced writes, so this checks what a power cut depends on: every acknowledgement is
# sent after the WAL holding the change was fsynced.  The daemon runs under strace; in its
# syscalls, no reply goes to a client socket while WAL writes are unsynced.  (WAL recovery
# after SIGKILL is fault-attrd-kill.sh.)
if ! command -v strace >/dev/null; then
	skip "power loss ordering: strace not installed"
	skip "power loss ordering: strace not installed"
else
	T_DAEMON_WRAPPER="strace -f -qq -y -o $T_TMP/strace.log -e trace=pwrite64,write,writev,sendmsg,sendto,fsync,fdatasync"
	t_attrd_start || { not_ok "daemon under strace started"; exit 1; }
	for i in 1 2 3 4 5 6 7 8; do na set "$D2" "user.p$i=v$i" >/dev/null; done
	kill -TERM $(pgrep -P "$ATTRD_PID") # the daemon under strace (strace ignores SIGTERM)
	t_attrd_stop
	res=$(awk '
		/attr\.db-wal>/ && /^[0-9]+ +(pwrite64|write)\(/ { dirty = 1; wal++ }
		/attr\.db-wal>/ && /^[0-9]+ +f(data)?sync\(/ { dirty = 0; syncs++ }
		/(UNIX|socket)/ && /^[0-9]+ +(write|writev|sendmsg|sendto)\(/ {
			if (wal) { replies++; if (dirty) early++ } }
		END { printf "%d %d %d %d\n", wal, syncs, replies, early }' "$T_TMP/strace.log")
	set -- $res
	diag "strace: $1 WAL writes, $2 WAL syncs, $3 replies after WAL writes, $4 sent before a sync"
	check "the 8 sets wrote and synced the WAL, and were answered" \
		test "$1" -gt 0 -a "$2" -ge 8 -a "$3" -ge 8
	check_eq "no acknowledgement sent while a WAL write was unsynced" 0 "$4"
fi
