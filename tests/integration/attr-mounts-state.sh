#!/bin/sh
# nfskeys-attrd's sub-mount table without NFS (doc/LIVE-MOUNTS.md; the kernel side is
# tests/kernel/attr-mounts.ktest): [Mounts] Apply-Mounts read through the schema, a bad
# value refused with the key named, `nfsattr status` and --json when off and when on with
# nothing to do, and a stale or forged state file (RUNDIR/attrd-mounts): garbage lines are
# ignored and a listed mount that is not an NFS nosharecache mount of ours (here a tmpfs,
# with its real mount id and place) is never adopted, so never unmounted (the log says so).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/attrd.sh"

if [ "$(id -u)" = 0 ] && [ -z "${NFSKEYS_ATTR_NS:-}" ] && command -v unshare >/dev/null &&
   unshare -m --propagation private true 2>/dev/null; then
	NFSKEYS_ATTR_NS=1 exec unshare -m --propagation private "${SHELL:-/bin/sh}" "$0" "$@"
fi
[ "$(id -u)" = 0 ] || skip_all "needs root (a tmpfs mount in a private mount namespace)"
[ -n "${NFSKEYS_ATTR_NS:-}" ] || skip_all "unshare -m is not available"

plan 14

CONF="$T_TMP/nfskeys.conf"
RUN="$T_TMP/run"
write_conf() {
	printf '[General]\nRuntime-Dir = %s\n[Attr]\nStore = %s/attr.db\n[Attrd]\nSocket = %s/attrd.sock\n[Mounts]\nApply-Mounts = %s\n' \
		"$RUN" "$T_TMP" "$T_TMP" "$1" >"$CONF"
}
ATTRD_CONF=$CONF
NA() { "$NFSATTR" -c "$CONF" "$@"; }

# --- a bad value: refused at start, the key and value named, exit status 3
write_conf maybe
"$ATTRD" -f -c "$CONF" >"$T_TMP/bad.out" 2>&1
rc=$?
check_eq "Apply-Mounts = maybe: nfskeys-attrd refuses to start (exit 3)" 3 "$rc"
check_contains "and the message names the key and the value" \
	"[Mounts] Apply-Mounts = maybe: expected yes or no" "$(cat "$T_TMP/bad.out")"

# --- off (the default)
write_conf no
t_attrd_start || fail_all "nfskeys-attrd starts"
check_contains "status with Apply-Mounts = no says it is off" \
	"sub-mounts for directory policy are off" "$(NA status 2>&1)"
t_attrd_stop

# --- on, with a state file naming a real mount that is not ours
mkdir -p "$RUN" "$T_TMP/m"
mount -t tmpfs -o size=1M nfskeys-test "$T_TMP/m" || fail_all "mount a tmpfs"
t_on_exit "umount -l $T_TMP/m"
id=$(awk -v t="$T_TMP/m" '$5 == t { print $1 }' /proc/self/mountinfo)
{
	echo "garbage"
	echo "999999999 /nonexistent/x actimeo=5"
	echo "$id $T_TMP/m -"
	printf '12 \\777\\000 x\n'
} >"$RUN/attrd-mounts"
write_conf yes
t_attrd_start || fail_all "nfskeys-attrd starts with Apply-Mounts = yes"
check "with a garbage and forged state file the daemon runs and answers" t_attrd_alive
check_eq "the tmpfs named in the state file is still mounted (never adopted)" "$id" \
	"$(awk -v t="$T_TMP/m" '$5 == t { print $1 }' /proc/self/mountinfo)"
check_contains "the log says why it was not adopted" \
	"mount id $id at $T_TMP/m in $RUN/attrd-mounts: not a sub-mount of ours, not adopted" \
	"$(cat "$ATTRD_LOG")"
check_contains "status with nothing to do says so" "no sub-mounts" "$(NA status 2>&1)"
NA status --json >"$T_TMP/status.json" 2>&1
check_eq "status --json: valid JSON, apply_mounts true, no mounts" "True 0 0" \
	"$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["apply_mounts"], len(d["mounts"]), d["more"])' "$T_TMP/status.json" 2>&1)"
check_eq "the state file was rewritten without the stale entries" "" \
	"$(cat "$RUN/attrd-mounts")"
t_attrd_stop
check_eq "nfskeys-attrd stops cleanly" 0 $?
check "with CAP_SYS_ADMIN, no warning about it" sh -c "! grep -q 'lacks CAP_SYS_ADMIN' '$ATTRD_LOG'"

# --- Apply-Mounts without CAP_SYS_ADMIN (a unit's empty CapabilityBoundingSet=): said at
# start, with the fix; and the mount namespace: this test runs in one of its own
# (unshare -m above), which the daemon names when it can see PID 1's
: >"$ATTRD_LOG"
T_DAEMON_WRAPPER="setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin $T_DAEMON_WRAPPER" \
	t_attrd_start || fail_all "nfskeys-attrd starts without CAP_SYS_ADMIN"
t_attrd_stop
check_contains "... and names the file" "/nfskeys-attrd-apply-mounts.conf (nfskeys-attrd(8), SUB-MOUNTS)" \
	"$(cat "$ATTRD_LOG")"
check_contains "without CAP_SYS_ADMIN: a warning naming the drop-in that fixes it" \
	"lacks CAP_SYS_ADMIN: every sub-mount will fail with EPERM; with systemd, install the drop-in /" \
	"$(cat "$ATTRD_LOG")"
if [ -r /proc/1/mountinfo ] && [ "$(head -c 64 /proc/1/mountinfo 2>/dev/null | cut -d' ' -f1)" ]; then
	check_contains "in a mount namespace of its own: a warning that nobody sees its mounts" \
		"runs in a mount namespace of its own" "$(cat "$ATTRD_LOG")"
else # a container that hides PID 1's mount table: the daemon cannot know, so says nothing
	check "PID 1's mount table unreadable (a container): no namespace warning" \
		sh -c "! grep -q 'mount namespace of its own' '$ATTRD_LOG'"
fi
