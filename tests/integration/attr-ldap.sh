#!/bin/sh
# nfskeys-attrd's fleet sync against a real OpenLDAP slapd on loopback (schema from
# data/nfskeys-attr.schema): policies arrive from LDAP marked as such, a local value wins
# on the same directory, bad entries are skipped, changes and removals in LDAP follow,
# and through an LDAP outage (and a daemon restart during it) the last good copy stays.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"

t_slapd_start "dc=nfskeys,dc=test" || skip_all "slapd cannot run here"
# our schema next to the standard ones
t_slapd_stop
sed -i "/inetorgperson.schema/a include $top_srcdir/data/nfskeys-attr.schema" "$SLAPD_DIR/slapd.conf"
t_slapd_restart || { sed 's/^/# /' "$SLAPD_DIR/slapd.log" | tail -20
	fail_all "slapd rejects the shipped data/nfskeys-attr.schema"; }

plan 25

# the schema's OIDs are under our UUID arc (X.667: 2.25.<UUID as an integer>), as slapd
# itself reports them
ARC=2.25.83503968807656563263817809245622586621
subschema=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$SLAPD_URI" -s base -b cn=subschema \
	attributeTypes objectClasses 2>&1)
check_contains "slapd: nfskeysDomain under the UUID arc" \
	"attributeTypes: ( $ARC.6.1.1 NAME 'nfskeysDomain'" "$subschema"
check_contains "slapd: nfskeysDirectoryPolicy under the UUID arc" \
	"objectClasses: ( $ARC.6.2.1 NAME 'nfskeysDirectoryPolicy'" "$subschema"

ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR="$top_builddir/tools/nfsattr/nfsattr"
CONF="$T_TMP/nfskeys.conf"
cat >"$CONF" <<EOF
[Attr]
Store = $T_TMP/attr.db
[Attrd]
Socket = $T_TMP/attrd.sock
LDAP-URI = $SLAPD_URI
LDAP-Base = ou=nfskeys,dc=nfskeys,dc=test
LDAP-Bind-DN = $SLAPD_ROOTDN
LDAP-Bind-Password-File = $SLAPD_ROOTPW_FILE
# plain LDAP on loopback: TLS is ldap-tls.sh's subject
LDAP-Allow-Cleartext-Bind = yes
Sync-Interval = 1
LDAP-Timeout = 2
EOF
na() { "$NFSATTR" -c "$CONF" "$@"; }
# KEY's value and origin in effect at TARGET: "60 ldap"
eff() { na show "$1" | awk -v k="$2" '$1 == k { print $2, ($NF == "[ldap]" ? "ldap" : "local"); f = 1 }
	END { if (!f) print "unset" }'; }
ATTRD_PID=
start_daemon() {
	"$ATTRD" -f -c "$CONF" -v >>"$T_TMP/attrd.log" 2>&1 &
	ATTRD_PID=$!
}
t_on_exit '[ -n "$ATTRD_PID" ] && kill $ATTRD_PID'

cat >"$T_TMP/fleet.ldif" <<EOF
dn: ou=nfskeys,dc=nfskeys,dc=test
objectClass: organizationalUnit
ou: nfskeys

dn: cn=home,ou=nfskeys,dc=nfskeys,dc=test
objectClass: nfskeysDirectoryPolicy
cn: home
nfskeysDomain: nfs://fleet
nfskeysPath: /export/home
nfskeysAttribute: actimeo=60
nfskeysAttribute: lookupcache=positive

dn: cn=scratch,ou=nfskeys,dc=nfskeys,dc=test
objectClass: nfskeysDirectoryPolicy
cn: scratch
nfskeysDomain: nfs://fleet
nfskeysPath: /export/scratch
nfskeysAttribute: cache=none

dn: cn=broken,ou=nfskeys,dc=nfskeys,dc=test
objectClass: nfskeysDirectoryPolicy
cn: broken
nfskeysDomain: nfs://fleet
nfskeysPath: /export/broken
nfskeysAttribute: cache=maybe
EOF
# the per-directory bound of local sets (64 attributes) holds for LDAP too: 64 pass, 65
# (spread over two entries naming the same directory) drop that directory whole
ldap_many() { # CN PATH FROM TO
	printf '\ndn: cn=%s,ou=nfskeys,dc=nfskeys,dc=test\nobjectClass: nfskeysDirectoryPolicy\ncn: %s\nnfskeysDomain: nfs://fleet\nnfskeysPath: %s\n' "$1" "$1" "$2"
	i=$3; while [ "$i" -le "$4" ]; do printf 'nfskeysAttribute: user.k%d=v\n' "$i"; i=$((i + 1)); done
}
{ ldap_many full /export/full 1 64; ldap_many crowded1 /export/crowded 1 40
  ldap_many crowded2 /export/crowded 30 65; } >>"$T_TMP/fleet.ldif"
check "policies loaded into LDAP" t_slapd_load "$T_TMP/fleet.ldif"

start_daemon
t_wait_for "[ \"\$(eff nfs://fleet/export/home/alice actimeo)\" = '60 ldap' ]" 15
check_eq "synced from LDAP, marked as such" "60 ldap" "$(eff nfs://fleet/export/home/alice actimeo)"
check_eq "second entry" "none ldap" "$(eff nfs://fleet/export/scratch cache)"
check_eq "invalid entry skipped" "unset" "$(eff nfs://fleet/export/broken cache)"
check_contains "... and named in the log" "nfs://fleet/export/broken: bad value 'maybe' for cache" \
	"$(cat "$T_TMP/attrd.log")"
check_eq "64 attributes on one directory from LDAP: taken" "v ldap" "$(eff nfs://fleet/export/full user.k64)"
check_eq "65 on one directory (two entries): dropped whole" "unset" \
	"$(eff nfs://fleet/export/crowded user.k1)"
check_contains "... and named in the log" \
	"LDAP entry nfs://fleet/export/crowded: 65 attributes (at most 64 on one directory): skipped" \
	"$(cat "$T_TMP/attrd.log")"

# a local value on the same directory wins; the LDAP one stays underneath
printf '{"policies":[{"domain":"nfs://fleet","path":"/export/home","attributes":{"actimeo":"5"}}]}' >"$T_TMP/local.json"
na import "$T_TMP/local.json" >/dev/null 2>&1
check_eq "local value wins" "5 local" "$(eff nfs://fleet/export/home/alice actimeo)"
check_eq "other LDAP value still there" "positive ldap" "$(eff nfs://fleet/export/home/alice lookupcache)"

# changes and removals in LDAP follow
printf 'dn: cn=scratch,ou=nfskeys,dc=nfskeys,dc=test\nchangetype: modify\nreplace: nfskeysAttribute\nnfskeysAttribute: cache=read\n' |
	ldapmodify -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -y "$SLAPD_ROOTPW_FILE" >/dev/null
t_wait_for "[ \"\$(eff nfs://fleet/export/scratch cache)\" = 'read ldap' ]" 10
check_eq "a change in LDAP arrives" "read ldap" "$(eff nfs://fleet/export/scratch cache)"
ldapdelete -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -y "$SLAPD_ROOTPW_FILE" \
	"cn=scratch,ou=nfskeys,dc=nfskeys,dc=test" >/dev/null
t_wait_for "[ \"\$(eff nfs://fleet/export/scratch cache)\" = unset ]" 10
check_eq "a removal in LDAP arrives" "unset" "$(eff nfs://fleet/export/scratch cache)"

# outage: the last good copy stays, also across a daemon restart
t_slapd_kill
sleep 3
check_eq "LDAP down: policy kept" "positive ldap" "$(eff nfs://fleet/export/home/alice lookupcache)"
check_contains "failures counted" "nfskeys_attrd_ldap_failures_total" \
	"$(na stats --prometheus | grep '^nfskeys_attrd_ldap_failures_total [1-9]')"
kill "$ATTRD_PID"; wait "$ATTRD_PID" 2>/dev/null
start_daemon
sleep 2
check_eq "restart during the outage: kept" "positive ldap" "$(eff nfs://fleet/export/home/alice lookupcache)"
check_contains "outage logged" "LDAP sync failed" "$(cat "$T_TMP/attrd.log")"
# LDAP back: syncing resumes
t_slapd_restart
printf 'dn: cn=home,ou=nfskeys,dc=nfskeys,dc=test\nchangetype: modify\nreplace: nfskeysAttribute\nnfskeysAttribute: lookupcache=all\n' |
	ldapmodify -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -y "$SLAPD_ROOTPW_FILE" >/dev/null
t_wait_for "[ \"\$(eff nfs://fleet/export/home/alice lookupcache)\" = 'all ldap' ]" 15
check_eq "LDAP back: syncing resumes" "all ldap" "$(eff nfs://fleet/export/home/alice lookupcache)"

# a reload that removes LDAP-URI stops syncing and keeps the LDAP-sourced policies; one
# that sets it again resumes
syncs() { na stats --prometheus | awk '$1 == "nfskeys_attrd_ldap_syncs_total" { print $2 }'; }
ldap_set_home() {
	printf 'dn: cn=home,ou=nfskeys,dc=nfskeys,dc=test\nchangetype: modify\nreplace: nfskeysAttribute\nnfskeysAttribute: lookupcache=%s\n' "$1" |
		ldapmodify -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -y "$SLAPD_ROOTPW_FILE" >/dev/null
}
sed -i '/^LDAP-URI/d' "$CONF"
kill -HUP "$ATTRD_PID"
t_wait_for "grep -q 'LDAP-URI removed: syncing stops' '$T_TMP/attrd.log'" 10
before=$(syncs)
ldap_set_home none
# Sync-Interval is 1 s: three intervals with no sync
sleep 3
check_eq "LDAP-URI removed by a reload: no more syncs" "$before" "$(syncs)"
check_eq "... and the LDAP-sourced policy stays" "all ldap" \
	"$(eff nfs://fleet/export/home/alice lookupcache)"
sed -i "/^LDAP-Base/i LDAP-URI = $SLAPD_URI" "$CONF"
kill -HUP "$ATTRD_PID"
t_wait_for "[ \"\$(eff nfs://fleet/export/home/alice lookupcache)\" = 'none ldap' ]" 15
check_eq "LDAP-URI set again by a reload: syncing resumes" "none ldap" \
	"$(eff nfs://fleet/export/home/alice lookupcache)"

# a daemon started without LDAP-URI starts syncing at the reload that sets it
kill "$ATTRD_PID"; wait "$ATTRD_PID" 2>/dev/null
sed -i '/^LDAP-URI/d' "$CONF"
start_daemon
t_wait_for "na show nfs://fleet/export >/dev/null 2>&1" 10
ldap_set_home positive
sleep 2
check_eq "started without LDAP-URI: nothing synced" "none ldap" \
	"$(eff nfs://fleet/export/home/alice lookupcache)"
sed -i "/^LDAP-Base/i LDAP-URI = $SLAPD_URI" "$CONF"
kill -HUP "$ATTRD_PID"
t_wait_for "[ \"\$(eff nfs://fleet/export/home/alice lookupcache)\" = 'positive ldap' ]" 15
check_eq "a reload that sets LDAP-URI starts syncing" "positive ldap" \
	"$(eff nfs://fleet/export/home/alice lookupcache)"
check_contains "... and says so" "LDAP-URI set: syncing starts" "$(cat "$T_TMP/attrd.log")"
