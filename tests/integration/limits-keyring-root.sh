#!/bin/sh
# Root's key quota full, through the real request-key -> nfskeys-upcall path: root_maxbytes
# lowered to root's current usage + 60 bytes (room for the key under construction and the
# kernel's upcall overheads, not for the helper's answer), then to + 0 bytes, and
# root_maxkeys to + 0 keys.  The helper must name the error and reject the key with EDQUOT;
# nobody's other keys may go.  Lowering root's quota hits every root key user on the
# machine, so this is not in make check's TESTS: scripts/check runs it serially after the
# parallel suites (make check-serial), one window of well under a second per case, under
# a machine-wide lock, restored on every exit path and by a detached watchdog.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"
. "$top_srcdir/tests/harness/faults.sh"
. "$top_srcdir/tests/harness/keyquota.sh"
trap 'exit 129' HUP
trap 'exit 141' PIPE

K=/proc/sys/kernel/keys
[ "$(id -u)" = 0 ] || skip_all "needs root (root's key quota, request-key routes)"
[ -r /proc/key-users ] || skip_all "no /proc/key-users"
[ -r $K/root_maxbytes ] || skip_all "no $K (kernel without key quotas)"
# Writing the current values back changes nothing and tells whether we may write at all
# (a container's read-only /proc/sys, no CAP_SYS_ADMIN...).
if ! err=$( (cat $K/root_maxbytes >$K/root_maxbytes && cat $K/root_maxkeys >$K/root_maxkeys) \
	2>&1); then
	skip_all "$K not writable here (${err##*: })"
fi
command -v flock >/dev/null || skip_all "flock not installed (util-linux)"

# One such test at a time on the machine (other worktrees too), and a record of the
# original values that outlives us: a run that died with the quota lowered is undone
# by the next one, and by our watchdog 30 s after we die.
LOCK=/run/lock/nfskeys-root-keyquota.lock STATE=/run/lock/nfskeys-root-keyquota.state
[ -d /run/lock ] || LOCK=/tmp/nfskeys-root-keyquota.lock STATE=/tmp/nfskeys-root-keyquota.state
exec 9>"$LOCK"
flock -w 300 9 || skip_all "another root key-quota test held $LOCK for 300 s"
restore_state() { # the values the state file records, back in place
	[ -f "$STATE" ] || return 0
	while read -r f v; do echo "$v" >"$f"; done <"$STATE"
	rm -f "$STATE"
}
if [ -f "$STATE" ]; then
	diag "a previous run left the quota lowered: restoring $(tr '\n' ' ' <"$STATE")"
	restore_state
fi
# (and its keyring of unrelated keys, left in root's user keyring)
for k in $(keyctl rlist @u 2>/dev/null); do
	case "$(keyctl rdescribe "$k" 2>/dev/null)" in
	keyring\;*\;nfskeys-test-kq-ring-*) keyctl unlink "$k" @u >/dev/null 2>&1 ;;
	esac
done
ORIG_BYTES=$(cat $K/root_maxbytes) ORIG_KEYS=$(cat $K/root_maxkeys)
printf '%s %s\n' $K/root_maxbytes "$ORIG_BYTES" $K/root_maxkeys "$ORIG_KEYS" >"$STATE.new" &&
	mv "$STATE.new" "$STATE"
t_on_exit restore_state
setsid sh -c "sleep 30; if [ -f '$STATE' ]; then
	while read -r f v; do echo \"\$v\" >\"\$f\"; done <'$STATE'; rm -f '$STATE'; fi" \
	9>&- </dev/null >/dev/null 2>&1 &
WATCHDOG=$!
t_on_exit "kill -- -$WATCHDOG || kill $WATCHDOG"

kq_setup || skip_all "needs keyctl and a writable /etc/request-key.d"
t_on_exit "while r=\$(keyctl search @u keyring '$KQ_RING'); do keyctl unlink \$r @u; done"
plan 26

restored() {
	check_eq "$1: root_maxbytes and root_maxkeys back to $ORIG_BYTES and $ORIG_KEYS" \
		"$ORIG_BYTES $ORIG_KEYS" "$(cat $K/root_maxbytes) $(cat $K/root_maxkeys)"
}

# Root keys come and go all the time (other tests' session keyrings): a case whose
# outcome shows that the margin moved under us (the helper ran or not against the plan,
# or the request succeeded) is run again, up to 3 times.
attempt() { # NAME MODE FREE ORIG HELPER-EXPECTED(yes/no)
	_a=1
	while :; do
		KQ_ORIG=$4 kq_run "$1" "$2" "$3" timeout 60
		_h=no
		[ -n "$(kq_helper_err "$1")" ] && _h=yes
		[ "$_h" = "$5" ] && [ "$(kq_v "$1" request)" = failed ] && break
		[ $_a -ge 3 ] && break
		diag "$1, attempt $_a: root's usage moved in the window (helper ran: $_h;" \
			"$(kq_v "$1" request) $(kq_v "$1" error)); again"
		_a=$((_a + 1))
	done
	check_eq "$1: root_maxbytes and root_maxkeys back to $ORIG_BYTES and $ORIG_KEYS" \
		"$ORIG_BYTES $ORIG_KEYS" "$(cat $K/root_maxbytes) $(cat $K/root_maxkeys)"
}

attempt helper root 60 "$ORIG_BYTES" yes
kq_check_helper_rejects helper
kq_check_intact helper

attempt bytes root 0 "$ORIG_BYTES" no
kq_check_kernel_refuses bytes
kq_check_intact bytes

attempt keys rootkeys 0 "$ORIG_KEYS" no
kq_check_kernel_refuses keys
kq_check_intact keys
