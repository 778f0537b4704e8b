# A throwaway OpenLDAP slapd on loopback for tests (source after lib.sh).
#   t_slapd_start [SUFFIX]   start slapd in $T_TMP/slapd on a free port (core, cosine, nis,
#                            inetorgperson schemas; back_mdb); returns 1 when slapd cannot
#                            run here.  Sets SLAPD_URI SLAPD_PORT SLAPD_SUFFIX SLAPD_ROOTDN
#                            SLAPD_ROOTPW_FILE SLAPD_DIR.  Stopped automatically at exit.
#                            With SLAPD_LOG_STATS=1 set before, slapd runs with
#                            `-d stats` (in front, in the background) and logs every
#                            operation to $SLAPD_DIR/stats.log: see t_slapd_searches.
#   t_slapd_searches REGEX   how many searches (SRCH lines of the stats log) so far
#                            had a filter matching REGEX (grep -E, on filter="...")
#   t_slapd_load FILE.ldif   add entries as the rootdn
#   t_slapd_stop             stop it (data kept); t_slapd_restart starts it again on the
#                            same port with the same data.  t_slapd_kill stops it with
#                            SIGKILL (a crash; faster than the orderly ~2 s shutdown).
#   t_slapd_enable_tls CERT KEY  restart it offering StartTLS with that server certificate
#                            and key (PEM files; plain LDAP stays available), and ldaps://
#                            on a second free port: sets SLAPD_LDAPS_URI SLAPD_LDAPS_PORT.
#   t_slapd_idmap_conf       the head of an nfskeys configuration on this directory, on
#                            stdout: [General] Domain = ldap.test, [Translation] Method =
#                            ldap, [LDAP] URI, Base and User-Base (ou=people); the caller
#                            appends more [LDAP] keys and other sections
# The rootdn password is a random test-only value kept in a file (never in argv).
# LDIF for t_slapd_load, on stdout (entries end with a blank line; concatenate them):
#   t_ldif_ou NAME            an organizationalUnit ou=NAME under $SLAPD_SUFFIX
#   t_ldif_posix_user UID UIDNUMBER [GIDNUMBER]
#                            an RFC 2307 account uid=UID,ou=people,$SLAPD_SUFFIX (cn UID,
#                            home /home/UID, gidNumber 20000 unless given)
#   t_ldif_posix_users N      user0 .. user(N-1) with uidNumbers 10000 + i

SLAPD_BIN=${SLAPD_BIN:-/usr/sbin/slapd}
SLAPD_SCHEMA_DIR=${SLAPD_SCHEMA_DIR:-/etc/ldap/schema}
SLAPD_MODULE_DIR=${SLAPD_MODULE_DIR:-/usr/lib/ldap}

t_slapd_start() {
	[ -x "$SLAPD_BIN" ] || return 1
	command -v ldapadd >/dev/null 2>&1 || return 1
	[ -f "$SLAPD_MODULE_DIR/back_mdb.so" ] || [ -f "$SLAPD_MODULE_DIR/back_mdb.la" ] || return 1
	SLAPD_SUFFIX=${1:-dc=nfskeys,dc=test}
	SLAPD_ROOTDN="cn=admin,$SLAPD_SUFFIX"
	SLAPD_DIR="$T_TMP/slapd"
	mkdir -p "$SLAPD_DIR/db" || return 1
	SLAPD_ROOTPW_FILE="$SLAPD_DIR/rootpw"
	(umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=\n' >"$SLAPD_ROOTPW_FILE")
	{
		for s in core cosine nis inetorgperson; do
			echo "include $SLAPD_SCHEMA_DIR/$s.schema"
		done
		echo "pidfile $SLAPD_DIR/slapd.pid"
		# as Debian's package configures it (/usr/share/slapd/slapd.init.ldif): no
		# syslog lines per operation (-d stats, SLAPD_LOG_STATS, still logs to stderr)
		echo "loglevel none"
		echo "modulepath $SLAPD_MODULE_DIR"
		echo "moduleload back_mdb"
		echo "database mdb"
		echo "maxsize 10485760"
		echo "dbnosync"
		echo "suffix \"$SLAPD_SUFFIX\""
		echo "rootdn \"$SLAPD_ROOTDN\""
		echo "rootpw $(cat "$SLAPD_ROOTPW_FILE")"
		echo "directory $SLAPD_DIR/db"
		echo "index objectClass,uid,uidNumber,gidNumber,cn,memberUid,description eq"
	} >"$SLAPD_DIR/slapd.conf"
	chmod 600 "$SLAPD_DIR/slapd.conf"
	SLAPD_PORT=$(t_free_port)
	SLAPD_URI="ldap://127.0.0.1:$SLAPD_PORT/"
	t_on_exit t_slapd_stop
	t_slapd_restart || return 1
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: nfskeys test\ndc: %s\n' \
		"$SLAPD_SUFFIX" "$(echo "$SLAPD_SUFFIX" | sed 's/^dc=\([^,]*\).*/\1/')" >"$SLAPD_DIR/base.ldif"
	t_slapd_load "$SLAPD_DIR/base.ldif"
}

t_slapd_restart() {
	if [ -n "${SLAPD_LOG_STATS:-}" ]; then
		"$SLAPD_BIN" -f "$SLAPD_DIR/slapd.conf" -d stats \
			-h "$SLAPD_URI${SLAPD_LDAPS_URI:+ $SLAPD_LDAPS_URI}" \
			>>"$SLAPD_DIR/stats.log" 2>&1 &
		t_wait_for "test -s '$SLAPD_DIR/slapd.pid'" 10 || return 1
	else
		"$SLAPD_BIN" -f "$SLAPD_DIR/slapd.conf" \
			-h "$SLAPD_URI${SLAPD_LDAPS_URI:+ $SLAPD_LDAPS_URI}" \
			>"$SLAPD_DIR/slapd.log" 2>&1 || return 1
	fi
	t_wait_for "ldapsearch -x -LLL -H '$SLAPD_URI' -s base -b '' namingContexts" 10
}

t_slapd_stop() {
	[ -f "$SLAPD_DIR/slapd.pid" ] || return 0
	pid=$(cat "$SLAPD_DIR/slapd.pid")
	kill "$pid" 2>/dev/null
	t_wait_for "! kill -0 $pid" 10
	rm -f "$SLAPD_DIR/slapd.pid"
}

t_slapd_kill() {
	[ -f "$SLAPD_DIR/slapd.pid" ] || return 0
	pid=$(cat "$SLAPD_DIR/slapd.pid")
	kill -KILL "$pid" 2>/dev/null
	t_wait_for "! kill -0 $pid" 10
	rm -f "$SLAPD_DIR/slapd.pid"
}

t_slapd_searches() {
	grep -E ' SRCH base=' "$SLAPD_DIR/stats.log" | grep -E -c "filter=\"[^\"]*($1)"
}

t_slapd_idmap_conf() {
	printf '[General]\nDomain = ldap.test\n[Translation]\nMethod = ldap\n'
	printf '[LDAP]\nURI = %s\nBase = %s\nUser-Base = ou=people,%s\n' "$SLAPD_URI" \
		"$SLAPD_SUFFIX" "$SLAPD_SUFFIX"
}

t_slapd_load() {
	ldapadd -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -y "$SLAPD_ROOTPW_FILE" -f "$1" >/dev/null
}

t_ldif_ou() {
	printf 'dn: ou=%s,%s\nobjectClass: organizationalUnit\nou: %s\n\n' "$1" "$SLAPD_SUFFIX" "$1"
}

t_ldif_posix_user() {
	printf 'dn: uid=%s,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\nuid: %s\ncn: %s\nuidNumber: %d\ngidNumber: %d\nhomeDirectory: /home/%s\n\n' \
		"$1" "$SLAPD_SUFFIX" "$1" "$1" "$2" "${3:-20000}" "$1"
}

t_ldif_posix_users() {
	_i=0
	while [ $_i -lt "$1" ]; do
		t_ldif_posix_user "user$_i" $((10000 + _i))
		_i=$((_i + 1))
	done
}

t_slapd_enable_tls() {
	[ -f "$1" ] && [ -f "$2" ] || return 1
	# TLS directives are global: they go before the database section
	sed -i -e '/^TLSCertificate/d' -e "/^database /i TLSCertificateFile $1\\
TLSCertificateKeyFile $2" "$SLAPD_DIR/slapd.conf" || return 1
	SLAPD_LDAPS_PORT=$(t_free_port)
	SLAPD_LDAPS_URI="ldaps://127.0.0.1:$SLAPD_LDAPS_PORT/"
	t_slapd_stop
	t_slapd_restart
}
