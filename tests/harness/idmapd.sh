# Start and stop nfskeys-idmapd for integration tests (sourced after lib.sh).
# t_idmapd_conf [EXTRA-INI-LINES]: write $T_TMP/nfskeys.conf: domain example.test, the
#   static backend with alice=2001, group staff=3001 and user0..user199 = 10000+i, the
#   daemon's socket in $T_TMP; extra lines are appended (later values win).
# t_idmapd_start: start the daemon in the foreground (log in $T_TMP/idmapd.log), wait
#   until it answers; sets IDMAPD_PID.  Under $T_DAEMON_WRAPPER (lib.sh) when set.  t_idmapd_stop: SIGTERM and wait.
IDMAPD="$top_builddir/idmapd/nfskeys-idmapd"
IDMAPD_SOCK="$T_TMP/idmapd.sock"
IDMAPD_CONF="$T_TMP/nfskeys.conf"
IDMAPD_PID=
IDMAPD_LOAD="$top_builddir/bench/idmapd-load"

t_idmapd_conf() {
	{
		printf '[General]\nDomain = example.test\n'
		printf '[Translation]\nMethod = static,nsswitch\n'
		printf '[Idmapd]\nSocket = %s\nKernel-Keyrings = nfskeys-test-none-%s\n' "$IDMAPD_SOCK" "$$"
		printf '[Static]\nalice@example.test = 2001\ngroup:staff@example.test = 3001\n'
		i=0
		while [ $i -lt 200 ]; do printf 'user%d@example.test = %d\n' $i $((10000 + i)); i=$((i + 1)); done
		[ $# -gt 0 ] && printf '%s\n' "$@"
	} >"$IDMAPD_CONF"
}

t_idmapd_start() {
	$T_DAEMON_WRAPPER "$IDMAPD" --foreground --config "$IDMAPD_CONF" "$@" >>"$T_TMP/idmapd.log" 2>&1 &
	IDMAPD_PID=$!
	t_on_exit "kill -9 $IDMAPD_PID"
	t_wait_for "'$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping" $T_DAEMON_WAIT
}

t_idmapd_stop() {
	[ -n "$IDMAPD_PID" ] || return 0
	kill -TERM "$IDMAPD_PID" 2>/dev/null
	wait "$IDMAPD_PID"
	rc=$?
	IDMAPD_PID=
	return $rc
}

# t_idmapd_slapd_users N...: (after sourcing slapd.sh) start slapd and load ou=people
# with uid=userN, uidNumber 10000+N, gidNumber 20000 for each N; sets S to the suffix.
# The whole test is skipped when the ldap plugin was not built or slapd cannot run.
t_idmapd_slapd_users() {
	[ -f "$NFSKEYS_PLUGIN_DIR/idmap-ldap.so" ] || skip_all "the ldap backend plugin was not built"
	t_slapd_start || skip_all "slapd cannot run here (slapd, ldap-utils, back_mdb needed)"
	S=$SLAPD_SUFFIX
	{
		t_ldif_ou people
		for i in "$@"; do
			t_ldif_posix_user "user$i" $((10000 + i))
		done
	} >"$T_TMP/data.ldif"
	t_slapd_load "$T_TMP/data.ldif" || skip_all "ldapadd failed"
}

t_idmapd_stat() { # t_idmapd_stat NAME: the value of one stats line (text format)
	"$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats | awk -v n="$1" '$1 == n { print $2 }'
}
