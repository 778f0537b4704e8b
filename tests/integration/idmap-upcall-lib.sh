# Helpers for tests that route request-key upcalls to a helper (sourced after lib.sh).
# The route matches `user` keys whose callout info is unique to this test, so the
# descriptions can be exactly those the kernel's id_resolver/cifs.idmap types use.

# t_route_upcalls PROGRAM [ARGS...]: install a temporary /etc/request-key.d file sending
# user keys with callout info $T_CALLOUT to PROGRAM ARGS %k %d (removed at exit, on a
# failure and on SIGINT/SIGTERM too; tests/integration/harness-request-key.sh).  The kernel
# runs /sbin/request-key, which reads only /etc, so there is no private place for it: the
# files are named nfskeys-test-TEST-PID-NS*.conf after the test, and a test killed with
# SIGKILL leaves its own behind (doc/TESTING.md says how to clean up).
t_route_upcalls() {
	[ "$(id -u)" = 0 ] || return 1
	[ -d /etc/request-key.d ] && [ -w /etc/request-key.d ] || return 1
	command -v keyctl >/dev/null 2>&1 || return 1
	T_CALLOUT="nfskeys-test-$(basename "$0" .sh | tr -c 'a-zA-Z0-9_\n-' _)-$$-$(date +%s%N)"
	T_ROUTE="/etc/request-key.d/$T_CALLOUT.conf"
	printf 'create\tuser\t*\t%s\t%s %%k %%d\n' "$T_CALLOUT" "$*" >"$T_ROUTE" || return 1
	t_on_exit "rm -f '$T_ROUTE'"
}

# t_route_like_enable_upcalls HELPER: route as `nfskeys idmap enable-upcalls` would (its
# own lines, prefix by prefix), retargeted to user keys with callout $T_CALLOUT; plus a
# competing catch-all "*" route in another file that negates, as a distribution's
# id_resolver.conf would be: the prefix lines must win.  The catch-all negates for
# T_CATCHALL_TTL (47 s) with ENOKEY, a timeout no helper answer uses, so a test can tell its
# negative keys from the helper's rejections.
T_CATCHALL_TTL=47
t_route_like_enable_upcalls() {
	t_route_upcalls /bin/false || return 1
	"$NFSKEYS" idmap enable-upcalls --print --helper "$1" | grep '^create' |
		sed -e "s/^create\t[^\t]*\t\([^\t]*\)\t\*\t/create\tuser\t\1\t$T_CALLOUT\t/" \
		>"$T_ROUTE" || return 1
	grep -q "^create	user	uid:\*	$T_CALLOUT	$1 %k %d" "$T_ROUTE" || return 1
	printf 'create\tuser\t*\t%s\t/bin/keyctl negate %%k %s %%S\n' "$T_CALLOUT" "$T_CATCHALL_TTL" \
		>"/etc/request-key.d/$T_CALLOUT-catchall.conf"
	t_on_exit "rm -f '/etc/request-key.d/$T_CALLOUT-catchall.conf'"
}

# t_upcall DESCRIPTION: request a user key through the route in a fresh session keyring;
# prints the payload as hex and "expiry=<proc column>" on the next line; fails when the
# request fails, or hangs for T_UPCALL_GUARD seconds (120: a hang guard, far beyond any
# load; timeout(1) ends the request and its helper).
T_UPCALL_GUARD=120
t_upcall() {
	timeout "$T_UPCALL_GUARD" keyctl session - sh -c '
		k=$(keyctl request2 user "$1" "$2" @s 2>/dev/null) || exit 1
		keyctl pipe "$k" | od -An -v -tx1 | tr -d " \n"; echo
		hex=$(printf %08x "$k")
		echo "expiry=$(awk -v s="$hex" "\$1 == s { print \$4 }" /proc/keys)"
	' sh "$1" "$T_CALLOUT"
}

# t_upcall_rejected DESCRIPTION: request a key that must be rejected; prints the timeout
# column of the negative key left in the session keyring, then the request's error as
# keyctl words it (e.g. "Invalid argument" for a rejection with EINVAL); fails when the
# request succeeds.
t_upcall_rejected() {
	timeout "$T_UPCALL_GUARD" keyctl session - sh -c '
		if err=$(keyctl request2 user "$1" "$2" @s 2>&1); then exit 1; fi
		exp=$(awk -v d="$1" "\$8 == \"user\" && \$9 == d { print \$4 }" /proc/keys)
		echo "$exp ${err##*: }"
	' sh "$1" "$T_CALLOUT"
}

# t_hex STRING: the bytes of STRING as hex (no NUL)
t_hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
