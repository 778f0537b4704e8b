#!/bin/sh
# A principal in more groups than an answer holds (64 gids): the answer says that its
# group list was cut, in nfskeys idmap query's JSON ("groups_cut": true) and in lookup's
# text ("groups cut at 64"), resolved in this process and through nfskeys-idmapd (the
# flag crosses the protocol, and the daemon's cache keeps it); a principal in fewer
# groups says nothing of the kind.  The groups are a real slapd's (memberUid, the ldap
# backend).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/slapd.sh"

[ -f "$NFSKEYS_PLUGIN_DIR/idmap-ldap.so" ] || skip_all "the ldap backend plugin was not built"
t_slapd_start || skip_all "slapd cannot run here (slapd, ldap-utils, back_mdb needed)"
S=$SLAPD_SUFFIX
# alice in staff (20000, her gidNumber) and eng; crowd in g1 .. g70 (21001 .. 21070)
{
	t_ldif_ou people
	t_ldif_ou groups
	t_ldif_posix_user alice 10001
	t_ldif_posix_user crowd 10002
	printf 'dn: cn=staff,ou=groups,%s\nobjectClass: posixGroup\ncn: staff\ngidNumber: 20000\nmemberUid: alice\n\n' "$S"
	printf 'dn: cn=eng,ou=groups,%s\nobjectClass: posixGroup\ncn: eng\ngidNumber: 20001\nmemberUid: alice\n\n' "$S"
	i=1
	while [ $i -le 70 ]; do
		printf 'dn: cn=g%d,ou=groups,%s\nobjectClass: posixGroup\ncn: g%d\ngidNumber: %d\nmemberUid: crowd\n\n' \
			$i "$S" $i $((21000 + i))
		i=$((i + 1))
	done
} >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" || skip_all "ldapadd failed"
{
	t_slapd_idmap_conf
	cat <<CONF
Group-Base = ou=groups,$S
[General]
Local-Realms = LDAP.TEST
[Idmapd]
Socket = $IDMAPD_SOCK
Kernel-Keyrings = nfskeys-test-none-$$
CONF
} >"$IDMAPD_CONF"
NK() { "$NFSKEYS" -c "$IDMAPD_CONF" "$@"; }
field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p"; }
ngroups() { sed -n 's/.*"groups":\[\([0-9,]*\)\].*/\1/p' | tr ',' '\n' | grep -c .; }

plan 9

# in this process: the JSON of query, the text of lookup
printf 'principal-to-ids crowd@LDAP.TEST\nprincipal-to-ids alice@LDAP.TEST\n' |
	NK idmap query >"$T_TMP/query" 2>"$T_TMP/query.err"
check_eq "query: crowd (in 71 groups): 64 gids, groups_cut true" "64 true" \
	"$(sed -n 1p "$T_TMP/query" | ngroups) $(sed -n 1p "$T_TMP/query" | field groups_cut)"
check_eq "query: alice (in 2 groups): 2 gids, groups_cut false" "2 false" \
	"$(sed -n 2p "$T_TMP/query" | ngroups) $(sed -n 2p "$T_TMP/query" | field groups_cut)"
check_contains "lookup --local: crowd's answer says its groups were cut" \
	"(ldap, groups cut at 64, ttl " "$(NK idmap lookup --local --principal crowd@LDAP.TEST)"
check_eq "lookup --local: alice's answer says nothing of a cut" \
	"alice@LDAP.TEST -> 10001 gid 20000 groups 20000,20001 (ldap)" \
	"$(NK idmap lookup --local --principal alice@LDAP.TEST | sed 's/, ttl [0-9]*s//')"

# through the daemon: asked, then from its cache
check "daemon starts" t_idmapd_start
check_contains "lookup through the daemon: crowd's groups were cut" \
	"(ldap, groups cut at 64, ttl " "$(NK idmap lookup --principal crowd@LDAP.TEST)"
check_contains "the daemon's cache keeps it" "(ldap, cached, groups cut at 64, ttl " \
	"$(NK idmap lookup --principal crowd@LDAP.TEST)"
check_eq "lookup --json through the daemon: 64 gids, groups_cut true" "64 true" \
	"$(NK idmap lookup --json --principal crowd@LDAP.TEST | ngroups) $(
		NK idmap lookup --json --principal crowd@LDAP.TEST | field groups_cut)"
check_eq "lookup through the daemon: alice's groups not cut" "false" \
	"$(NK idmap lookup --json --principal alice@LDAP.TEST | field groups_cut)"
[ "$TAP_FAILED" -eq 0 ] || sed 's/^/# /' "$T_TMP/query.err" "$T_TMP/idmapd.log"
t_idmapd_stop
