#!/bin/sh
# Active Directory through a Kerberos bind with the member's machine keytab (no password
# anywhere), on a real Samba AD DC (tests/harness/samba-ad.sh):
#  - a principal's groups from the ldap backend (Schema = ad): AD's membership, nested
#    groups included, not memberUid.  Group-Membership = token-groups (the user's
#    tokenGroups) and member (LDAP_MATCHING_RULE_IN_CHAIN) each against the DC's own
#    tokenGroups read with ldbsearch from its sam.ldb, each SID taken to its group's
#    gidNumber (a group without one is no gid); and against winbind on the member
#    (wbinfo --user-sids, each SID's gid from the ad backend with schema_mode rfc2307).
#    A user whose tokenGroups the member may not read (an ACE denies it): the same
#    groups through member, and a log says so, once over several lookups of one
#    engine, again only after another user's tokenGroups were read.  A user in more
#    groups than an answer holds: cut at 64, and a log says so.
#  - the sid backend's "ad" ranges with [SID] AD-SASL-Mech = GSSAPI and AD-Keytab:
#    every SID of the domain -> uid and gid, as winbind's ad backend answers.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/samba-ad.sh"

ls /usr/lib/*/sasl2/libgssapiv2.so* >/dev/null 2>&1 ||
	skip_all "Cyrus SASL's GSSAPI module is not installed (libsasl2-modules-gssapi-mit)"
t_samba_ad_start || fail_all "the Samba DC did not start (log above)"
t_samba_member_join || fail_all "net ads join of the member failed (log above)"
t_samba_ad_gss_keytab "$SAMBA_MEMBER_DIR/krb5.keytab" ||
	fail_all "no keytab for the member (log above)"
SAM="$SAMBA_AD_DIR/dc/private/sam.ldb"
B=$SAMBA_AD_BASEDN
REALM=$SAMBA_AD_REALM
DOM=$SAMBA_AD_SID
nk() { t_samba_member_run "$NFSKEYS" "$@"; }

# The memberships, written to the DC's database directly (the template has alice in no
# group but her primary one, Domain Users):
#   alice in staff (20001, her gidNumber too), devs (20011), plain (no gidNumber)
#   devs in eng (20010)              alice is in eng through devs
#   plain in outer (20012)           ... and in outer through a group without gidNumber
#   nogid (no gidNumber), with alice: no gid
#   dave (uidNumber 10003, gidNumber 20001) in no group
#   many (uidNumber 10004, gidNumber 20001) in g1 .. g70 (gidNumber 21001 .. 21070)
#   erin (uidNumber 10005, gidNumber 20001) in devs, her tokenGroups denied to the member
{
	for g in eng:20010 devs:20011 outer:20012 nogid:-; do
		printf 'dn: CN=%s,CN=Users,%s\nchangetype: add\nobjectClass: group\n' "${g%%:*}" "$B"
		printf 'sAMAccountName: %s\n' "${g%%:*}"
		[ "${g#*:}" != - ] && printf 'gidNumber: %s\n' "${g#*:}"
		echo
	done
	i=1
	while [ $i -le 70 ]; do
		printf 'dn: CN=g%d,CN=Users,%s\nchangetype: add\nobjectClass: group\n' $i "$B"
		printf 'sAMAccountName: g%d\ngidNumber: %d\n\n' $i $((21000 + i))
		i=$((i + 1))
	done
	for u in dave:10003 many:10004 erin:10005; do
		printf 'dn: CN=%s,CN=Users,%s\nchangetype: add\nobjectClass: user\n' "${u%%:*}" "$B"
		printf 'sAMAccountName: %s\nuidNumber: %s\ngidNumber: 20001\n\n' "${u%%:*}" "${u#*:}"
	done
	for m in staff:alice devs:alice plain:alice nogid:alice eng:devs outer:plain devs:erin; do
		printf 'dn: CN=%s,CN=Users,%s\nchangetype: modify\nadd: member\n' "${m%%:*}" "$B"
		printf 'member: CN=%s,CN=Users,%s\n\n' "${m#*:}" "$B"
	done
	i=1
	while [ $i -le 70 ]; do
		printf 'dn: CN=g%d,CN=Users,%s\nchangetype: modify\nadd: member\n' $i "$B"
		printf 'member: CN=many,CN=Users,%s\n\n' "$B"
		i=$((i + 1))
	done
} >"$T_TMP/groups.ldif"
TDB_NO_FSYNC=1 ldbmodify -H "$SAM" "$T_TMP/groups.ldif" >"$T_TMP/groups.log" 2>&1 ||
	{ tail -5 "$T_TMP/groups.log" >&2; fail_all "ldbmodify of the test's groups"; }
# an ACE denying the member's machine account the reading of erin's tokenGroups (the
# attribute's schemaIDGUID)
member_sid=$(ldbsearch -H "$SAM" '(sAMAccountName=MEMBER1$)' objectSid | sed -n 's/^objectSid: //p')
TDB_NO_FSYNC=1 samba-tool dsacl set -H "$SAM" --objectdn="CN=erin,CN=Users,$B" \
	--sddl="(OD;;RP;b7c69e6d-2cc7-11d2-854e-00a0c983f608;;$member_sid)" \
	>>"$T_TMP/groups.log" 2>&1 || { tail -5 "$T_TMP/groups.log" >&2; fail_all "dsacl set"; }

# The DC's answer for USER: its tokenGroups (ldbsearch, base scope on its entry), each
# SID to the gidNumber of its group (unsigned), those without one left out; then the
# user's own gidNumber, the primary gid nfskeys gives first.  One "GID" a line, sorted.
ldbsearch -H "$SAM" '(objectClass=group)' objectSid gidNumber 2>/dev/null | awk '
	function u32(n) { return sprintf("%.0f", n < 0 ? n + 4294967296 : n) }
	/^dn: / { if (sid != "" && gid != "") print sid, u32(gid); sid = gid = "" }
	/^objectSid: / { sid = $2 }
	/^gidNumber: / { gid = $2 }
	END { if (sid != "" && gid != "") print sid, u32(gid) }' >"$T_TMP/group-gids"
dc_groups() {
	{
		ldbsearch -H "$SAM" -s base -b "CN=$1,CN=Users,$B" tokenGroups gidNumber \
			2>/dev/null | awk '/^tokenGroups: / { print "sid", $2 }
				/^gidNumber: / { print "gid", $2 }'
	} | awk 'FILENAME != "-" { g[$1] = $2; next }
		$1 == "sid" { n++; if ($2 in g) print g[$2] }
		$1 == "gid" { print $2 }
		END { if (!n) print "no-tokenGroups" }' "$T_TMP/group-gids" - | sort -u
}

# the lines of $1 on one line
oneline() { printf '%s\n' "$1" | tr '\n' ' ' | sed 's/ *$//'; }

# nfskeys's groups of USER@REALM with configuration CONF: one "GID" a line, sorted
# (the primary gid among them); its stderr in $T_TMP/nk.err
nk_groups() {
	echo "principal-to-ids $1@$REALM" | nk -c "$2" idmap query --no-cache 2>"$T_TMP/nk.err" |
		sed -n 's/.*"groups":\[\([0-9,]*\)\].*/\1/p' | tr ',' '\n' | sed '/^$/d' | sort -u
}

cat >"$T_TMP/tg.conf" <<EOF
[General]
Domain = nfskeys.test
Verbosity = notice
[Translation]
Method = ldap
[LDAP]
URI = ldap://dc1.nfskeys.test
Base = $B
Schema = ad
SASL-Mech = GSSAPI
Keytab = $SAMBA_AD_KEYTAB
EOF
sed 's/^Schema = ad$/Schema = ad\nGroup-Membership = member/' "$T_TMP/tg.conf" >"$T_TMP/member.conf"
# what the ldap backend did before: memberUid, which AD's groups here have none of
sed 's/^Schema = ad$/Schema = ad\nGroup-Membership = member-uid/' "$T_TMP/tg.conf" \
	>"$T_TMP/memberuid.conf"

plan 20

check_eq "the DC: alice's tokenGroups with a gidNumber (and hers) are staff, devs, eng, outer" \
	"20001 20010 20011 20012" "$(dc_groups alice | tr '\n' ' ' | sed 's/ $//')"
for conf in tg member; do
	for u in alice dave; do
		want=$(dc_groups $u)
		got=$(nk_groups $u "$T_TMP/$conf.conf")
		if [ -n "$got" ] && [ "$got" = "$want" ]; then
			ok "$conf: $u@$REALM's groups are the DC's tokenGroups with a gidNumber" \
				"($(oneline "$got"))"
		else
			not_ok "$conf: $u@$REALM's groups are the DC's tokenGroups with a gidNumber"
			diag "DC: $(oneline "$want")" "nfskeys: $(oneline "$got")"
			sed 's/^/# stderr: /' "$T_TMP/nk.err"
		fi
	done
done
# tokenGroups not readable: nested member instead, and a log says so
want=$(dc_groups erin)
got=$(nk_groups erin "$T_TMP/tg.conf")
check_eq "tg: erin@$REALM (tokenGroups denied): the DC's groups all the same, by member" \
	"$(oneline "$want")" "$(oneline "$got")"
check_contains "tg: erin@$REALM: the fallback is logged" \
	"the tokenGroups of erin@$REALM cannot be read: groups by nested member instead" \
	"$(cat "$T_TMP/nk.err")"
# several uncached lookups in one engine: the notice once; again after alice's tokenGroups
# were read in between
tg_notices() {
	for u; do echo "principal-to-ids $u@$REALM"; done |
		nk -c "$T_TMP/tg.conf" idmap query --no-cache >"$T_TMP/q.out" 2>"$T_TMP/q.err"
	echo "$(grep -c "the tokenGroups of erin@$REALM cannot be read" "$T_TMP/q.err")" \
		"notices, $(grep -c '"groups":\[[0-9]' "$T_TMP/q.out") answers"
}
check_eq "tg: erin@$REALM looked up 3 times: the fallback is logged once" \
	"1 notices, 3 answers" "$(tg_notices erin erin erin)"
check_eq "tg: erin, alice (tokenGroups read), erin, erin: logged again after alice, once" \
	"2 notices, 4 answers" "$(tg_notices erin alice erin erin)"
check_eq "member-uid (the directory's memberUid, none here): alice's primary gid alone" \
	20001 "$(nk_groups alice "$T_TMP/memberuid.conf" | tr '\n' ' ' | sed 's/ $//')"

# more groups than an answer holds: 64 (the primary among them), cut, and said
for conf in tg member; do
	got=$(nk_groups many "$T_TMP/$conf.conf")
	n=$(echo "$got" | grep -c .)
	bad=$(echo "$got" | awk '$1 != 20001 && ($1 < 21001 || $1 > 21070)')
	check_eq "$conf: many@$REALM (in 71 groups with a gid): 64 gids, all of them its groups" \
		"64 " "$n $bad"
	check_contains "$conf: the cut is logged, naming the user and the limit" \
		"many@$REALM is in more than 64 groups with a gidNumber: the list is cut there" \
		"$(cat "$T_TMP/nk.err")"
done

# winbind on the member, alice's token through its ad backend: her groups with an id
# of the domain's range (those without gidNumber get ids of the default domain, tdb
# 5000-9999, here: left out)
cat >"$T_TMP/wb.conf" <<EOF
	idmap config * : backend = tdb
	idmap config * : range = 5000-9999
	idmap config $SAMBA_AD_DOMAIN : backend = ad
	idmap config $SAMBA_AD_DOMAIN : schema_mode = rfc2307
	idmap config $SAMBA_AD_DOMAIN : range = 10000-3999999999
	idmap config $SAMBA_AD_DOMAIN : unix_primary_group = yes
EOF
if t_samba_winbind_start "$T_TMP/wb.conf"; then
	# (the SIDs of alice's token, then their gids.  unix_primary_group: her primary gid is
	# her gidNumber, as nfskeys's; without it winbind takes Domain Users', which has no
	# gidNumber, and then gives no token at all: NT_STATUS_NO_SUCH_USER)
	t_wbinfo --user-sids "$(t_samba_ad_sid alice)" >"$T_TMP/wb-token" 2>&1
	# shellcheck disable=SC2046
	wb=$(t_wbinfo_ids $(cat "$T_TMP/wb-token") 2>"$T_TMP/wb-ids.err" |
		awk '$3 != "unmapped" && ($3 >= 10000 || $3 < 5000) { print $3 }' | sort -u)
	[ -n "$wb" ] || sed 's/^/# wbinfo: /' "$T_TMP/wb-token" "$T_TMP/wb-ids.err"
	# the domain's SIDs, users and groups, for the sid backend below
	t_samba_ad_objects | awk -v d="$DOM-" 'index($1, d) == 1 && ($2 == "user" ||
		$2 == "group") { print $1 }' | sort >"$T_TMP/sids"
	# shellcheck disable=SC2046
	t_wbinfo_ids $(cat "$T_TMP/sids") | sort >"$T_TMP/wb-ids"
	t_samba_winbind_stop
	check_eq "winbind (wbinfo --user-sids, its gids) and nfskeys: alice's groups with a gid" \
		"$(oneline "$wb")" "$(nk_groups alice "$T_TMP/tg.conf" | tr '\n' ' ' | sed 's/ $//')"
else
	not_ok "winbindd did not start with the ad backend (log above)"
	: >"$T_TMP/wb-ids"
fi

# --- the sid backend's ad range, bound with the machine keytab (no AD-Bind-DN, no password
# file): each SID of the domain -> uid and gid, as winbind's ad backend answered
cat >"$T_TMP/sid.conf" <<EOF
[General]
Domain = nfskeys.test
[Translation]
Method = sid
[SID]
Auto-Domains = no
State-File = $T_TMP/sid.slices
$DOM = ad 10000 - 3999999999
AD-URI = ldap://dc1.nfskeys.test
AD-Base = $B
AD-SASL-Mech = GSSAPI
AD-Keytab = $SAMBA_AD_KEYTAB
EOF
# "SID UID GID" as t_wbinfo_ids prints them, "unmapped" for none
nk_sid_ids() {
	for kind in uid gid; do
		[ $kind = gid ] && g=--group || g=
		# shellcheck disable=SC2046,SC2086
		nk -c "$1" idmap sid $g $(cat "$T_TMP/sids") 2>"$T_TMP/sid-$kind.err" |
			awk '$2 == "->" { print $1, $3 }' >"$T_TMP/sid-$kind"
		sed -n 's/^nfskeys: idmap sid: \([^:]*\): no mapping.*/\1 unmapped/p' \
			"$T_TMP/sid-$kind.err" >>"$T_TMP/sid-$kind"
		grep -v ': no mapping (see' "$T_TMP/sid-$kind.err" | sed 's/^/# stderr: /' >&2
	done
	sort "$T_TMP/sid-uid" >"$T_TMP/sid-uid.s"
	sort "$T_TMP/sid-gid" >"$T_TMP/sid-gid.s"
	join "$T_TMP/sid-uid.s" "$T_TMP/sid-gid.s"
}
nk_sid_ids "$T_TMP/sid.conf" >"$T_TMP/nk-ids" 2>"$T_TMP/nk-ids.err"
n=$(wc -l <"$T_TMP/sids")
n_map=$(awk '$2 != "unmapped" || $3 != "unmapped"' "$T_TMP/nk-ids" | wc -l)
if [ "$n" -gt 0 ] && [ "$n_map" -gt 0 ] && [ -s "$T_TMP/wb-ids" ] &&
	cmp -s "$T_TMP/wb-ids" "$T_TMP/nk-ids"; then
	ok "sid ad over GSSAPI: the domain's $n SIDs map as winbind's ad backend ($n_map mapped)"
else
	not_ok "sid ad over GSSAPI: the domain's $n SIDs map as winbind's ad backend ($n_map mapped)"
	diag "SID winbind(uid gid) | nfskeys(uid gid)"
	diff "$T_TMP/wb-ids" "$T_TMP/nk-ids" | sed 's/^/#   /'
	sed 's/^/# /' "$T_TMP/nk-ids.err" | head -20
fi
check_eq "sid ad over GSSAPI: alice's SID -> uidNumber 10001, eng's -> gidNumber 20010" \
	"10001 20010" \
	"$(nk -c "$T_TMP/sid.conf" idmap sid "$(t_samba_ad_sid alice)" 2>&1 | awk '{ print $3 }') $(
		nk -c "$T_TMP/sid.conf" idmap sid --group \
			"$(ldbsearch -H "$SAM" '(sAMAccountName=eng)' objectSid |
				sed -n 's/^objectSid: //p')" 2>&1 | awk '{ print $3 }')"
# a principal the keytab has no key of: the error names both settings
sed "s/^AD-Keytab = .*/&\nAD-Principal = nosuch\$@$REALM/" "$T_TMP/sid.conf" >"$T_TMP/bad.conf"
out=$(nk -c "$T_TMP/bad.conf" idmap sid "$(t_samba_ad_sid alice)" 2>&1)
check_contains "AD-Principal not in AD-Keytab: the error names both" \
	"[SID] AD-Keytab FILE:$SAMBA_AD_KEYTAB has no key of [SID] AD-Principal nosuch\$@$REALM" \
	"$out"
# a password setting next to GSSAPI: refused, not silently one or the other
sed "s/^AD-Keytab = .*/&\nAD-Bind-DN = CN=Administrator,CN=Users,$B/" "$T_TMP/sid.conf" \
	>"$T_TMP/both.conf"
out=$(nk -c "$T_TMP/both.conf" idmap sid "$(t_samba_ad_sid alice)" 2>&1)
check_contains "AD-SASL-Mech = GSSAPI with AD-Bind-DN: refused, naming the keys" \
	"[SID] AD-SASL-Mech = GSSAPI binds as the keytab's principal: remove AD-Bind-DN" "$out"
check_eq "the environment's credential cache was neither needed nor written" "absent" \
	"$([ -e "$SAMBA_MEMBER_DIR/no-such-dir" ] && echo present || echo absent)"
