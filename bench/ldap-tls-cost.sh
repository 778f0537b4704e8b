#!/bin/sh
# What TLS costs an LDAP user: one `nfskeys idmap lookup` (a process, a fresh connection
# and a simple bind as the rootdn) over plain ldap://, StartTLS and ldaps://, against a
# throwaway slapd on loopback with an openssl-made CA (P-256).  Instructions counted by
# callgrind (steady on a shared machine) and, with hyperfine installed, wall time
# (LDAP_TLS_BENCH_RUNS runs each, default 20).
: "${top_srcdir:?}" "${top_builddir:?}"
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"
LDAPCONF=/dev/null
NFSKEYS_PLUGIN_DIR="$top_builddir/plugins/.libs"
export LDAPCONF NFSKEYS_PLUGIN_DIR
t_slapd_start >/dev/null || { echo "slapd cannot run here"; exit 0; }
{ t_ldif_ou people; t_ldif_posix_user tlsuser 31001 31001; } >"$T_TMP/d.ldif"
t_slapd_load "$T_TMP/d.ldif" || exit 1
pki=$T_TMP/pki
mkdir -p "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
	-subj "/CN=bench CA" -addext "basicConstraints=critical,CA:TRUE" \
	-addext "keyUsage=critical,keyCertSign,cRLSign" \
	-keyout "$pki/ca.key" -out "$pki/ca.pem" >/dev/null 2>&1 || exit 1
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$pki/ext"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
	-keyout "$pki/s.key" -out "$pki/s.csr" >/dev/null 2>&1 &&
	openssl x509 -req -in "$pki/s.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" \
		-CAcreateserial -days 1 -extfile "$pki/ext" -out "$pki/s.pem" >/dev/null 2>&1 || exit 1
t_slapd_enable_tls "$pki/s.pem" "$pki/s.key" || exit 1
mk() { # NAME URI STARTTLS ALLOW-CLEARTEXT
	printf '[General]\nDomain = tls.test\n[Translation]\nMethod = ldap\n[LDAP]\nURI = %s\nBase = %s\nUser-Base = ou=people,%s\nBind-DN = %s\nBind-Password-File = %s\nStartTLS = %s\nCA-File = %s\nAllow-Cleartext-Bind = %s\n' \
		"$2" "$SLAPD_SUFFIX" "$SLAPD_SUFFIX" "$SLAPD_ROOTDN" "$SLAPD_ROOTPW_FILE" "$3" \
		"$pki/ca.pem" "$4" >"$T_TMP/$1.conf"
}
mk plain "$SLAPD_URI" no yes
mk starttls "$SLAPD_URI" yes no
mk ldaps "$SLAPD_LDAPS_URI" no no
lookup() { "$NFSKEYS" -c "$T_TMP/$1.conf" idmap lookup tlsuser@tls.test; }
for c in plain starttls ldaps; do
	out=$(lookup $c 2>&1) || { echo "$c: lookup failed: $out"; exit 1; }
done
if command -v valgrind >/dev/null 2>&1; then
	for c in plain starttls ldaps; do
		printf '%-9s instructions: ' "$c"
		"$top_builddir/libtool" --mode=execute valgrind --tool=callgrind \
			--callgrind-out-file=/dev/null "$NFSKEYS" -c "$T_TMP/$c.conf" idmap lookup \
			tlsuser@tls.test 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	done
fi
if command -v hyperfine >/dev/null 2>&1; then
	hyperfine -N -w 3 -r "${LDAP_TLS_BENCH_RUNS:-20}" \
		-n plain "$NFSKEYS -c $T_TMP/plain.conf idmap lookup tlsuser@tls.test" \
		-n starttls "$NFSKEYS -c $T_TMP/starttls.conf idmap lookup tlsuser@tls.test" \
		-n ldaps "$NFSKEYS -c $T_TMP/ldaps.conf idmap lookup tlsuser@tls.test"
fi
TAP_PLANNED=0 # not a test: no TAP plan at exit
