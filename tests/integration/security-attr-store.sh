#!/bin/sh
# doc/security/FINDINGS.md D3: no other user can lock nfskeys-attrd's store.  The database
# and its -wal/-shm are 0600 (the daemon's alone); readers that do not go through the
# daemon read the snapshot it publishes by rename after every commit (0644, opened
# immutable: no locks).  Another uid tries to hold the locks SQLite's writer needs (the
# WAL write byte in -shm, the database's lock bytes, the snapshot) while root sets values
# through the daemon: every set must succeed while the other uid still holds them (it
# lets go only when the test says so: a set that waited for a lock would wait out the
# store's busy timeout and fail), and the other uid reads the new values through the
# library meanwhile.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/attrd.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (another uid, the daemon's store)"
command -v setpriv >/dev/null || skip_all "setpriv missing"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 missing (run as another uid)"

plan 14
chmod 755 "$T_TMP"
CONF="$T_TMP/nfskeys.conf"
SOCK="$T_TMP/attrd.sock"
DB="$T_TMP/store/attr.db"
mkdir -m 755 "$T_TMP/store"
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n' "$DB" "$SOCK" >"$CONF"
chmod 644 "$CONF"
$T_DAEMON_WRAPPER "$ATTRD" -f -c "$CONF" -v >>"$T_TMP/attrd.log" 2>&1 &
ATTRD_PID=$!
t_on_exit "kill $ATTRD_PID"
# the daemon itself must answer ("nfsattr stats" exits 0 with none: it reads the store)
t_wait_for "t_attrd_alive $ATTRD_PID '$CONF'" $T_DAEMON_WAIT ||
	{ sed 's/^/# /' "$T_TMP/attrd.log"; fail_all "attrd: does not answer over $SOCK"; }
na() { "$NFSATTR" -c "$CONF" "$@"; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# what uid 65534 runs is the installed copy (the build tree may be out of its reach)
t_ou_load
NFSATTR_OU=$(t_ou nfsattr)
DIR="$T_TMP/dir"
mkdir -m 755 "$DIR"
na set "$DIR" cache=none >/dev/null

check_eq "store, -wal and -shm are 0600" "600 600 600" \
	"$(stat -c %a "$DB" "$DB-wal" "$DB-shm" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
check_eq "the published snapshot is 0644" 644 "$(stat -c %a "$DB.snapshot" 2>&1)"

# LOCKER RELEASE FILE:OFFSET...: as uid 65534, open each file read-only and hold a shared
# lock on one byte at OFFSET (120: the WAL write lock in -shm; 0x40000000: the database's
# PENDING byte) until RELEASE exists (600 s at most: a hang guard); prints what it got,
# then "released" as it lets go.
cat >"$T_TMP/locker.py" <<'PY'
import fcntl, os, sys, time
held = []
for arg in sys.argv[2:]:
    f, off = arg.rsplit(":", 1)
    try:
        fd = os.open(f, os.O_RDONLY)
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, int(off, 0))
        held.append(fd)
        print("locked %s" % os.path.basename(f))
    except OSError as e:
        print("refused %s: %s" % (os.path.basename(f), e.strerror))
sys.stdout.flush()
t0 = time.monotonic()
while not os.path.exists(sys.argv[1]) and time.monotonic() - t0 < 600:
    time.sleep(0.05)
print("released")
PY
chmod 644 "$T_TMP/locker.py"
RELEASE=$T_TMP/release
as_nobody /usr/bin/python3 "$T_TMP/locker.py" "$RELEASE" "$DB-shm:120" "$DB:0x40000000" \
	"$DB.snapshot:0x40000000" >"$T_TMP/locker.out" 2>&1 &
LOCKER=$!
t_on_exit "kill $LOCKER"
# (a hang guard: the three attempts take the locker far less)
t_wait_for "[ -s '$T_TMP/locker.out' ] && [ \$(wc -l <'$T_TMP/locker.out') -ge 3 ]" 60
sed 's/^/# /' "$T_TMP/locker.out"
check_contains "another uid cannot open -shm to lock it" "refused attr.db-shm" "$(cat "$T_TMP/locker.out")"
check_contains "... nor the database" "refused attr.db:" "$(cat "$T_TMP/locker.out")"
check_contains "... but it holds the snapshot's lock" "locked attr.db.snapshot" \
	"$(cat "$T_TMP/locker.out")"
na set "$DIR" actimeo=5 >"$T_TMP/set.out" 2>&1
rc=$?
sed 's/^/# /' "$T_TMP/set.out"
check_eq "a set while the other uid holds what it could: succeeds" 0 "$rc"
# (the locker lets go only when told: a set that waited for its locks would have failed
# at the store's busy timeout instead)
check_eq "... while the other uid still holds its locks (not released yet, still running)" \
	"0|alive" "$(grep -c '^released' "$T_TMP/locker.out")|$(kill -0 $LOCKER 2>/dev/null && echo alive)"
check_contains "the other uid reads the new value through the library (the snapshot)" \
	"actimeo" "$(as_nobody $T_OU_ENV "$NFSATTR_OU" -c "$CONF" show "$DIR" 2>&1 | grep actimeo)"
check_contains "... 5" "5" "$(as_nobody $T_OU_ENV "$NFSATTR_OU" -c "$CONF" show "$DIR" 2>&1 | grep actimeo)"
na set "$DIR" actimeo=7 >/dev/null 2>&1
check_eq "a set while the snapshot is locked by the other uid: succeeds" 0 "$?"
check_contains "... and the other uid sees it (a new snapshot was renamed in)" "7" \
	"$(as_nobody $T_OU_ENV "$NFSATTR_OU" -c "$CONF" show "$DIR" 2>&1 | grep actimeo)"
check_eq "all of that while the other uid held its locks" \
	"0|alive" "$(grep -c '^released' "$T_TMP/locker.out")|$(kill -0 $LOCKER 2>/dev/null && echo alive)"
touch "$RELEASE"
wait $LOCKER
check_eq "the daemon's log has no lock error" "" "$(grep -i 'locked\|busy' "$T_TMP/attrd.log")"
check "the daemon is alive and answers" t_attrd_alive "$ATTRD_PID" "$CONF"
t_attrd_alive "$ATTRD_PID" "$CONF" || sed -n "1,30s/^/# /p" "$T_TMP/attrd.log"
