#!/bin/sh
# The daemons' LDAP bind password (the secret of a real slapd's rootdn) never reaches their
# logs at debug level, any /proc/PID/cmdline or environ, and once a daemon has held it
# the daemon is non-dumpable.  Both daemons run as an unprivileged uid here, so that
# "non-dumpable" is visible as /proc/PID owned by root (it is not before the password).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"
. "$top_srcdir/tests/harness/faults.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (runs the daemons as another uid)"
[ -f "$NFSKEYS_PLUGIN_DIR/idmap-ldap.so" ] || skip_all "the ldap backend plugin was not built"
t_slapd_start "dc=nfskeys,dc=test" || skip_all "slapd cannot run here"
t_slapd_stop
sed -i "/inetorgperson.schema/a include $top_srcdir/data/nfskeys-attr.schema" "$SLAPD_DIR/slapd.conf"
t_slapd_restart || { sed 's/^/# /' "$SLAPD_DIR/slapd.log" | tail -20
	fail_all "slapd rejects the shipped data/nfskeys-attr.schema"; }
S=$SLAPD_SUFFIX
{
	t_ldif_ou people
	t_ldif_posix_user user1 10001
	t_ldif_ou nfskeys
	printf 'dn: cn=home,ou=nfskeys,%s\nobjectClass: nfskeysDirectoryPolicy\ncn: home\nnfskeysDomain: nfs://fleet\nnfskeysPath: /export/home\nnfskeysAttribute: actimeo=60\n' "$S"
} >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" || fail_all "ldapadd of entries using data/nfskeys-attr.schema failed"
plan 12

U=65534
t_ou_load # the daemons run as uid $U: from the installed copy
chmod 755 "$T_TMP"
W="$T_TMP/run"
mkdir -p "$W" && chown $U:$U "$W"
install -o $U -g $U -m 600 "$SLAPD_ROOTPW_FILE" "$W/bindpw"
secret=$(cat "$SLAPD_ROOTPW_FILE")
control="control-$$-marker"
printf '%s\n%s\n' "$secret" "$control" >"$T_TMP/needles"
chmod 600 "$T_TMP/needles"
python3 "$top_srcdir/tests/harness/proc-sampler.py" "$T_TMP/needles" "$T_TMP/stop" "$T_TMP/hits" &
sampler=$!
t_on_exit "touch $T_TMP/stop; kill $sampler"
t_wait_for "test -f $T_TMP/hits.ready" 10 || { not_ok "sampler started"; exit 1; }
NFSKEYS_CONTROL="$control" sh -c 'sleep 0.3; true' "$control"
export NFSKEYS_LOG=debug

# --- nfskeys-idmapd with the ldap backend binding as the rootdn
cat >"$T_TMP/idmapd.conf" <<CONF
[General]
Domain = ldap.test
[Translation]
Method = ldap
[LDAP]
URI = $SLAPD_URI
Base = $S
User-Base = ou=people,$S
Bind-DN = $SLAPD_ROOTDN
Bind-Password-File = $W/bindpw
Allow-Cleartext-Bind = yes
[Idmapd]
Socket = $W/idmapd.sock
Kernel-Keyrings = nfskeys-test-none-$$
CONF
setpriv --reuid=$U --regid=$U --clear-groups $T_OU_ENV \
	$T_DAEMON_WRAPPER "$(t_ou nfskeys-idmapd)" --foreground --debug \
	--config "$T_TMP/idmapd.conf" >"$T_TMP/idmapd.log" 2>&1 &
IPID=$!
t_on_exit "kill -9 $IPID"
t_wait_for "'$NFSKEYS' -c '$T_TMP/idmapd.conf' idmapd ping" 20
t_wait_for "readlink /proc/$IPID/exe | grep -q nfskeys-idmapd" 10
check_eq "idmapd (uid $U) before it reads the bind password: dumpable" $U \
	"$(stat -c %u /proc/$IPID/status)"
out=$("$NFSKEYS" -c "$T_TMP/idmapd.conf" idmapd lookup name-to-uid user1@ldap.test 2>&1)
check_contains "idmapd binds with the password and answers" "10001" "$out"
check_eq "... and is non-dumpable from then on" 0 "$(stat -c %u /proc/$IPID/status)"
"$NFSKEYS" -c "$T_TMP/idmapd.conf" idmapd lookup name-to-uid nosuch@ldap.test >/dev/null 2>&1
kill $IPID; wait $IPID
rc=$?
# Under ASan any LeakSanitizer report fails this (the ldap plugin keeps libldap mapped, so
# its global state is no longer reported when the plugin is unloaded).
[ "$rc" = 0 ] || sed 's/^/# /' "$T_TMP/idmapd.log" | grep -v -i debug | tail -30
check_eq "idmapd stops cleanly (under ASan: no leaks in our code)" 0 "$rc"

# --- nfskeys-attrd syncing from LDAP as the rootdn
cat >"$T_TMP/attr.conf" <<EOF
[Attr]
Store = $W/attr.db
[Attrd]
Socket = $W/attrd.sock
LDAP-URI = $SLAPD_URI
LDAP-Base = ou=nfskeys,$S
LDAP-Bind-DN = $SLAPD_ROOTDN
LDAP-Bind-Password-File = $W/bindpw
LDAP-Allow-Cleartext-Bind = yes
Sync-Interval = 1
EOF
setpriv --reuid=$U --regid=$U --clear-groups $T_OU_ENV \
	$T_DAEMON_WRAPPER "$(t_ou nfskeys-attrd)" -f -c "$T_TMP/attr.conf" -vv \
	>"$T_TMP/attrd.log" 2>&1 &
APID=$!
t_on_exit "kill -9 $APID"
t_wait_for "grep -q 'LDAP sync: 1 attributes' '$T_TMP/attrd.log'" 20
check_contains "attrd binds with the password and syncs" "LDAP sync: 1 attributes" \
	"$(cat "$T_TMP/attrd.log")"
check_eq "... and is non-dumpable" 0 "$(stat -c %u /proc/$APID/status)"
kill $APID; wait $APID
check_eq "attrd stops cleanly" 0 "$?"

touch "$T_TMP/stop"
wait "$sampler"
check_contains "the sampler saw the control marker in argv" "1 " "$(grep ' cmdline$' "$T_TMP/hits")"
check_contains "... and in environ" "1 " "$(grep ' environ$' "$T_TMP/hits")"
check_eq "the bind password was in no /proc/PID/cmdline or environ" "" "$(grep '^0 ' "$T_TMP/hits")"
check_contains "the daemons logged at debug level" "debug" "$(cat "$T_TMP/idmapd.log" "$T_TMP/attrd.log")"
if grep -qF "$secret" "$T_TMP/idmapd.log" "$T_TMP/attrd.log"; then
	not_ok "the bind password is in neither daemon's log"
	grep -nF "$secret" "$T_TMP/idmapd.log" "$T_TMP/attrd.log" | sed 's/^/# /'
else
	ok "the bind password is in neither daemon's log"
fi
