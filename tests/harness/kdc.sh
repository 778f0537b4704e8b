# A throwaway MIT Kerberos realm for tests: a KDC on a free loopback port with its own
# database, configuration and credential cache under $T_TMP, stopped at exit.
# Source it after lib.sh (it uses T_TMP, t_on_exit, t_free_port, t_wait_for, skip_all):
#     . "$top_srcdir/tests/harness/lib.sh"
#     . "$top_srcdir/tests/harness/kdc.sh"
#     kdc_start                         # or: kdc_start EXAMPLE.TEST
#
# Functions:
#   kdc_start [REALM]           create the realm (default NFSKEYS.TEST) and start krb5kdc;
#                               exports KRB5_CONFIG, KRB5_KDC_PROFILE, KRB5CCNAME (a FILE
#                               cache in $KDC_DIR), KRB5RCACHEDIR; sets KDC_REALM,
#                               KDC_PORT, KDC_DIR.  skip_all when the KDC tools are missing.
#   kdc_addprinc PRINC [PW]     add a principal, with password PW or a random key.
#   kdc_ktadd KEYTAB PRINC...   write the principals' current keys to KEYTAB
#                               (-norandkey: passwords keep working).
#   kdc_kinit PRINC PW [ARGS]   kinit PRINC into $KRB5CCNAME; the password goes through
#                               standard input, never argv.  Extra kinit ARGS allowed.
#   kdc_kadmin QUERY            run one kadmin.local query against the realm.
#   kdc_stop                    stop the KDC (registered with t_on_exit by kdc_start).
#
# Settings read by kdc_start (set them before calling it):
#   KDC_TGS_ENCTYPES            default_tgs_enctypes for clients (decides the session key
#                               enctype of service tickets), e.g. "aes128-cts-hmac-sha1-96"
#   KDC_MAX_LIFE / KDC_MAX_RENEW  ticket and renewable lifetimes (default 10h / 7d)
#   KDC_SUPPORTED_ENCTYPES      key enctypes made for new principals
# Clients get no DNS, one retry and request_timeout = 5 (seconds, MIT >= 1.20), so a
# test against a dead or unreachable KDC fails within a bounded time.

kdc_start() {
	for t in krb5kdc kdb5_util kadmin.local kinit; do
		command -v "$t" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin"
		command -v "$t" >/dev/null 2>&1 || skip_all "$t not installed (krb5-kdc, krb5-admin-server, krb5-user)"
	done
	KDC_REALM=${1:-NFSKEYS.TEST}
	KDC_DIR="$T_TMP/kdc"
	KDC_PORT=$(t_free_port)
	mkdir -p "$KDC_DIR"
	cat >"$KDC_DIR/kdc.conf" <<EOC
[kdcdefaults]
	kdc_listen = 127.0.0.1:$KDC_PORT
	kdc_tcp_listen = 127.0.0.1:$KDC_PORT
[realms]
	$KDC_REALM = {
		database_name = $KDC_DIR/principal
		key_stash_file = $KDC_DIR/stash
		acl_file = $KDC_DIR/kadm5.acl
		max_life = ${KDC_MAX_LIFE:-10h}
		max_renewable_life = ${KDC_MAX_RENEW:-7d}
		supported_enctypes = ${KDC_SUPPORTED_ENCTYPES:-aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal}
	}
[logging]
	kdc = FILE:$KDC_DIR/kdc.log
EOC
	cat >"$KDC_DIR/krb5.conf" <<EOC
[libdefaults]
	default_realm = $KDC_REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	ignore_acceptor_hostname = true
	max_retries = 1
	request_timeout = 5
${KDC_TGS_ENCTYPES:+	default_tgs_enctypes = $KDC_TGS_ENCTYPES}
[realms]
	$KDC_REALM = {
		kdc = 127.0.0.1:$KDC_PORT
	}
EOC
	: >"$KDC_DIR/kadm5.acl"
	export KRB5_CONFIG="$KDC_DIR/krb5.conf" KRB5_KDC_PROFILE="$KDC_DIR/kdc.conf"
	export KRB5CCNAME="FILE:$KDC_DIR/ccache" KRB5RCACHEDIR="$KDC_DIR"
	if ! kdb5_util create -s -r "$KDC_REALM" -P "master-$$-$KDC_PORT" >"$KDC_DIR/create.log" 2>&1; then
		cat "$KDC_DIR/create.log" >&2
		skip_all "kdb5_util create failed"
	fi
	krb5kdc -n -r "$KDC_REALM" >"$KDC_DIR/krb5kdc.out" 2>&1 &
	KDC_PID=$!
	t_on_exit kdc_stop
	if ! t_wait_for "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $KDC_PORT), 1).close()'" 10; then
		cat "$KDC_DIR/krb5kdc.out" "$KDC_DIR/kdc.log" >&2 2>/dev/null
		skip_all "krb5kdc did not start"
	fi
}

# The query goes through standard input, so passwords in it never reach argv.
kdc_kadmin() {
	printf '%s\n' "$1" | kadmin.local -r "$KDC_REALM" >"$KDC_DIR/kadmin.out" 2>&1 &&
		! grep -qiE 'error|fail|not found|unknown' "$KDC_DIR/kadmin.out" ||
		{ cat "$KDC_DIR/kadmin.out" >&2; return 1; }
}

kdc_addprinc() {
	if [ $# -ge 2 ]; then
		kdc_kadmin "addprinc -pw $2 $1"
	else
		kdc_kadmin "addprinc -randkey $1"
	fi
}

kdc_ktadd() {
	kt=$1; shift
	for p in "$@"; do kdc_kadmin "ktadd -norandkey -k $kt $p" || return 1; done
}

kdc_kinit() {
	p=$1; pw=$2; shift 2
	printf '%s\n' "$pw" | kinit "$@" "$p" >"$KDC_DIR/kinit.out" 2>&1 ||
		{ cat "$KDC_DIR/kinit.out" >&2; return 1; }
}

kdc_stop() {
	if [ -n "${KDC_PID:-}" ]; then
		kill "$KDC_PID" 2>/dev/null
		wait "$KDC_PID" 2>/dev/null
		KDC_PID=
	fi
}
