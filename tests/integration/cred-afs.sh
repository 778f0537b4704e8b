#!/bin/sh
# nfskeys afs login against a real MIT KDC on loopback: the rxrpc v1 token's ticket
# decrypts with the AFS service key from a keytab, its session key is rxkad-kdf of the
# ticket's session key (aes256 and aes128; des3 is covered by test-rxkad-kdf with fixed
# inputs, the KDC here refuses des3 session keys), the fields are right, and a missing
# ticket or unknown cell fail clearly.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/kdc.sh"
CHECK="$top_builddir/tests/kdc/afs-token-check"
KDF="$top_srcdir/tests/harness/rxkad-kdf.py"
plan 30

kdc_start NFSKEYS.TEST
kdc_addprinc alice 'alice-pw-1'
kdc_addprinc afs/nfskeys.test
kdc_addprinc afs
kdc_ktadd "$T_TMP/afs.kt" afs/nfskeys.test afs
kdc_kinit alice 'alice-pw-1'

# a field of the checked token; "(missing)" so that two absent values never compare equal
field() { v=$(sed -n "s/^$1=//p" "$T_TMP/fields"); echo "${v:-(missing $1)}"; }

# token_checks NAME ENCTYPE SERVER: check the token in $T_TMP/tok.hex
token_checks() {
	name=$1; want_et=$2; want_server=$3
	if "$CHECK" "$T_TMP/afs.kt" <"$T_TMP/tok.hex" >"$T_TMP/fields" 2>"$T_TMP/check.err"; then
		ok "$name: ticket decrypts with the service key from the keytab"
	else
		not_ok "$name: ticket decrypts with the service key from the keytab"
		diag "$(cat "$T_TMP/check.err")"
	fi
	check_eq "$name: kver 1, security index 2, kvno 256" "1 2 256" \
		"$(field kver) $(field security_index) $(field kvno)"
	check_eq "$name: length is 24 + ticket length" "$(( $(field ticket_length) + 24 ))" "$(field total)"
	check_eq "$name: expiry is the ticket's end time" "$(field ticket_endtime)" "$(field expiry)"
	check_eq "$name: session key enctype" "$want_et" "$(field ticket_session_enctype)"
	want_key=$(python3 "$KDF" "$(field ticket_session_enctype)" "$(field ticket_session_key)" 2>/dev/null)
	want_key=${want_key:-(kdf failed)}
	check_eq "$name: session key = rxkad-kdf(ticket session key)" "$want_key" "$(field session_key)"
	check_eq "$name: ticket for alice from $want_server" "alice@NFSKEYS.TEST $want_server" \
		"$(field ticket_client) $(field ticket_server)"
}

"$NFSKEYS" afs login --print >"$T_TMP/tok.hex" 2>"$T_TMP/err"
check_eq "login --print succeeds (default cell from the realm)" 0 $?
check_contains "header names key type and description" "# type rxrpc description afs@nfskeys.test" "$(head -1 "$T_TMP/tok.hex")"
token_checks aes256 18 afs/nfskeys.test@NFSKEYS.TEST

# aes128 session keys: the client asks for them first (default_tgs_enctypes).
sed '/^\[libdefaults\]/a\	default_tgs_enctypes = aes128-cts-hmac-sha1-96 aes256-cts-hmac-sha1-96' "$KRB5_CONFIG" >"$T_TMP/krb5-aes128.conf"
KRB5_CONFIG="$T_TMP/krb5-aes128.conf" KRB5CCNAME="FILE:$T_TMP/cc-aes128" sh -c '
	printf "alice-pw-1\n" | kinit alice >/dev/null &&
	"$0" afs login NFSKEYS.test --print' "$NFSKEYS" >"$T_TMP/tok.hex" 2>"$T_TMP/err"
check_eq "login --print with aes128 session keys, cell given in mixed case" 0 $?
check_contains "cell is lower-cased in the description" "description afs@nfskeys.test" "$(head -1 "$T_TMP/tok.hex")"
token_checks aes128 17 afs/nfskeys.test@NFSKEYS.TEST

# afs@REALM when afs/<cell>@REALM does not exist
"$NFSKEYS" afs login othercell -k NFSKEYS.TEST --print >"$T_TMP/tok.hex" 2>"$T_TMP/err"
check_eq "login falls back to afs@REALM" 0 $?
check_contains "... keyed by the cell" "description afs@othercell principal afs@NFSKEYS.TEST" "$(head -1 "$T_TMP/tok.hex")"
"$CHECK" "$T_TMP/afs.kt" <"$T_TMP/tok.hex" >"$T_TMP/fields" 2>&1
check_eq "... and the ticket is for afs@NFSKEYS.TEST" "afs@NFSKEYS.TEST" "$(field ticket_server)"

# Adding the key: this kernel may lack the rxrpc type.
if keyctl add rxrpc "afs@probe.$$" x @s >/dev/null 2>"$T_TMP/probe"; then has_rxrpc=1; else has_rxrpc=; fi
err=$("$NFSKEYS" afs login 2>&1); rc=$?
if [ -z "$has_rxrpc" ] && grep -qi 'no such device' "$T_TMP/probe"; then
	check_eq "login without the rxrpc key type fails" 1 "$rc"
	check_contains "... saying which module is missing" "kernel lacks the rxrpc key type (load the kafs / af_rxrpc module)" "$err"
else
	check_eq "login adds the token" 0 "$rc"
	check_contains "... as afs@nfskeys.test" "afs@nfskeys.test" "$(keyctl show @s)"
fi

# Errors
# (timeout(1): a hang guard, 120 s, far beyond any load; it would exit 124)
err=$(timeout 120 "$NFSKEYS" afs login no.such.cell --print 2>&1); rc=$?
check_eq "unknown cell fails (exit 1, not ended by the hang guard)" 1 "$rc"
check_contains "... naming the principal it looked for" "no ticket for afs/no.such.cell@NO.SUCH.CELL" "$err"
err=$("$NFSKEYS" afs login 'bad/cell' --print 2>&1); rc=$?
check_eq "invalid cell name fails" 1 "$rc"
err=$(KRB5CCNAME="FILE:$T_TMP/no-such-ccache" "$NFSKEYS" afs login --print 2>&1); rc=$?
check_eq "missing ticket fails" 1 "$rc"
check_contains "... saying to run kinit" "no Kerberos credentials in" "$err"
check_contains "... (kinit)" "run kinit" "$err"
"$NFSKEYS" afs login --print -x >/dev/null 2>&1
check_eq "bad option is a usage error" 2 $?
