#!/bin/sh
# nfskeys status: one view of a user's CIFS keys, AFS tokens and NFS Kerberos cache (a
# real MIT KDC on loopback, the real session keyring), with expiry, the warnings for what
# runs out soon or has run out, the key quota as the kernel counts it, --json, --user.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/kdc.sh"
plan 28

kdc_start NFSKEYS.TEST
kdc_kadmin "addprinc -randkey -maxlife \"30 minutes\" -maxrenewlife \"2 hours\" shortlived"
kdc_ktadd "$T_TMP/short.kt" shortlived
kdc_kadmin "addprinc -randkey -maxlife \"4 seconds\" -maxrenewlife 0 blink"
kdc_ktadd "$T_TMP/blink.kt" blink
CC="KEYRING:persistent:$(id -u):nfskeys-status-$$"
t_on_exit "kdestroy -c $CC"

out=$("$NFSKEYS" status --help); check_contains "--help shows the usage" "--warn MINUTES" "$out"
err=$("$NFSKEYS" status --warn soon 2>&1); rc=$?
check_eq "a bad --warn is a usage error" 2 "$rc"
check_contains "... that quotes the value" "'soon' is not a number of minutes" "$err"
err=$("$NFSKEYS" status --user no-such-user-$$ 2>&1); rc=$?
check_eq "an unknown --user fails" 1 "$rc"
check_contains "... naming the user" "no user 'no-such-user-$$'" "$err"

# nothing held yet
out=$("$NFSKEYS" status -c "$CC" 2>&1); rc=$?
check_eq "nothing held: exit 0" 0 "$rc"
check_contains "... and says so" "No CIFS keys, AFS tokens or NFS Kerberos credentials" "$out"

# a CIFS key and a ticket that expires within the hour but can be renewed
printf 'cifs-Secret-9\n' | "$NFSKEYS" cifs add -u bob 127.0.0.1 >/dev/null 2>&1
check_eq "a CIFS key is added" 0 $?
# the KDC (this host's clock) issues it between t_before and t_after, whole seconds
t_before=$(date +%s)
"$NFSKEYS" nfs login -k "$T_TMP/short.kt" -c "$CC" >/dev/null 2>&1
check_eq "a 30-minute ticket is obtained" 0 $?
t_after=$(date +%s)
out=$("$NFSKEYS" status -c "$CC" 2>&1); rc=$?
check_eq "status: exit 0 while nothing has expired" 0 "$rc"
check_contains "... shows the CIFS key" "cifs:a:127.0.0.1" "$out"
check_contains "... shows the ticket's principal" "principal shortlived@NFSKEYS.TEST" "$out"
check_contains "... warns that it expires soon and says how to renew" \
	"warning: expires soon; renewable: nfskeys nfs renew" "$out"
case "$out" in *cifs-Secret-9*) not_ok "... never shows the password" ;; *) ok "... never shows the password" ;; esac
out=$("$NFSKEYS" status -c "$CC" --warn 10 2>&1)
case "$out" in *warning:*) not_ok "--warn 10: no warning for a ticket with 30 minutes left"; diag "$out" ;;
*) ok "--warn 10: no warning for a ticket with 30 minutes left" ;; esac

# the JSON view says the same, and the quota is the kernel's own count
"$NFSKEYS" status -c "$CC" --json >"$T_TMP/status.json" 2>"$T_TMP/err"
check_eq "--json exits 0" 0 $?
json() { python3 -c "import json,sys; d=json.load(open('$T_TMP/status.json')); print($1)" 2>&1; }
check_eq "--json is one object with both credentials" "cifs nfs" \
	"$(json "' '.join(sorted(c['fs'] for c in d['credentials']))")"
check_eq "... the ticket's expiry is 30 minutes after it was issued" "yes" \
	"$(json "'yes' if $((t_before + 1800)) <= [c for c in d['credentials'] if c['fs']=='nfs'][0]['expiry'] <= $((t_after + 1800)) else 'no'")"
check_eq "... and carries the warning" "1" "$(json "d['warnings']")"
# (the number of keys in use moves with whatever else root runs; the quota does not)
kq=$(awk -v u="$(id -u):" '$1 == u { split($4, a, "/"); print a[2] }' /proc/key-users)
check_eq "... the key quota is /proc/key-users'" "$kq" "$(json "d['quota']['max_keys']")"

# a ticket that has run out and cannot be renewed.  In a KEYRING cache the kernel drops
# it when it expires (the key's timeout is the ticket's end); a FILE cache keeps it.
"$NFSKEYS" nfs logout -c "$CC" >/dev/null 2>&1
FCC="FILE:$T_TMP/ccache.blink"
"$NFSKEYS" nfs login -k "$T_TMP/blink.kt" -c "$FCC" >/dev/null 2>&1
check_eq "a 4-second ticket is obtained" 0 $?
sleep 5
out=$("$NFSKEYS" status -c "$FCC" 2>&1); rc=$?
check_eq "an expired ticket: exit 1" 1 "$rc"
check_contains "... marked expired" "(expired)" "$out"
check_contains "... with the fix" "warning: expired: nfskeys nfs login" "$out"

# another user's view, from a child that became that user: root's keys are not in it
nobody=$(getent passwd 65534 | cut -d: -f1)
if [ -z "$nobody" ]; then
	skip "--user: no user with uid 65534"
	skip "--user: no user with uid 65534"
else
	# (the test's krb5.conf is in a directory that user cannot read)
	out=$(env -u KRB5_CONFIG -u KRB5CCNAME "$NFSKEYS" status --user "$nobody" --json 2>&1); rc=$?
	check_eq "--user $nobody: exit 0" 0 "$rc"
	check_contains "... runs as that user, without root's CIFS key" '"uid":65534,"credentials":[]' "$out"
fi
t_ou_load
err=$(setpriv --reuid=65534 --regid=65534 --clear-groups $T_OU_ENV "$(t_ou nfskeys)" status --user root 2>&1); rc=$?
check_eq "a user asking for root's credentials is refused" 1 "$rc"
check_contains "... saying only root may" "only root may look at another user's credentials" "$err"
