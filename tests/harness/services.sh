# Real services for integration tests: a throwaway MIT Kerberos KDC and an OpenLDAP
# slapd on free loopback ports in the test's temp dir, and any daemon in the background;
# all stopped when the test exits.  Source it after lib.sh:
#     . "$top_srcdir/tests/harness/lib.sh"; . "$top_srcdir/tests/harness/services.sh"
# Each t_*_start returns non-zero (with the reason in $T_SVC_ERR) when the service cannot
# run here: the caller then skips with that reason, never passes silently.

T_SVC_ERR=

t_have() { # every named program is installed
	for p in "$@"; do
		command -v "$p" >/dev/null 2>&1 || { T_SVC_ERR="$p not installed"; return 1; }
	done
}

# Is something accepting TCP connections on 127.0.0.1:$1?
t_port_open() {
	python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.5)' "$1" 2>/dev/null
}

# t_daemon_start NAME COMMAND...: run COMMAND in the background (it must stay in the
# foreground), output in $T_TMP/NAME.log; sets T_DAEMON_PID; killed at exit (TERM, then
# KILL after a second).  Under make check-valgrind, prefix COMMAND with $T_VALGRIND.
t_daemon_start() {
	_n=$1; shift
	"$@" >"$T_TMP/$_n.log" 2>&1 &
	T_DAEMON_PID=$!
	t_on_exit "t_daemon_stop $T_DAEMON_PID"
}

# t_daemon_stop PID: TERM, wait up to a second, then KILL.
t_daemon_stop() {
	kill "$1" 2>/dev/null || return 0
	_i=0
	while kill -0 "$1" 2>/dev/null && [ $_i -lt 10 ]; do sleep 0.1; _i=$((_i + 1)); done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# t_kdc_start [REALM]: a KDC for REALM (default NFSKEYS.TEST) listening on TCP and UDP
# 127.0.0.1:$T_KDC_PORT.  Exports KRB5_CONFIG, KRB5_KDC_PROFILE and KRB5CCNAME (a FILE
# cache in the temp dir) so every Kerberos tool and library call in the test uses it.
# Sets T_KDC_REALM, T_KDC_DIR, T_KDC_PID.  Add principals with t_kdc_addprinc.
t_kdc_start() {
	t_have krb5kdc kdb5_util kadmin.local || return 1
	T_KDC_REALM=${1:-NFSKEYS.TEST}
	T_KDC_DIR="$T_TMP/kdc"
	T_KDC_PORT=$(t_free_port)
	mkdir -p "$T_KDC_DIR"
	cat >"$T_KDC_DIR/krb5.conf" <<EOC
[libdefaults]
	default_realm = $T_KDC_REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
	udp_preference_limit = 1
[realms]
	$T_KDC_REALM = {
		kdc = 127.0.0.1:$T_KDC_PORT
		admin_server = 127.0.0.1:$T_KDC_PORT
	}
[domain_realm]
	localhost = $T_KDC_REALM
EOC
	cat >"$T_KDC_DIR/kdc.conf" <<EOC
[kdcdefaults]
	kdc_ports = $T_KDC_PORT
	kdc_tcp_ports = $T_KDC_PORT
[realms]
	$T_KDC_REALM = {
		database_name = $T_KDC_DIR/principal
		key_stash_file = $T_KDC_DIR/stash
		acl_file = $T_KDC_DIR/kadm5.acl
		kdc_ports = $T_KDC_PORT
		kdc_tcp_ports = $T_KDC_PORT
	}
[logging]
	kdc = FILE:$T_KDC_DIR/kdc.log
EOC
	: >"$T_KDC_DIR/kadm5.acl"
	KRB5_CONFIG="$T_KDC_DIR/krb5.conf"
	KRB5_KDC_PROFILE="$T_KDC_DIR/kdc.conf"
	KRB5CCNAME="FILE:$T_KDC_DIR/ccache"
	export KRB5_CONFIG KRB5_KDC_PROFILE KRB5CCNAME
	# the master password only protects the throwaway database; it is random anyway
	_mp=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	if ! kdb5_util create -s -r "$T_KDC_REALM" -P "$_mp" >"$T_KDC_DIR/create.log" 2>&1; then
		T_SVC_ERR="kdb5_util create failed: $(tail -1 "$T_KDC_DIR/create.log")"
		return 1
	fi
	t_daemon_start kdc krb5kdc -n -r "$T_KDC_REALM"
	T_KDC_PID=$T_DAEMON_PID
	if ! t_wait_for "t_port_open $T_KDC_PORT" 20; then
		T_SVC_ERR="krb5kdc did not start: $(tail -1 "$T_TMP/kdc.log" "$T_KDC_DIR/kdc.log" 2>/dev/null)"
		return 1
	fi
}

# t_kdc_addprinc NAME [PASSWORD]: add NAME@REALM, with PASSWORD or a random key.  (The
# password passes through kadmin.local's argv: use throwaway test passwords only.)
t_kdc_addprinc() {
	if [ $# -ge 2 ]; then
		kadmin.local -q "addprinc -pw $2 $1" >>"$T_KDC_DIR/kadmin.log" 2>&1
	else
		kadmin.local -q "addprinc -randkey $1" >>"$T_KDC_DIR/kadmin.log" 2>&1
	fi
}

# t_slapd_start [SUFFIX]: slapd with the core, cosine, nis and inetorgperson schemas and
# an empty mdb database for SUFFIX (default dc=nfskeys,dc=test) whose base entry exists,
# listening on ldap://127.0.0.1:$T_LDAP_PORT/.  Sets T_LDAP_URI, T_LDAP_BASE,
# T_LDAP_ROOTDN, T_LDAP_ROOTPW (a random password), T_SLAPD_DIR, T_SLAPD_PID.
# Load entries with: t_ldap_add <<EOF ... EOF
t_slapd_start() {
	t_have slapd ldapadd ldapsearch || return 1
	T_LDAP_BASE=${1:-dc=nfskeys,dc=test}
	T_SLAPD_DIR="$T_TMP/slapd"
	T_LDAP_PORT=$(t_free_port)
	T_LDAP_URI="ldap://127.0.0.1:$T_LDAP_PORT/"
	T_LDAP_ROOTDN="cn=admin,$T_LDAP_BASE"
	T_LDAP_ROOTPW=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	_mod=
	for d in /usr/lib/ldap /usr/lib/x86_64-linux-gnu/ldap /usr/lib64/openldap; do
		[ -e "$d/back_mdb.so" ] && { _mod=$d; break; }
	done
	[ -n "$_mod" ] || { T_SVC_ERR="slapd's back_mdb module not found"; return 1; }
	mkdir -p "$T_SLAPD_DIR/db"
	cat >"$T_SLAPD_DIR/slapd.conf" <<EOC
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/nis.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile $T_SLAPD_DIR/slapd.pid
modulepath $_mod
moduleload back_mdb
database mdb
maxsize 104857600
suffix "$T_LDAP_BASE"
rootdn "$T_LDAP_ROOTDN"
rootpw $T_LDAP_ROOTPW
directory $T_SLAPD_DIR/db
EOC
	# -d 0: stay in the foreground without debug output, so t_daemon_start can stop it
	t_daemon_start slapd slapd -d 0 -f "$T_SLAPD_DIR/slapd.conf" -h "$T_LDAP_URI"
	T_SLAPD_PID=$T_DAEMON_PID
	if ! t_wait_for "t_port_open $T_LDAP_PORT" 20; then
		T_SVC_ERR="slapd did not start: $(tail -3 "$T_TMP/slapd.log")"
		return 1
	fi
	_dc=$(echo "$T_LDAP_BASE" | sed -n 's/^dc=\([^,]*\),.*/\1/p')
	t_ldap_add <<EOC || { T_SVC_ERR="cannot add the base entry"; return 1; }
dn: $T_LDAP_BASE
objectClass: top
objectClass: dcObject
objectClass: organization
o: nfskeys test
dc: $_dc
EOC
}

# t_ldap_add: ldapadd the LDIF on standard input as the root DN.
t_ldap_add() {
	ldapadd -x -H "$T_LDAP_URI" -D "$T_LDAP_ROOTDN" -w "$T_LDAP_ROOTPW" >>"$T_SLAPD_DIR/ldapadd.log" 2>&1
}
