#!/bin/sh
# TLS for both LDAP users, the idmap ldap backend and nfskeys-attrd's fleet sync, against a
# real slapd on loopback with a throwaway CA and a server certificate for 127.0.0.1 and
# localhost made by the openssl CLI in the test's temp dir.  With the right CA lookups and
# syncs work over StartTLS and ldaps://; with another CA, or against a server that offers
# no TLS, they fail with a clear error and never fall back to plain LDAP (the idmap chain
# goes on to its next backend, attrd keeps its last good copy, neither daemon falls over);
# a bind password over plain ldap:// is refused unless Allow-Cleartext-Bind says so.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/attrd.sh"

command -v openssl >/dev/null 2>&1 || skip_all "openssl CLI missing"
# no ldap.conf of this machine (a TLS_REQCERT or TLS_CACERT there) in what is tested
LDAPCONF=/dev/null
export LDAPCONF
t_slapd_start || skip_all "slapd cannot run here (slapd, ldap-utils, back_mdb needed)"
S=$SLAPD_SUFFIX
# attrd's schema next to the standard ones
t_slapd_stop
sed -i "/inetorgperson.schema/a include $top_srcdir/data/nfskeys-attr.schema" "$SLAPD_DIR/slapd.conf"
t_slapd_restart || fail_all "slapd rejects the shipped data/nfskeys-attr.schema"
{
	t_ldif_ou people
	t_ldif_posix_user tlsuser 31001 31001
	t_ldif_ou nfskeys
	printf 'dn: cn=home,ou=nfskeys,%s\nobjectClass: nfskeysDirectoryPolicy\ncn: home\nnfskeysDomain: nfs://fleet\nnfskeysPath: /export/home\nnfskeysAttribute: actimeo=60\n\n' "$S"
} >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" || skip_all "ldapadd failed"
plan 33

# a CA, a server certificate for 127.0.0.1 and localhost signed by it, and an unrelated
# second CA.  (URIs name 127.0.0.1: for "localhost" libldap checks the certificate against
# the reverse-resolved name of the address it connected to, this machine's host name.)
pki="$T_TMP/pki"
mkdir -p "$pki"
mkca() { # NAME
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj "/CN=nfskeys test $1" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" \
		-keyout "$pki/$1.key" -out "$pki/$1.pem" >/dev/null 2>&1
}
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$pki/ext"
if mkca ca && mkca otherca &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$pki/server.key" -out "$pki/server.csr" >/dev/null 2>&1 &&
	openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" \
		-CAcreateserial -days 1 -extfile "$pki/ext" -out "$pki/server.pem" >/dev/null 2>&1; then
	ok "throwaway CA and server certificate made with openssl"
else
	not_ok "openssl could not make the test certificates"
	exit 0
fi

# idmap configuration: FILE URI START_TLS CA_FILE [EXTRA-LINES...] ([LDAP] keys)
conf() {
	f=$1 uri=$2 st=$3 ca=$4
	shift 4
	{
		printf '[General]\nDomain = tls.test\n[Translation]\nMethod = ldap\n'
		printf '[LDAP]\nURI = %s\nBase = %s\nUser-Base = ou=people,%s\n' "$uri" "$S" "$S"
		printf 'Timeout = 2\nSearch-Timeout = 2\nStartTLS = %s\nCA-File = %s\n' "$st" "$ca"
		[ $# -gt 0 ] && printf '%s\n' "$@"
	} >"$f"
}
BIND="Bind-DN = $SLAPD_ROOTDN
Bind-Password-File = $SLAPD_ROOTPW_FILE"
conf "$T_TMP/good.conf" "$SLAPD_URI" yes "$pki/ca.pem"
conf "$T_TMP/untrusted.conf" "$SLAPD_URI" yes "$pki/otherca.pem"
conf "$T_TMP/plain.conf" "$SLAPD_URI" no ""
conf "$T_TMP/plain-bind.conf" "$SLAPD_URI" no "" "$BIND"
conf "$T_TMP/plain-bind-optout.conf" "$SLAPD_URI" no "" "$BIND" "Allow-Cleartext-Bind = yes"
nk() { conf=$1; shift; "$NFSKEYS" -c "$conf" idmap "$@" 2>&1; }
# A lookup's whole output, stderr included, and its exit status: any extra message fails
# the check, a LeakSanitizer report too (libldap's process-global TLS state was reported
# lost until the ldap plugin kept libldap mapped with RTLD_NODELETE).
answer="tlsuser@tls.test -> 31001 (ldap, ttl 600s)"
answers() { # CONF: the lookup's output and exit status
	out=$(nk "$1" lookup tlsuser@tls.test); rc=$?
	printf '%s (exit %s)' "$out" $rc
}

# attrd configuration: FILE URI [EXTRA-LINES...] ([Attrd] keys); bind as the rootdn
ATTRD_CONF="$T_TMP/attrd.conf"
aconf() {
	f=$1 uri=$2
	shift 2
	{
		printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n' "$T_TMP/attr.db" "$T_TMP/attrd.sock"
		printf 'LDAP-URI = %s\nLDAP-Base = ou=nfskeys,%s\n' "$uri" "$S"
		printf 'LDAP-Bind-DN = %s\nLDAP-Bind-Password-File = %s\n' "$SLAPD_ROOTDN" "$SLAPD_ROOTPW_FILE"
		printf 'Sync-Interval = 1\nLDAP-Timeout = 2\n'
		[ $# -gt 0 ] && printf '%s\n' "$@"
	} >"$f"
}
# KEY's value and origin in effect at TARGET: "60 ldap"
eff() { "$NFSATTR" -c "$ATTRD_CONF" show "$1" |
	awk -v k="$2" '$1 == k { print $2, ($NF == "[ldap]" ? "ldap" : "local"); f = 1 }
	END { if (!f) print "unset" }'; }
ldap_set_actimeo() { # VALUE, over plain LDAP as the rootdn (the test's own client)
	printf 'dn: cn=home,ou=nfskeys,%s\nchangetype: modify\nreplace: nfskeysAttribute\nnfskeysAttribute: actimeo=%s\n' "$S" "$1" |
		ldapmodify -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -y "$SLAPD_ROOTPW_FILE" >/dev/null
}
# attrd's log from line $1 on
log_since() { tail -n "+$1" "$ATTRD_LOG"; }
log_lines() { echo $(($(wc -l <"$ATTRD_LOG") + 1)); }

# 1. server without TLS, StartTLS required: a clear error, no answer
out=$(nk "$T_TMP/good.conf" lookup tlsuser@tls.test); rc=$?
check_eq "no TLS on the server: the lookup fails" 1 "$rc"
out=$(nk "$T_TMP/good.conf" explain tlsuser@tls.test)
case "$out" in
*"StartTLS: "*certificate*) not_ok "no TLS on the server: blamed on a certificate: $out" ;;
*"StartTLS: "*) ok "no TLS on the server: explain names StartTLS and the server's refusal" ;;
*) not_ok "no TLS on the server: explain names StartTLS: $out" ;;
esac
echo "$out" | grep FAILED | sed 's/^/# /'
check_eq "plain LDAP (StartTLS = no) still answers" "$answer (exit 0)" \
	"$(answers "$T_TMP/plain.conf")"

# a bind password over plain ldap:// is refused before anything is sent, unless the admin
# opts out: the same configuration with Allow-Cleartext-Bind = yes answers
out=$(nk "$T_TMP/plain-bind.conf" lookup tlsuser@tls.test); rc=$?
case "$rc $out" in
*31001*) not_ok "idmap: bind password over plain ldap://: refused (it answered: $out)" ;;
"1 "*) ok "idmap: bind password over plain ldap://: refused, no answer" ;;
*) not_ok "idmap: bind password over plain ldap://: refused (exit $rc): $out" ;;
esac
check_contains "... with an error naming the keys and the opt-out" \
	"[LDAP] Bind-DN with a password over $SLAPD_URI would send the password in clear: use an ldaps:// URI or StartTLS = yes (or set Allow-Cleartext-Bind = yes to accept that)" \
	"$out"
check_eq "... and with Allow-Cleartext-Bind = yes it binds and answers" "$answer (exit 0)" \
	"$(answers "$T_TMP/plain-bind-optout.conf")"
# attrd: the same refusal stops the start (exit status 3, the configuration's)
aconf "$T_TMP/attrd-plain.conf" "$SLAPD_URI"
: >"$T_TMP/attrd-plain.log"
$T_DAEMON_WRAPPER "$ATTRD" -f -c "$T_TMP/attrd-plain.conf" \
	>"$T_TMP/attrd-plain.log" 2>&1 &
apid=$!
t_on_exit "kill -9 $apid"
if t_wait_for "! kill -0 $apid" 10; then
	wait $apid
	rc=$?
else # it runs: stop it, the check fails
	kill $apid
	wait $apid
	rc="still running (t_wait_for's hang guard)"
fi
check_eq "attrd: bind password over plain ldap://: refuses to start (exit 3)" 3 "$rc"
check_contains "... with an error naming the keys and the opt-out" \
	"[Attrd] LDAP-Bind-DN with a password over $SLAPD_URI would send the password in clear: use an ldaps:// URI or LDAP-StartTLS = yes (or set LDAP-Allow-Cleartext-Bind = yes to accept that)" \
	"$(cat "$T_TMP/attrd-plain.log")"

# 2. the server offers StartTLS, and ldaps:// on a second port
t_slapd_enable_tls "$pki/server.pem" "$pki/server.key" ||
	{ sed 's/^/# /' "$SLAPD_DIR/slapd.log" | tail -5
	  fail_all "slapd would not start with TLS (StartTLS and ldaps://)"; }
check_eq "StartTLS with the CA configured answers" "$answer (exit 0)" \
	"$(answers "$T_TMP/good.conf")"
out=$(nk "$T_TMP/untrusted.conf" lookup tlsuser@tls.test); rc=$?
check_eq "untrusted CA: the lookup fails (no fallback to plain LDAP)" 1 "$rc"
case "$out" in *31001*) not_ok "untrusted CA: no answer: $out" ;; *) ok "untrusted CA: no answer" ;; esac
out=$(nk "$T_TMP/untrusted.conf" explain tlsuser@tls.test)
check_contains "untrusted CA: explain names StartTLS" "StartTLS" "$out"
case "$out" in
*[Cc]ertificate* | *verif* | *[Tt]rust* | *issuer*) ok "untrusted CA: the error is about the certificate" ;;
*) not_ok "untrusted CA: the error is about the certificate: $out" ;;
esac

# idmap over ldaps:// and StartTLS, binding with the password (no opt-out needed)
L=$SLAPD_LDAPS_URI
conf "$T_TMP/ldaps.conf" "$L" no "$pki/ca.pem" "$BIND"
conf "$T_TMP/ldaps-untrusted.conf" "$L" no "$pki/otherca.pem" "$BIND"
conf "$T_TMP/starttls-bind.conf" "$SLAPD_URI" yes "$pki/ca.pem" "$BIND"
check_eq "idmap: ldaps:// with the CA, bind password: answers" "$answer (exit 0)" \
	"$(answers "$T_TMP/ldaps.conf")"
check_eq "idmap: StartTLS with the CA, bind password: answers" "$answer (exit 0)" \
	"$(answers "$T_TMP/starttls-bind.conf")"
out=$(nk "$T_TMP/ldaps-untrusted.conf" lookup tlsuser@tls.test); rc=$?
case "$rc $out" in
*31001*) not_ok "idmap: ldaps:// with another CA: refused (it answered: $out)" ;;
"1 "*) ok "idmap: ldaps:// with another CA: refused, no answer" ;;
*) not_ok "idmap: ldaps:// with another CA: refused (exit $rc): $out" ;;
esac
out=$(nk "$T_TMP/ldaps-untrusted.conf" explain tlsuser@tls.test)
check_contains "... explain says the certificate was refused and names the CA file" \
	"$L: connect: TLS handshake failed: the server certificate is not trusted (signed by [LDAP] CA-File $pki/otherca.pem?)" \
	"$out"

# nfskeys-idmapd with another CA: the ldap backend is down with the reason logged, the
# chain goes on to the static backend, the daemon keeps answering
t_idmapd_conf "[Translation]" "Method = ldap,static" "[LDAP]" "URI = $L" "Base = $S" \
	"User-Base = ou=people,$S" "Timeout = 2" "CA-File = $pki/otherca.pem" "$BIND"
t_idmapd_start || fail_all "nfskeys-idmapd did not start"
idl() { "$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid "$1" 2>&1; }
out=$(idl tlsuser@example.test)
case "$out" in
*31001*) not_ok "idmapd, another CA: no answer from LDAP ($out)" ;;
*) ok "idmapd, another CA: no answer from LDAP" ;;
esac
check_contains "... the chain goes on: a static name is answered" "2001" "$(idl alice@example.test)"
check "... the daemon is alive and answers a ping" \
	sh -c "kill -0 $IDMAPD_PID && '$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping"
check_contains "... and its log names the refused certificate" \
	"$L: connect: TLS handshake failed: the server certificate is not trusted" \
	"$(cat "$T_TMP/idmapd.log")"
t_idmapd_stop
check_eq "... and it stops cleanly (under ASan: no leaks)" 0 "$?"

# 3. nfskeys-attrd's fleet sync: StartTLS, then ldaps://, then another CA
aconf "$ATTRD_CONF" "$SLAPD_URI" "LDAP-StartTLS = yes" "LDAP-CA-File = $pki/ca.pem"
t_attrd_start -v || fail_all "nfskeys-attrd did not start"
t_wait_for "[ \"\$(eff nfs://fleet/export/home actimeo)\" = '60 ldap' ]" 15
check_eq "attrd: StartTLS with the CA, bind password: synced" "60 ldap" \
	"$(eff nfs://fleet/export/home actimeo)"
reload() { # the configuration is written; SIGHUP and wait for the verdict after line $1
	kill -HUP "$ATTRD_PID"
	t_wait_for "log_since $1 | grep -q -e 'reloaded: ' -e 'reload failed'" 10
}
ldap_set_actimeo 61
mark=$(log_lines)
aconf "$ATTRD_CONF" "$L" "LDAP-CA-File = $pki/ca.pem"
reload "$mark"
t_wait_for "[ \"\$(eff nfs://fleet/export/home actimeo)\" = '61 ldap' ]" 15
check_eq "attrd: ldaps:// with the CA: a change arrives" "61 ldap" \
	"$(eff nfs://fleet/export/home actimeo)"
mark=$(log_lines)
aconf "$ATTRD_CONF" "$L" "LDAP-CA-File = $pki/otherca.pem"
reload "$mark"
t_wait_for "log_since $mark | grep -q 'LDAP sync failed'" 10
ldap_set_actimeo 62 # after a sync with the new settings failed: none with the old runs now
check_contains "attrd: ldaps:// with another CA: the sync fails naming the certificate and the CA file" \
	"LDAP sync failed ($L: connect: TLS handshake failed: the server certificate is not trusted (signed by [Attrd] LDAP-CA-File $pki/otherca.pem?)" \
	"$(log_since "$mark")"
sleep 2 # two more sync periods: the change (62) must not arrive
check_eq "... the last good copy stays (the change made since does not arrive)" "61 ldap" \
	"$(eff nfs://fleet/export/home actimeo)"
check "... the daemon is alive and answers" t_attrd_alive
mark=$(log_lines)
aconf "$ATTRD_CONF" "$SLAPD_URI"
reload "$mark"
check_contains "attrd: a reload to a bind password over plain ldap:// is refused, naming why" \
	"reload failed, keeping the running configuration: [Attrd] LDAP-Bind-DN with a password over $SLAPD_URI would send the password in clear" \
	"$(log_since "$mark")"
log_since "$mark" | grep -q 'reload failed' || tail -20 "$ATTRD_LOG" | sed 's/^/# /'
aconf "$ATTRD_CONF" "$SLAPD_URI" "LDAP-StartTLS = yes" "LDAP-CA-File = $pki/ca.pem"
mark=$(log_lines)
reload "$mark"
t_wait_for "[ \"\$(eff nfs://fleet/export/home actimeo)\" = '62 ldap' ]" 15
check_eq "attrd: back to the right CA (StartTLS): the change arrives" "62 ldap" \
	"$(eff nfs://fleet/export/home actimeo)"
t_attrd_stop
check_eq "attrd stops cleanly (under ASan: no leaks)" 0 "$?"

# 4. the certificate must name the URI's host: one from the right CA for another name only
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=ldap.invalid" \
	-keyout "$pki/other.key" -out "$pki/other.csr" >/dev/null 2>&1
printf 'subjectAltName=DNS:ldap.invalid\nextendedKeyUsage=serverAuth\n' >"$pki/other.ext"
openssl x509 -req -in "$pki/other.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial \
	-days 1 -extfile "$pki/other.ext" -out "$pki/other.pem" >/dev/null 2>&1 ||
	fail_all "openssl could not make the second server certificate"
t_slapd_enable_tls "$pki/other.pem" "$pki/other.key" || fail_all "slapd would not restart with TLS"
conf "$T_TMP/ldaps-name.conf" "$SLAPD_LDAPS_URI" no "$pki/ca.pem" "$BIND"
out=$(nk "$T_TMP/ldaps-name.conf" lookup tlsuser@tls.test); rc=$?
case "$rc $out" in
*31001*) not_ok "idmap: ldaps:// to a server whose certificate names another host: refused (it answered: $out)" ;;
"1 "*) ok "idmap: ldaps:// to a server whose certificate names another host: refused, no answer" ;;
*) not_ok "idmap: ldaps:// to a server whose certificate names another host: refused (exit $rc): $out" ;;
esac
check_contains "... explain says the TLS handshake failed" \
	"$SLAPD_LDAPS_URI: connect: TLS handshake failed" "$(nk "$T_TMP/ldaps-name.conf" explain tlsuser@tls.test)"
