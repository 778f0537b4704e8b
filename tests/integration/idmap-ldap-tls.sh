#!/bin/sh
# The ldap backend's StartTLS against a real slapd on loopback with a throwaway CA and
# server certificate made by the openssl CLI: with the CA the lookups work; with another
# CA, or against a server that offers no TLS, StartTLS fails with a clear error and the
# backend answers nothing (no fallback to plain LDAP).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"

command -v openssl >/dev/null 2>&1 || skip_all "openssl CLI missing"
t_slapd_start || skip_all "slapd cannot run here (slapd, ldap-utils, back_mdb needed)"
S=$SLAPD_SUFFIX
{ t_ldif_ou people; t_ldif_posix_user tlsuser 31001 31001; } >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" || skip_all "ldapadd failed"
plan 9

# a CA, a server certificate for 127.0.0.1 signed by it, and an unrelated second CA
pki="$T_TMP/pki"
mkdir -p "$pki"
mkca() { # NAME
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj "/CN=nfskeys test $1" -addext "basicConstraints=critical,CA:TRUE" \
		-addext "keyUsage=critical,keyCertSign,cRLSign" \
		-keyout "$pki/$1.key" -out "$pki/$1.pem" >/dev/null 2>&1
}
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$pki/ext"
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

conf() { # FILE START_TLS CA_FILE
	cat >"$1" <<CONF
[General]
Domain = tls.test
[Translation]
Method = ldap
[LDAP]
URI = $SLAPD_URI
Base = $S
User-Base = ou=people,$S
Timeout = 2
Search-Timeout = 2
StartTLS = $2
CA-File = $3
CONF
}
conf "$T_TMP/good.conf" yes "$pki/ca.pem"
conf "$T_TMP/untrusted.conf" yes "$pki/otherca.pem"
conf "$T_TMP/plain.conf" no ""
nk() { conf=$1; shift; LDAPCONF=/dev/null "$NFSKEYS" -c "$conf" idmap "$@" 2>&1; }
# A lookup's whole output, stderr included, and its exit status: any extra message fails
# the check, a LeakSanitizer report too (libldap's process-global TLS state was reported
# lost until the ldap plugin kept libldap mapped with RTLD_NODELETE).
answer="tlsuser@tls.test -> 31001 (ldap, ttl 600s)"
answers() { # CONF: the lookup's output and exit status
	out=$(nk "$1" lookup tlsuser@tls.test); rc=$?
	printf '%s (exit %s)' "$out" $rc
}

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

# 2. the server offers StartTLS
t_slapd_enable_tls "$pki/server.pem" "$pki/server.key" ||
	{ for i in 1 2 3 4 5; do skip "slapd would not start with TLS"; done; exit 0; }
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
