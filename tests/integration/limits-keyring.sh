#!/bin/sh
# The key quota of an unprivileged requester full (its own quota: kernel.keys.maxbytes per
# uid, so it runs in the parallel suite).  Filler keys leave 60 bytes: room for the key
# under construction and the kernel's upcall overheads, not for the helper's answer.  The
# helper must say so, reject the key with EDQUOT (the request fails at once) and touch no
# other key; with 0 bytes left the kernel refuses before any helper runs.  Root's own
# quota (root_maxbytes) is tested serially by limits-keyring-root.sh (scripts/check).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"
. "$top_srcdir/tests/harness/faults.sh"
. "$top_srcdir/tests/harness/keyquota.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (request-key routes, another uid)"
command -v setpriv >/dev/null || skip_all "setpriv not installed (util-linux)"
[ -r /proc/key-users ] || skip_all "no /proc/key-users"
kq_setup || skip_all "needs keyctl and a writable /etc/request-key.d"

# A uid of our own (no other test shares its quota), no passwd entry needed.
Q=$((61000 + $$ % 1000))
# Some kernels (this machine's 6.18) run no request-key upcall at all for a requester
# without CAP_SYS_ADMIN: request_key() fails with ENOENT and /sbin/request-key is never
# executed (ENOKEY would mean it ran and failed).  CAP_SYS_ADMIN plays no part in key
# quotas, so the requester keeps it as an ambient capability; its uid's quota applies.
AS_Q="setpriv --reuid=$Q --regid=$Q --clear-groups"
if $AS_Q --inh-caps=+sys_admin --ambient-caps=+sys_admin true 2>/dev/null; then
	AS_Q="$AS_Q --inh-caps=+sys_admin --ambient-caps=+sys_admin"
fi
printf 'create\tuser\t*\t%s-probe\t/bin/keyctl instantiate %%k 1 %%S\n' "$T_CALLOUT" \
	>"/etc/request-key.d/$T_CALLOUT-probe.conf"
t_on_exit "rm -f '/etc/request-key.d/$T_CALLOUT-probe.conf'"
if ! probe=$(timeout 20 $AS_Q keyctl session - \
	keyctl request2 user "probe:$$" "$T_CALLOUT-probe" @s 2>&1); then
	skip_all "request-key runs no upcall for uid $Q here ($(echo "$probe" | tail -n1))"
fi
plan 17

kq_run helper fill 60 timeout 60 $AS_Q
kq_check_helper_rejects helper
kq_check_intact helper
check_eq "helper: ... and the fillers" kept "$(kq_v helper filler)"

kq_run kernel fill 0 timeout 60 $AS_Q
kq_check_kernel_refuses kernel
kq_check_intact kernel
