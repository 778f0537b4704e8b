#!/bin/sh
# Every privileged operation tried by callers who may not do it: nfskeys-idmapd's flush and
# reload as an unprivileged uid (refused, logged, counters and cache unchanged);
# nfskeys-attrd's set and unset on a directory of another owner (refused with the reason,
# nothing changed), by the owner and by an Admin-Group member (allowed); nfsattr import as
# a non-root user (refused, store unchanged).  And the credential commands make themselves
# non-dumpable before they hold a password: their /proc/PID files belong to root and
# another process of the same uid cannot ptrace them or read their memory.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/faults.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (runs commands as other uids)"
command -v setpriv >/dev/null || skip_all "setpriv not installed (util-linux)"
plan 28
chmod 755 "$T_TMP"
U1=65534 U2=65533          # two unprivileged uids, neither in any group
# what the other uids run is the installed copy (the build tree may be out of their reach)
t_ou_load
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups $T_OU_ENV "$@"; }
NFSKEYS_OU=$(t_ou nfskeys)
NFSATTR_OU=$(t_ou nfsattr)

# --- nfskeys-idmapd: flush and reload are root's
t_idmapd_conf
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
"$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test >/dev/null
entries0=$(t_idmapd_stat cache_entries)
flushes0=$(t_idmapd_stat cache_flushes_total)
reloads0=$(t_idmapd_stat reloads_total)
gen0=$(t_idmapd_stat config_generation)
out=$(as $U1 "$NFSKEYS_OU" -c "$IDMAPD_CONF" idmapd flush 2>&1); rc=$?
check_eq "idmapd flush as uid $U1: exit 1" 1 "$rc"
check_contains "... permission denied (root only)" "permission denied (root only)" "$out"
out=$(as $U1 "$NFSKEYS_OU" -c "$IDMAPD_CONF" idmapd flush name-to-uid alice@example.test 2>&1); rc=$?
check_eq "idmapd flush of one entry as uid $U1: exit 1" 1 "$rc"
out=$(as $U1 "$NFSKEYS_OU" -c "$IDMAPD_CONF" idmapd reload 2>&1); rc=$?
check_eq "idmapd reload as uid $U1: exit 1" 1 "$rc"
check_contains "... permission denied (root only)" "permission denied (root only)" "$out"
check_eq "cache entries, flushes, reloads and generation unchanged" \
	"$entries0 $flushes0 $reloads0 $gen0" "$(t_idmapd_stat cache_entries) \
$(t_idmapd_stat cache_flushes_total) $(t_idmapd_stat reloads_total) $(t_idmapd_stat config_generation)"
check_eq "each refusal counted (denied_total flush+reload)" 3 \
	"$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats | awk '$1 ~ /^denied_total/ { s += $2 } END { print s + 0 }')"
check_contains "... and logged with the caller" "refused for pid" "$(cat "$T_TMP/idmapd.log")"
check "root may flush" "$NFSKEYS" -c "$IDMAPD_CONF" idmapd flush
t_idmapd_stop

# --- nfskeys-attrd: owners, others, the admin group, import
ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR=$(t_real_bin "$top_builddir/tools/nfsattr/nfsattr")
ACONF="$T_TMP/attr.conf"
groupadd_gid=$(getent group users | cut -d: -f3)
[ -n "$groupadd_gid" ] || groupadd_gid=100
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\nAdmin-Group = users\n' \
	"$T_TMP/attr.db" "$T_TMP/attrd.sock" >"$ACONF"
$T_DAEMON_WRAPPER "$ATTRD" -f -c "$ACONF" -v >"$T_TMP/attrd.log" 2>&1 &
APID=$!
t_on_exit "kill -9 $APID"
t_attrd_wait "$T_TMP/attrd.log"
na() { "$NFSATTR" -c "$ACONF" "$@"; }
D1="$T_TMP/u1dir"
mkdir -p "$D1" && chown $U1:$U1 "$D1"
check "owner (uid $U1) sets on its directory" as $U1 "$NFSATTR_OU" -c "$ACONF" set "$D1" cache=none
out=$(as $U2 "$NFSATTR_OU" -c "$ACONF" set "$D1" cache=full 2>&1); rc=$?
check_eq "another uid ($U2) sets on it: exit 4 (refused)" 4 "$rc"
check_contains "... with the reason" "belongs to uid $U1, and only its owner" "$out"
out=$(as $U2 "$NFSATTR_OU" -c "$ACONF" unset "$D1" cache 2>&1); rc=$?
check_eq "another uid unsets on it: exit 4 (refused)" 4 "$rc"
check_contains "... with the reason" "belongs to uid $U1, and only its owner" "$out"
check_eq "the owner's value is untouched" "none" \
	"$(na show "$D1" | awk '$1 == "cache" { print $2 }')"
out=$(as $U1 "$NFSATTR_OU" -c "$ACONF" set "$T_TMP" cache=full 2>&1); rc=$?
check_eq "uid $U1 on root's directory: exit 4 (refused)" 4 "$rc"
check "an Admin-Group member ('users') may set on root's directory" \
	setpriv --reuid=$U2 --regid=$U2 --groups="$groupadd_gid" $T_OU_ENV "$NFSATTR_OU" -c "$ACONF" set "$T_TMP" cto=on
check "... and unset on uid $U1's directory" \
	setpriv --reuid=$U2 --regid=$U2 --groups="$groupadd_gid" $T_OU_ENV "$NFSATTR_OU" -c "$ACONF" unset "$D1" cache
check_contains "refusals logged by the daemon, with the caller" "refused for pid" "$(cat "$T_TMP/attrd.log")"
before=$(na list)
printf '{"policies":[{"domain":"nfs://srv","path":"/x","attributes":{"cache":"none"}}]}' >"$T_TMP/imp.json"
chmod 644 "$T_TMP/imp.json"
out=$(as $U1 "$NFSATTR_OU" -c "$ACONF" import "$T_TMP/imp.json" 2>&1); rc=$?
check "nfsattr import as uid $U1 fails (exit $rc)" test "$rc" != 0
check_contains "... saying why" "for root only" "$out"
out=$(setpriv --reuid=$U2 --regid=$U2 --groups="$groupadd_gid" $T_OU_ENV "$NFSATTR_OU" -c "$ACONF" import "$T_TMP/imp.json" 2>&1); rc=$?
check "... also for an Admin-Group member: import is root's (exit $rc)" test "$rc" != 0
check_eq "the store is unchanged" "$before" "$(na list)"
kill "$APID"; wait "$APID"

# --- credential commands are non-dumpable while they hold a password
# wait_exec PID PROGRAM: until PID runs PROGRAM (setpriv has exec'd it)
wait_exec() { t_wait_for "readlink /proc/$1/exe | grep -q '/$2\$'" 10; }
mem_readable() { # may uid $U1 open /proc/PID/mem (ptrace access, as a debugger needs)?
	as $U1 sh -c "exec 5</proc/$1/mem" 2>/dev/null && echo readable || echo denied
}
dumpable_check() { # NAME ARGS...: run nfskeys ARGS as $U1 blocked on its password
	name=$1; shift
	rm -f "$T_TMP/pw"; mkfifo "$T_TMP/pw"; chmod 666 "$T_TMP/pw"
	# setpriv itself in the background (not the function "as": $! would be a subshell)
	setpriv --reuid=$U1 --regid=$U1 --clear-groups $T_OU_ENV "$NFSKEYS_OU" "$@" <"$T_TMP/pw" >/dev/null 2>&1 &
	p=$!
	exec 4>"$T_TMP/pw"       # the command now runs and waits for the password
	wait_exec $p nfskeys
	t_wait_for "grep -q '^State:.*S' /proc/$p/status" 5
	sleep 0.2
	owner=$(stat -c %u "/proc/$p/status" 2>/dev/null)
	mem=$(mem_readable $p)
	printf 'not-the-password\n' >&4
	exec 4>&-
	wait $p 2>/dev/null
	check_eq "nfskeys $name as uid $U1: /proc/PID owned by root (non-dumpable)" 0 "$owner"
	check_eq "... and its memory is not readable by uid $U1" denied "$mem"
}
setpriv --reuid=$U1 --regid=$U1 --clear-groups sleep 5 &
ctl=$!
wait_exec $ctl sleep
check_eq "control: a plain process of uid $U1 owns its /proc/PID, its memory is readable" \
	"$U1 readable" "$(stat -c %u /proc/$ctl/status) $(mem_readable $ctl)"
kill $ctl
dumpable_check "cifs add" cifs add -u someone 127.0.0.1
dumpable_check "nfs login" nfs login -p someone -c "FILE:$T_TMP/cc-$$"
