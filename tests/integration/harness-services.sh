#!/bin/sh
# The service harness itself (tests/harness/services.sh: kdc.sh, slapd.sh, t_daemon_start):
# a KDC that issues a ticket, a slapd that answers a search, a background daemon, and all
# of them gone once the test that started them exits.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/services.sh"
plan 7

# Run the services in a child test process so that its exit (and cleanup) can be observed.
# kdc_start ends a test that cannot run a KDC with skip_all: the child records why.
cat >"$T_TMP/child.sh" <<'EOC'
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/services.sh"
exec 3>"$OUT"
echo "tmp=$T_TMP" >&3
t_daemon_start sleeper sleep 300
echo "daemon_pid=$T_DAEMON_PID" >&3
if t_slapd_start; then
	echo "slapd_pid=$(cat "$SLAPD_DIR/slapd.pid")" >&3
	cat >"$T_TMP/alice.ldif" <<EOL
dn: uid=alice,$SLAPD_SUFFIX
objectClass: account
objectClass: posixAccount
uid: alice
cn: alice
uidNumber: 10001
gidNumber: 10001
homeDirectory: /home/alice
EOL
	t_slapd_load "$T_TMP/alice.ldif"
	ldapsearch -x -LLL -H "$SLAPD_URI" -b "$SLAPD_SUFFIX" "(uid=alice)" uidNumber 2>/dev/null |
		grep -q '^uidNumber: 10001$' && echo "ldap=ok" >&3
else
	echo "slapd_skip=slapd cannot run here (slapd, ldap-utils, back_mdb)" >&3
fi
skip_all() { echo "kdc_skip=$*" >&3; exit 0; }
kdc_start NFSKEYS.TEST
echo "kdc_pid=$KDC_PID" >&3
kdc_addprinc alice "pw-$$"
kdc_kinit alice "pw-$$" && echo "kinit=ok" >&3
klist 2>/dev/null | grep -q "krbtgt/NFSKEYS.TEST@NFSKEYS.TEST" && echo "tgt=ok" >&3
EOC
OUT="$T_TMP/child.out" sh "$T_TMP/child.sh" >/dev/null 2>&1
get() { sed -n "s/^$1=//p" "$T_TMP/child.out"; }

if [ -n "$(get kdc_skip)" ]; then
	skip "KDC: $(get kdc_skip)"; skip "KDC: $(get kdc_skip)"; skip "KDC: $(get kdc_skip)"
else
	check_eq "kdc_start: kinit with a password against the KDC" ok "$(get kinit)"
	check_eq "the credential cache holds a TGT of the test realm" ok "$(get tgt)"
	pid=$(get kdc_pid)
	if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then ok "the KDC is stopped at exit"; else
		not_ok "the KDC is stopped at exit (pid $pid)"; fi
fi
if [ -n "$(get slapd_skip)" ]; then
	skip "slapd: $(get slapd_skip)"; skip "slapd: $(get slapd_skip)"
else
	check_eq "t_slapd_start: an added posixAccount is found" ok "$(get ldap)"
	pid=$(get slapd_pid)
	if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then ok "slapd is stopped at exit"; else
		not_ok "slapd is stopped at exit (pid $pid)"; fi
fi
pid=$(get daemon_pid)
if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then ok "a t_daemon_start daemon is stopped at exit"; else
	not_ok "a t_daemon_start daemon is stopped at exit (pid $pid)"; fi
tmp=$(get tmp)
if [ -n "$tmp" ] && [ ! -e "$tmp" ]; then ok "the child's temp dir is removed at exit"; else
	not_ok "the child's temp dir is removed at exit ($tmp)"; fi
