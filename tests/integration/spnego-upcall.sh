#!/bin/sh
# The cifs.spnego upcall of nfskeys-upcall-full against a real MIT KDC on loopback.  This
# host's kernel has no CIFS client (no cifs.spnego key type), so spnego-shaped descriptions
# travel as `user` keys routed to the helper (-T cifs.spnego) by a temporary
# /etc/request-key.d line, exactly as request-key would run it for the kernel; the helper's
# own checks (the key must be root's, the cache the user's) are what is tested.
# spnego-accept plays the CIFS server: gss_accept_sec_context() on the blob with the
# service keytab, and the session key in the payload compared with the acceptor's.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"
. "$top_srcdir/tests/harness/kdc.sh"
. "$top_srcdir/tests/harness/keyttl.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (request-key.d routing, other uids)"
command -v setpriv >/dev/null 2>&1 || skip_all "setpriv missing"
HELPER="$top_builddir/tools/upcall/nfskeys-upcall-full"
ACCEPT="$top_builddir/tests/kdc/spnego-accept"
plan 37

kdc_start NFSKEYS.TEST
HOST="srv$$.nfskeys.test"
kdc_addprinc alice 'alice-Pw-7'
kdc_addprinc "cifs/$HOST"
kdc_ktadd "$T_TMP/cifs.kt" "cifs/$HOST"

# Files the dropped helper reads must be reachable by every uid: a 0755 directory.
W=$(mktemp -d /tmp/nfskeys-spnego.XXXXXX) && chmod 755 "$W" || fail_all "temp dir"
t_on_exit "rm -rf '$W'"
mkdir "$W/cc" && chmod 1777 "$W/cc"
sed "s|^\[libdefaults\]|[libdefaults]\n\tdefault_ccache_name = FILE:$W/cc/krb5cc_%{uid}|" \
	"$KRB5_CONFIG" >"$W/krb5.conf"
chmod 644 "$W/krb5.conf"
# (30 s: not the default of 5, and long enough that the key is still there to be read)
NEG_TTL=30
printf '[Cred]\nCIFS-Negative-TTL = %s\n' $NEG_TTL >"$W/nfskeys.conf"
LOG="$W/helper.log"
# the wrapper also keeps the bounds of the timeout the key got in $W/ttl
# (tests/harness/keyttl.sh: from the key's expiry and the times before and after the helper)
cat >"$W/helper" <<EOS
#!/bin/sh
start=\$(date +%s)
KRB5_CONFIG=$W/krb5.conf KRB5CCNAME=FILE:/nonexistent/root-env-cache "$HELPER" -c "$W/nfskeys.conf" -T cifs.spnego "\$@" 2>>"$LOG"
rc=\$?
. "$top_srcdir/tests/harness/keyttl.sh"
t_key_ttl_bounds "\$1" "\$start" >"$W/ttl" 2>&1
exit \$rc
EOS
chmod 755 "$W/helper"
t_route_upcalls "$W/helper" || skip_all "cannot route request-key upcalls here"
export KRB5_CONFIG="$W/krb5.conf" KRB5_KTNAME="FILE:$T_TMP/cifs.kt"

# desc CREDUID [SEC] [EXTRA]: a description as the 6.1 kernel writes it (upcall_target=
# as later kernels add it when EXTRA says so)
desc() { printf 'ver=0x2;host=%s;ip4=127.0.0.1;sec=%s;uid=0x%x;creduid=0x%x;pid=0x%x%s' \
	"$HOST" "${2:-krb5}" "$1" "$1" $$ "${3:-}"; }
# request DESC [UID]: the payload of the key (binary to $W/payload); fails when refused
request() {
	if [ -n "${2:-}" ]; then
		setpriv --reuid="$2" --regid="$2" --clear-groups keyctl session - sh -c \
			'k=$(keyctl request2 user "$1" "$2" @s) && keyctl pipe "$k"' sh "$1" "$T_CALLOUT"
	else
		keyctl session - sh -c 'k=$(keyctl request2 user "$1" "$2" @s) && keyctl pipe "$k"' \
			sh "$1" "$T_CALLOUT"
	fi >"$W/payload" 2>"$W/request.err"
}
# refused DESC [UID]: the request fails; prints keyctl's words for the error
refused() {
	if request "$@"; then echo "instantiated"; else grep -v '^Joined' "$W/request.err" | sed 's/.*: //'; fi
}
mark() { : >"$LOG"; }

# a user's FILE cache as krb5.conf's default_ccache_name names it (uid 65534)
U=65534
kdc_kinit alice 'alice-Pw-7' -c "FILE:$W/cc/krb5cc_$U"
chown "$U" "$W/cc/krb5cc_$U"
mark
request "$(desc $U)"
check_eq "sec=krb5 for uid $U: key instantiated" 0 $?
"$ACCEPT" krb5 <"$W/payload" >"$W/accept.out" 2>&1
check_eq "the service keytab accepts the blob" 0 $?
out=$(cat "$W/accept.out")
check_contains "... as a complete krb5 context" "accept=complete" "$out"
check_contains "... for alice" "client=alice@NFSKEYS.TEST" "$out"
check_contains "the payload's session key is the acceptor's" "session_key=matches" "$out"
check_contains "cifs_spnego_msg version 2, flags 0" "version=2
flags=0" "$out"
check_contains "the ticket was for cifs/$HOST" "cifs/$HOST@NFSKEYS.TEST" "$(klist -c "FILE:$W/cc/krb5cc_$U" 2>&1)"
check_eq "the root environment's KRB5CCNAME was not used" "" "$(grep -F root-env-cache "$LOG")"
# the session key never reaches the log
key=$(od -An -v -tx1 -j16 -N16 "$W/payload" | tr -d ' \n')
check_eq "no session key bytes in the log" "" "$(tr -d ' \n' <"$LOG" | grep -F "$key")"

request "$(desc $U mskrb5 ';upcall_target=mount')"
check_eq "sec=mskrb5 with upcall_target=: instantiated" 0 $?
"$ACCEPT" mskrb5 <"$W/payload" >"$W/accept.out" 2>&1
rc=$?; check_eq "... and the blob (MS krb5 OID) accepted with the same session key" 0 $rc
[ $rc = 0 ] || diag "$(cat "$W/accept.out")"

# upcall_target=app (Linux 6.13+): from the helper's own namespaces (pid= this shell), as
# before; from a process in a mount namespace of its own with a private /tmp, only that
# /tmp's cache (carol's), never the helper's (alice's); none there: refused, said so
request "$(desc $U krb5 ';upcall_target=app')"
check_eq "upcall_target=app from the helper's own namespaces: instantiated" 0 $?
kdc_addprinc carol 'carol-Pw-7'
kdc_kinit carol 'carol-Pw-7' -c "FILE:$W/carol.cc"
chown "$U" "$W/carol.cc" && chmod 0600 "$W/carol.cc"
ctr() { # CACHE: a process in its own mount namespace, /tmp private (hiding $W), CACHE there
	# if given (read through fd 3, opened before); "up" on fd 4 when ready
	: >"$W/ctr.ready"
	unshare --mount --propagation private sh -c 'mount -t tmpfs ctr /tmp || exit 1
		if [ -n "$1" ]; then
			cat <&3 >/tmp/krb5cc_'$U' && chown '$U' /tmp/krb5cc_'$U' &&
				chmod 0600 /tmp/krb5cc_'$U' || exit 1
		fi
		exec 3<&-; echo up >&4; exec sleep 60 4>&-' sh "$1" 3<"${1:-/dev/null}" \
		4>"$W/ctr.ready" &
	CTR=$!
	t_wait_for "[ -s $W/ctr.ready ]" 10
}
desc_pid() { desc "$@" | sed "s/;pid=0x[0-9a-f]*/;pid=0x$(printf %x "$CTR")/"; }
if ctr "$W/carol.cc"; then
	request "$(desc_pid $U krb5 ';upcall_target=app')"
	rc=$?
	"$ACCEPT" krb5 <"$W/payload" >"$W/accept.out" 2>&1
	check_contains "app from another mount namespace: instantiated (rc $rc) with its cache (carol's)" \
		"client=carol@NFSKEYS.TEST" "$(cat "$W/accept.out")"
	kill $CTR
	mark
	ctr ""
	err=$(refused "$(desc_pid $U krb5 ';upcall_target=app')")
	check_eq "... a namespace without a cache: refused, the helper's (alice's) not used" \
		"Required key not available" "$err"
	check_contains "... the log names the cache looked for there" \
		"no credential cache /tmp/krb5cc_$U in the namespaces of pid $CTR" "$(cat "$LOG")"
	kill $CTR
else
	kill $CTR 2>/dev/null
	skip "app from another mount namespace: unshare --mount failed here"
	skip "app: a namespace without a cache"
	skip "app: the log names the cache"
fi

# KEYRING:persistent:<uid> (nfskeys nfs login) comes first
rm -f "$W/cc/krb5cc_$U"
printf 'alice-Pw-7\n' | setpriv --reuid=$U --regid=$U --clear-groups \
	keyctl session - kinit -c "KEYRING:persistent:$U" alice >/dev/null 2>&1
t_on_exit "setpriv --reuid=$U --regid=$U --clear-groups keyctl session - kdestroy -c KEYRING:persistent:$U >/dev/null 2>&1"
request "$(desc $U)"
check_eq "the persistent keyring cache is used when the FILE cache is gone" 0 $?
"$ACCEPT" krb5 <"$W/payload" >"$W/accept.out" 2>&1
rc=$?; check_eq "... and its blob accepted" 0 $rc
[ $rc = 0 ] || diag "$(cat "$W/accept.out" "$LOG")"
setpriv --reuid=$U --regid=$U --clear-groups keyctl session - kdestroy -c "KEYRING:persistent:$U" >/dev/null 2>&1

# a user without credentials (uid 1): a clear negative key, the log says what was tried
mark
rm -f "$W/ttl"
err=$(refused "$(desc 1)")
ttl=$(cat "$W/ttl" 2>/dev/null || echo "none: the wrapper did not run")
check_eq "uid 1 without credentials: refused" "Required key not available" "$err"
check_contains "... the log names the host and user" "no ticket for cifs/$HOST" "$(cat "$LOG")"
check_contains "... and the caches looked at" "no credential cache FILE:$W/cc/krb5cc_1" "$(cat "$LOG")"
check "the negative key times out after CIFS-Negative-TTL = $NEG_TTL s (between $(echo "$ttl" | sed "s/ / and /") s)" \
	t_key_ttl_check $NEG_TTL "$ttl"

# an expired ticket (uid 2)
kdc_kinit alice 'alice-Pw-7' -l 2s -c "FILE:$W/cc/krb5cc_2"
chown 2 "$W/cc/krb5cc_2"
sleep 3
mark
err=$(refused "$(desc 2)")
check_eq "an expired ticket: refused as expired" "Key has expired" "$err"
check_contains "... the log says whose and where" "alice@NFSKEYS.TEST in FILE:$W/cc/krb5cc_2 have expired" "$(cat "$LOG")"

# a cache owned by another user, though readable (uid 3 must not use root's file)
kdc_kinit alice 'alice-Pw-7' -c "FILE:$W/cc/krb5cc_3"
chmod 644 "$W/cc/krb5cc_3"
mark
err=$(refused "$(desc 3)")
check_eq "a cache owned by another user: refused" "Permission denied" "$err"
check_contains "... saying whose it is" "FILE:$W/cc/krb5cc_3 refused: owned by uid 0, not 3" "$(cat "$LOG")"

# forged creduid=0 by an ordinary user, while root holds valid credentials
kdc_kinit alice 'alice-Pw-7' -c "FILE:$W/cc/krb5cc_0"
request "$(desc 0)"
check_eq "(root's own request with creduid=0 works)" 0 $?
# request-key refuses (ENOENT) to run a route for a request of an ordinary uid here, so
# the helper is run on such a key directly: a key owned by that uid, as request_key(2)
# by the user would make it.
mark
k=$(keyctl session - sh -c 'k=$(keyctl add user "$1" placeholder @s) && keyctl chown "$k" "$2" &&
	keyctl setperm "$k" 0x3f3f3f3f && "$3" "$k" "$1" 2>/dev/null; echo "rc=$?"' sh "$(desc 0)" $U "$W/helper" 2>/dev/null | tail -1)
# exit 4: run outside request-key it holds no authority to reject the key either
check_eq "a key of uid $U forging creduid=0: refused (helper exit 4)" "rc=4" "$k"
check_contains "... because the key is not root's" "belongs to uid $U, not root" "$(cat "$LOG")"
check_eq "... and nothing was asked of Kerberos" "" "$(grep -e 'cifs/' -e 'instantiate' "$LOG")"

# a root mount with a keytab ([Cred] CIFS-Keytab), when root has no cache
rm -f "$W/cc/krb5cc_0"
kdc_addprinc "host/client.test"
kdc_ktadd "$T_TMP/root.kt" "host/client.test"
printf '[Cred]\nCIFS-Negative-TTL = %s\nCIFS-Keytab = %s\nCIFS-Keytab-Principal = host/client.test\n' \
	$NEG_TTL "$T_TMP/root.kt" >"$W/nfskeys.conf"
request "$(desc 0)"
check_eq "root with the configured keytab: instantiated" 0 $?
"$ACCEPT" krb5 <"$W/payload" >"$W/accept.out" 2>&1
check_eq "... accepted" 0 $?
check_contains "... as the keytab's principal" "client=host/client.test@NFSKEYS.TEST" "$(cat "$W/accept.out")"
mark
err=$(refused "$(desc 1)")
check_eq "the keytab is for root mounts only (uid 1 still refused)" "Required key not available" "$err"
printf '[Cred]\nCIFS-Negative-TTL = %s\n' $NEG_TTL >"$W/nfskeys.conf"

# the lean nfskeys-upcall (what request-key.d runs) hands cifs.spnego to
# nfskeys-upcall-spnego (directly, not through nfskeys-upcall-full)
kdc_kinit alice 'alice-Pw-7' -c "FILE:$W/cc/krb5cc_$U"
chown "$U" "$W/cc/krb5cc_$U"
sed "s|$HELPER|$top_builddir/tools/upcall/nfskeys-upcall|" "$W/helper" >"$W/helper.lean"
chmod 755 "$W/helper.lean"
cp "$W/helper.lean" "$W/helper"
request "$(desc $U)"
check_eq "through the lean nfskeys-upcall: instantiated" 0 $?
"$ACCEPT" krb5 <"$W/payload" >/dev/null 2>&1
check_eq "... and accepted" 0 $?

# malformed descriptions
mark
err=$(refused "$(desc $U)$(printf ';user=x;creduid=0x0')")
check_eq "a user name smuggling a second creduid=: refused" "Invalid argument" "$err"
check_contains "... with the reason" "field given twice" "$(cat "$LOG")"
