#!/bin/sh
# Crash consistency of nfskeys-attrd: four clients stream `nfsattr set` on their own
# directories (a new key each time) while the daemon is killed with SIGKILL at random
# points and restarted, 50 times.  Afterwards the SQLite store passes
# PRAGMA integrity_check and every change a client saw acknowledged (exit 0) is there with
# its value, read both through `nfsattr get --json` and straight from the database.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/faults.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (the store and directories are root's)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 CLI not installed (package sqlite3)"

KILLS=${NFSKEYS_FAULT_KILLS:-50}
CLIENTS=4
plan 7

ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR=$(t_real_bin "$top_builddir/tools/nfsattr/nfsattr")
CONF="$T_TMP/nfskeys.conf"
SOCK="$T_TMP/attrd.sock"
DB="$T_TMP/attr.db"
cat >"$CONF" <<EOF
[Attr]
Store = $DB
[Attrd]
Socket = $SOCK
EOF
ATTRD_PID=
STARTS=0
start_daemon() {
	$T_DAEMON_WRAPPER "$ATTRD" -f -c "$CONF" >>"$T_TMP/attrd.log" 2>&1 &
	ATTRD_PID=$!
	STARTS=$((STARTS + 1))
	t_attrd_wait "$T_TMP/attrd.log" $STARTS
}
t_on_exit '[ -n "$ATTRD_PID" ] && kill -9 $ATTRD_PID'
t_on_exit '[ -n "${CPIDS:-}" ] && kill $CPIDS'
t_on_exit "touch '$T_TMP/stop'"

start_daemon || { not_ok "daemon started"; sed 's/^/# /' "$T_TMP/attrd.log"; exit 1; }

# One client: set user.c<K>n<I>=v<I>-<K> on its own directory, one key per call, and record
# the calls that were acknowledged.  Not-running (5) and other failures while the daemon
# dies are expected; they are simply not recorded.
# (A new subdirectory every 50 keys: a lookup answer holds at most 128 entries.)
client() {
	k=$1 i=0
	while [ ! -e "$T_TMP/stop" ]; do
		i=$((i + 1))
		d="$T_TMP/dir$k/s$((i / 50))"
		mkdir -p "$d"
		if "$NFSATTR" -c "$CONF" set "$d" "user.c${k}n$i=v$i-$k" >/dev/null 2>>"$T_TMP/client$k.err"
		then
			echo "user.c${k}n$i v$i-$k" >>"$T_TMP/acked$k"
		else
			echo "$i $?" >>"$T_TMP/failed$k"
		fi
	done
}
CPIDS=
k=0
while [ $k -lt $CLIENTS ]; do
	mkdir -p "$T_TMP/dir$k"
	: >"$T_TMP/acked$k"
	: >"$T_TMP/failed$k"
	client $k &
	CPIDS="$CPIDS $!"
	k=$((k + 1))
done

# Kill at a random point 0-200 ms after the daemon answered (so most kills land while
# sets are being committed), restart, repeat.
start=$(date +%s)
kills=0 bad_start=0
while [ $kills -lt "$KILLS" ]; do
	sleep "0.$(shuf -i 0-200 -n 1 | xargs printf '%03d')"
	kill -KILL "$ATTRD_PID"
	wait "$ATTRD_PID" 2>/dev/null
	kills=$((kills + 1))
	start_daemon || { bad_start=$((bad_start + 1)); break; }
done
sleep 0.3
touch "$T_TMP/stop"
for p in $CPIDS; do wait "$p"; done
CPIDS=
elapsed=$(($(date +%s) - start))
check_eq "daemon restarted after each of $kills SIGKILLs (${elapsed} s)" "0 $KILLS" "$bad_start $kills"
[ "$bad_start" = 0 ] || sed 's/^/# /' "$T_TMP/attrd.log" | tail -20

acked=$(cat "$T_TMP"/acked* | wc -l)
failed=$(cat "$T_TMP"/failed* | wc -l)
diag "acknowledged sets: $acked, failed while the daemon was down or dying: $failed"
check "clients made progress ($acked acknowledged sets)" test "$acked" -ge 100

# Leave the last instance killed too, so the checks below see the state of a crash.
kill -KILL "$ATTRD_PID"
wait "$ATTRD_PID" 2>/dev/null
ATTRD_PID=
check_eq "PRAGMA integrity_check after the crash" "ok" "$(sqlite3 "$DB" 'PRAGMA integrity_check')"

# Every acknowledged change, with its value, in the database.
sqlite3 -separator ' ' "$DB" "SELECT key, value FROM attrs WHERE key LIKE 'user.c%'" |
	sort >"$T_TMP/db.txt"
sort "$T_TMP"/acked* >"$T_TMP/acked.txt"
missing=$(comm -23 "$T_TMP/acked.txt" "$T_TMP/db.txt" | wc -l)
check_eq "every acknowledged set is in the database with its value" 0 "$missing"
[ "$missing" = 0 ] || comm -23 "$T_TMP/acked.txt" "$T_TMP/db.txt" | head -5 | sed 's/^/# missing: /'

# ... and through the daemon (restarted on the crashed store).
start_daemon || { not_ok "daemon starts on the crashed store"; exit 1; }
ok "daemon starts on the crashed store"
k=0
: >"$T_TMP/get.txt"
while [ $k -lt $CLIENTS ]; do
	for d in "$T_TMP/dir$k"/s*; do
		"$NFSATTR" -c "$CONF" get --json "$d" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["attributes"]:
    print(a["key"], a["value"])' >>"$T_TMP/get.txt"
	done
	k=$((k + 1))
done
sort -o "$T_TMP/get.txt" "$T_TMP/get.txt"
missing=$(comm -23 "$T_TMP/acked.txt" "$T_TMP/get.txt" | wc -l)
check_eq "every acknowledged set is returned by nfsattr get --json" 0 "$missing"
kill "$ATTRD_PID"
wait "$ATTRD_PID"
rc=$?
ATTRD_PID=
check_eq "daemon stops cleanly afterwards" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T_TMP/attrd.log" | tail -30
