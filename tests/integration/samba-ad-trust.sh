#!/bin/sh
# nfskeys's SID -> uid/gid mapping against winbind's over two AD domains: the member of
# the first (NFSKEYS, tests/harness/samba-ad.sh) maps the accounts of a second (TRUST,
# its own DC and realm, tests/harness/samba-trust.sh) through a two-way forest trust.
# The SIDs: every user, computer and group of both DCs in their domains, and RIDs no
# account has (one in each domain's first range, others past it).  Both ways, as in
# samba-idmap-parity.sh: `wbinfo --sids-to-unix-ids` against `nfskeys idmap sid
# [--group]`, and the ids back (`wbinfo --unix-ids-to-sids` against `nfskeys idmap sid
# [--group] ID`).
# rid: "idmap config DOMAIN : backend = rid" with a range per domain against one
# "S-1-5-21-A-B-C = MIN - MAX" line per domain.
# autorid: "idmap config * : backend = autorid" against [SID] Algorithm = autorid: the
# ranges go to the domains in order of first use, so both sides meet them in one fixed
# order that is not the order of the domains' names or SIDs: TRUST first, then NFSKEYS,
# then RIDs past the first ranges ("DOMAIN#N"), NFSKEYS's before TRUST's (nfskeys:
# Auto-Domains, Domains unset, the same order of first use).
# ad: the first domain's rid range, the second's ids from its directory: winbind's
# idmap_ad (schema_mode rfc2307) for it against nfskeys's "S-1-5-21-A-B-C = ad MIN - MAX"
# reading the second DC (simple bind as its administrator, the password from the 0600
# file).
# ad + ad: both domains' ids from their own directories, winbind's idmap_ad for each
# against two ad ranges, the second's directory in its own S-1-5-21-A-B-C.AD-URI,
# .AD-Base, .AD-Bind-DN and .AD-Bind-Password-File.
# ad + ad over GSSAPI: the same with no password: AD-SASL-Mech = GSSAPI and the member's
# machine keytab (NFSKEYS's realm); dc2 is read with the cross-realm ticket of the trust.
# rid + autorid: the first domain with its own rid range, the second through autorid
# ("*"): nfskeys's fixed range next to Algorithm = autorid.
# The first does not compare BUILTIN, well-known or Unix SIDs (samba-idmap-parity.sh does).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/samba-ad.sh"
. "$top_srcdir/tests/harness/samba-trust.sh"

t0=$(date +%s)
t_samba_ad_start || fail_all "the Samba DC did not start (log above)"
t_samba_member_join || fail_all "net ads join of the member failed (log above)"
t1=$(date +%s)
if ! t_samba_trust_start; then
	# a machine where the second DC or the trust cannot be made: say exactly what failed
	printf '%s\n' "$SAMBA_TRUST_ERR" | sed 's/^/# /'
	skip_all "no second domain with a trust here: $(printf '%s\n' "$SAMBA_TRUST_ERR" |
		head -n 1)"
fi
plan 42
diag "DC and member up in $((t1 - t0)) s, second DC and trust in $(($(date +%s) - t1)) s"
D1=$SAMBA_AD_SID D2=$SAMBA_TRUST_SID
N1=$SAMBA_AD_DOMAIN N2=$SAMBA_TRUST_DOMAIN

# The SIDs: "SID KIND NAME", the accounts of each domain only
{
	t_samba_ad_objects | grep "^$D1-"
	t_samba_trust_objects | grep "^$D2-"
	for d in "$D1" "$D2"; do
		echo "$d-4321 norid a RID no account has"
		echo "$d-1000123 norid a RID no account has, past the first range"
		echo "$d-2000077 norid a RID no account has, two ranges on"
	done
} >"$T_TMP/sids"
n1=$(grep -c "^$D1-" "$T_TMP/sids")
n2=$(grep -c "^$D2-" "$T_TMP/sids")
diag "$((n1 + n2)) SIDs: $n1 of $N1 ($D1), $n2 of $N2 ($D2)"

# nfskeys runs in the DCs' network namespace for the ad run (NK_RUN=t_samba_ad_net)
NK_RUN=''

# nfskeys's ids for the SIDs given, one kind (uid, or gid with --group): "SID ID" lines,
# "SID unmapped"; anything else on stderr is an error the comparison must not hide
nk_run() {
	_conf=$1
	shift
	$NK_RUN "$NFSKEYS" -c "$_conf" idmap sid "$@" 2>"$T_TMP/nk.err" |
		awk '$2 == "->" { print $1, $3 }'
	sed -n 's/^nfskeys: idmap sid: \([^:]*\): no mapping.*/\1 unmapped/p' "$T_TMP/nk.err"
	grep -v ': no mapping (see' "$T_TMP/nk.err" >&2
}

# One comparison: winbind with the "idmap config" lines of $T_TMP/$name.wb, nfskeys with
# $T_TMP/$name.conf.  The SIDs of $SEED first, one at a time and in order, on both sides
# (uid then gid, as winbind answers both at once); then every SID, winbind one at a time.
# Writes $T_TMP/$name.table "SID KIND WB_UID NK_UID WB_GID NK_GID" and, for every id
# either side gave and $EXTRA_IDS, $T_TMP/$name.back "uID WB_SID NK_SID", "gID ...".
cmp_run() {
	_t0=$(date +%s)
	t_samba_winbind_start "$T_TMP/$name.wb" || fail_all "winbindd did not start for $name"
	_t1=$(date +%s)
	# winbind knows the second domain's names through the trust
	check_eq "$name: winbind finds carol of $N2 through the trust" \
		"$(awk '$1 == "carol" { print $3 }' "$SAMBA_TRUST_ACCOUNTS") SID_USER (1)" \
		"$(t_wbinfo -n "$N2\\carol")"
	# winbind's idmap_ad finds the second domain's DC only in the cache of DC
	# lookups (DOMAIN_CONTROLLER_NOT_FOUND otherwise): one, as a session would make
	[ -z "$WB_DCLOOKUP" ] || t_wbinfo --dsgetdcname="$WB_DCLOOKUP" >/dev/null ||
		diag "$name: wbinfo --dsgetdcname=$WB_DCLOOKUP failed"
	for _s in $SEED; do
		t_wbinfo_ids "$_s" >/dev/null
		nk_run "$T_TMP/$name.conf" "$_s" >/dev/null
		nk_run "$T_TMP/$name.conf" --group "$_s" >/dev/null
	done
	# shellcheck disable=SC2046
	nk_run "$T_TMP/$name.conf" $(awk '{ print $1 }' "$T_TMP/sids") >"$T_TMP/$name.nk-uid"
	# shellcheck disable=SC2046
	nk_run "$T_TMP/$name.conf" --group $(awk '{ print $1 }' "$T_TMP/sids") \
		>"$T_TMP/$name.nk-gid"
	for _s in $(awk '{ print $1 }' "$T_TMP/sids"); do t_wbinfo_ids "$_s"; done \
		>"$T_TMP/$name.wb-ids"
	awk 'FILENAME ~ /nk-uid$/ { nu[$1] = $2; next }
	     FILENAME ~ /nk-gid$/ { ng[$1] = $2; next }
	     FILENAME ~ /wb-ids$/ { wu[$1] = $2; wg[$1] = $3; next }
	     { print $1, $2, wu[$1], nu[$1], wg[$1], ng[$1] }' \
		"$T_TMP/$name.nk-uid" "$T_TMP/$name.nk-gid" "$T_TMP/$name.wb-ids" "$T_TMP/sids" \
		>"$T_TMP/$name.table"
	ids=$( (awk '{ for (i = 3; i <= 6; i++) if ($i ~ /^[0-9]+$/) print $i }' \
		"$T_TMP/$name.table"
		echo "$EXTRA_IDS") | tr ' ' '\n' | sort -nu)
	# (winbind fails a batch with one id it cannot map: one at a time)
	for i in $ids; do
		t_wbinfo_sids "u$i" 2>/dev/null || echo "u$i unmapped"
		t_wbinfo_sids "g$i" 2>/dev/null || echo "g$i unmapped"
	done | sort >"$T_TMP/$name.wb-sids"
	# shellcheck disable=SC2086
	{
		nk_run "$T_TMP/$name.conf" $ids | sed 's/^/u/'
		nk_run "$T_TMP/$name.conf" --group $ids | sed 's/^/g/'
	} | sort >"$T_TMP/$name.nk-sids"
	# a Unix SID (nfskeys's answer, and winbind's at times, for an id nothing maps) is
	# unmapped
	join "$T_TMP/$name.wb-sids" "$T_TMP/$name.nk-sids" |
		awk '{ for (k = 2; k <= 3; k++) if ($k ~ /^S-1-22-[12]-/) $k = "unmapped"; print }' \
		>"$T_TMP/$name.back"
	_t2=$(date +%s)
	t_samba_winbind_stop
	diag "$name: winbindd up in $((_t1 - _t0)) s, lookups $((_t2 - _t1)) s"
}

# The head of a run's nfskeys configuration: the sid method, no automatic domains, the
# state file $T_TMP/$1.slices; the run's ranges and keys follow
sid_conf() {
	printf '[General]\nDomain = nfskeys.test\n[Translation]\nMethod = sid\n[SID]\n'
	printf 'Auto-Domains = no\nState-File = %s\n' "$T_TMP/$1.slices"
}

# check_agree DESCRIPTION FILTER (an awk condition on the table's fields): the same
# answers, and winbind maps some of them unless ALL_UNMAPPED is set
ALL_UNMAPPED=''
check_agree() {
	awk "$2" "$T_TMP/$name.table" >"$T_TMP/sel"
	n=$(wc -l <"$T_TMP/sel")
	m=$(awk '$3 != "unmapped" || $5 != "unmapped"' "$T_TMP/sel" | wc -l)
	# (an answer missing on either side is a difference too)
	awk 'function bad(v) { return v !~ /^([0-9]+|unmapped)$/ }
	     $3 != $4 || $5 != $6 || bad($3) || bad($4) || bad($5) || bad($6)' \
		"$T_TMP/sel" >"$T_TMP/diff"
	if { [ "$m" -gt 0 ] || { [ -n "$ALL_UNMAPPED" ] && [ "$n" -gt 0 ]; }; } &&
		[ ! -s "$T_TMP/diff" ]; then
		ok "$name: $1 ($n SIDs, $m mapped, uid and gid)"
	else
		not_ok "$name: $1 ($n SIDs, $m mapped, uid and gid)"
		diag "SID KIND winbind-uid nfskeys-uid winbind-gid nfskeys-gid"
		sed 's/^/# /' "$T_TMP/diff"
	fi
}

# the ids back to SIDs
check_back() {
	n=$(wc -l <"$T_TMP/$name.back")
	m=$(awk '$2 != "unmapped"' "$T_TMP/$name.back" | wc -l)
	awk '$2 != $3 || $2 !~ /^(S-1-[0-9-]+|unmapped)$/' "$T_TMP/$name.back" >"$T_TMP/diff"
	if [ "$m" -gt 0 ] && [ ! -s "$T_TMP/diff" ]; then
		ok "$name: the ids back -> the same SIDs ($n ids, $m mapped)"
	else
		not_ok "$name: the ids back -> the same SIDs ($n ids, $m mapped)"
		diag "ID winbind-SID nfskeys-SID"
		sed 's/^/# /' "$T_TMP/diff"
	fi
}

# the four kinds of both domains; $1 "no-norid": no RID of no account is mapped (no
# rid range)
check_domains() {
	_norid=${1:-}
	for _d in "$D1 $N1" "$D2 $N2"; do
		# shellcheck disable=SC2086
		set -- $_d
		check_agree "$2's users and computers" "\$2 == \"user\" && index(\$1, \"$1-\") == 1"
		check_agree "$2's groups" "\$2 == \"group\" && index(\$1, \"$1-\") == 1"
	done
	[ "$_norid" = no-norid ] && ALL_UNMAPPED=1
	check_agree "RIDs of no account, both domains" "\$2 == \"norid\""
	ALL_UNMAPPED=''
}

# the uid winbind gives SID $1 in the last table
wb_uid() {
	awk -v s="$1" '$1 == s { print $3 }' "$T_TMP/$name.table"
}

# rid: a range per domain
name=rid
cat >"$T_TMP/$name.wb" <<EOF
	idmap config * : backend = tdb
	idmap config * : range = 5000-9999
	idmap config $N1 : backend = rid
	idmap config $N1 : range = 100000-1099999
	idmap config $N2 : backend = rid
	idmap config $N2 : range = 2000000-2999999
EOF
{
	sid_conf "$name"
	cat <<EOF
$D1 = 100000 - 1099999
$D2 = rid 2000000 - 2999999
EOF
} >"$T_TMP/$name.conf"
SEED='' WB_DCLOOKUP=''
EXTRA_IDS="99999 100000 1099999 1100000 1999999 2000000 2999999 3000000"
cmp_run
check_domains
check_back
check_eq "$name: $N2's RID 500 is 2000500, $N1's 100500, for winbind" \
	"2000500 100500" "$(wb_uid "$D2-500") $(wb_uid "$D1-500")"

# autorid over both domains: ranges of 1000000 from 1000000 (range 0 the pool)
name=autorid
cat >"$T_TMP/$name.wb" <<EOF
	idmap config * : backend = autorid
	idmap config * : range = 1000000-19999999
	idmap config * : rangesize = 1000000
EOF
cat >"$T_TMP/$name.conf" <<EOF
[General]
Domain = nfskeys.test
[Translation]
Method = sid
[SID]
Algorithm = autorid
Range-Min = 1000000
Range-Max = 19999999
Range-Size = 1000000
State-File = $T_TMP/$name.state
EOF
SEED="$D2-500 $D1-500 $D1-1000123 $D2-1000123 $D2-2000077 $D1-2000077"
EXTRA_IDS=$(for k in 0 1 2 3 4 5 6 7; do
	echo $((1000000 + k * 1000000 - 1)) $((1000000 + k * 1000000))
done)
cmp_run
check_domains
check_back
# range 1 TRUST, 2 NFSKEYS, 3 NFSKEYS#1, 4 TRUST#1, 5 TRUST#2, 6 NFSKEYS#2
check_eq "$name: the ranges in order of first use, $N2 before $N1, for winbind" \
	"2000500 3000500 4000123 5000123 6000077 7000077" \
	"$(wb_uid "$D2-500") $(wb_uid "$D1-500") $(wb_uid "$D1-1000123") \
$(wb_uid "$D2-1000123") $(wb_uid "$D2-2000077") $(wb_uid "$D1-2000077")"

# the first domain with a rid range of its own, the second through autorid
name=rid-autorid
cat >"$T_TMP/$name.wb" <<EOF
	idmap config * : backend = autorid
	idmap config * : range = 1000000-19999999
	idmap config * : rangesize = 1000000
	idmap config $N1 : backend = rid
	idmap config $N1 : range = 100000-999999
EOF
cat >"$T_TMP/$name.conf" <<EOF
[General]
Domain = nfskeys.test
[Translation]
Method = sid
[SID]
Algorithm = autorid
Range-Min = 1000000
Range-Max = 19999999
Range-Size = 1000000
State-File = $T_TMP/$name.state
$D1 = 100000 - 999999
EOF
SEED="$D2-500 $D2-2000077"
EXTRA_IDS="99999 100000 999999 1000000 1999999 2000000 2999999 3000000 3999999 4000000"
cmp_run
check_domains
check_back
# the first domain rid, the second ad
name=ad
cat >"$T_TMP/$name.wb" <<EOF
	idmap config * : backend = tdb
	idmap config * : range = 5000-9999
	idmap config $N1 : backend = rid
	idmap config $N1 : range = 100000-1099999
	idmap config $N2 : backend = ad
	idmap config $N2 : schema_mode = rfc2307
	idmap config $N2 : range = 10000-99999
EOF
{
	sid_conf "$name"
	cat <<EOF
$D1 = 100000 - 1099999
$D2 = ad 10000 - 99999
AD-URI = ldap://$SAMBA_TRUST_IP
AD-Base = $SAMBA_TRUST_BASEDN
AD-Bind-DN = CN=Administrator,CN=Users,$SAMBA_TRUST_BASEDN
AD-Bind-Password-File = $SAMBA_TRUST_DIR/adminpw
# plain LDAP inside the test's own network namespace
AD-Allow-Cleartext-Bind = yes
EOF
} >"$T_TMP/$name.conf"
SEED='' WB_DCLOOKUP=$SAMBA_TRUST_REALM NK_RUN=t_samba_ad_net
# both domains' uidNumber/gidNumber values, and the ends of the ranges
EXTRA_IDS="9999 10000 10001 20001 30002 40002 99999 100000 1099999 1100000"
cmp_run
NK_RUN='' WB_DCLOOKUP=''
check_domains
check_back
check_eq "$name: carol's uid is her uidNumber, tstaff's gid its gidNumber, for both" \
	"30002 30002 40002 40002" \
	"$(awk -v a="$(awk '$1 == "carol" { print $3 }' "$SAMBA_TRUST_ACCOUNTS")" \
		-v s="$(awk '$1 == "tstaff" { print $3 }' "$SAMBA_TRUST_ACCOUNTS")" '
		$1 == a { u = $3 " " $4 } $1 == s { g = $5 " " $6 } END { print u, g }' \
		"$T_TMP/$name.table")"
# both domains ad, each its own directory (their ids do not overlap: 10001 and 20001 in
# the first, 30002 and 40002 in the second)
name=ad-ad
cat >"$T_TMP/$name.wb" <<EOF
	idmap config * : backend = tdb
	idmap config * : range = 5000-9999
	idmap config $N1 : backend = ad
	idmap config $N1 : schema_mode = rfc2307
	idmap config $N1 : range = 10000-29999
	idmap config $N2 : backend = ad
	idmap config $N2 : schema_mode = rfc2307
	idmap config $N2 : range = 30000-49999
EOF
{
	sid_conf "$name"
	cat <<EOF
$D1 = ad 10000 - 29999
$D2 = ad 30000 - 49999
AD-URI = $SAMBA_AD_URI
AD-Base = $SAMBA_AD_BASEDN
AD-Bind-DN = CN=Administrator,CN=Users,$SAMBA_AD_BASEDN
AD-Bind-Password-File = $SAMBA_AD_ADMINPW_FILE
AD-Allow-Cleartext-Bind = yes
$D2.AD-URI = ldap://$SAMBA_TRUST_IP
$D2.AD-Base = $SAMBA_TRUST_BASEDN
$D2.AD-Bind-DN = CN=Administrator,CN=Users,$SAMBA_TRUST_BASEDN
$D2.AD-Bind-Password-File = $SAMBA_TRUST_DIR/adminpw
EOF
} >"$T_TMP/$name.conf"
SEED='' WB_DCLOOKUP=$SAMBA_TRUST_REALM NK_RUN=t_samba_ad_net
EXTRA_IDS="9999 10000 10001 20001 29999 30000 30002 40002 49999 50000"
cmp_run
NK_RUN='' WB_DCLOOKUP=''
check_domains no-norid
check_back
check_eq "$name: alice 10001, staff 20001, carol 30002, tstaff 40002, for both" \
	"10001 10001 20001 20001 30002 30002 40002 40002" \
	"$(awk -v a="$(t_samba_ad_sid alice)" -v s="$(t_samba_ad_sid staff)" \
		-v c="$(awk '$1 == "carol" { print $3 }' "$SAMBA_TRUST_ACCOUNTS")" \
		-v t="$(awk '$1 == "tstaff" { print $3 }' "$SAMBA_TRUST_ACCOUNTS")" '
		$1 == a { x = $3 " " $4 } $1 == s { y = $5 " " $6 }
		$1 == c { z = $3 " " $4 } $1 == t { w = $5 " " $6 }
		END { print x, y, z, w }' "$T_TMP/$name.table")"

# --- ad + ad over GSSAPI: the same two directories read with the member's machine keytab
# (a principal of the first realm), the second DC through the trust's cross-realm ticket;
# every SID as winbind's idmap_ad answered in the run above
adtable="$T_TMP/$name.table"
name=ad-ad-gssapi
t_samba_ad_gss_keytab "$T_TMP/member.keytab" || fail_all "no machine keytab (log above)"
t_samba_trust_gss_spn || fail_all "cannot register dc2's LDAP principal (log above)"
{
	sid_conf "gss"
	cat <<EOF
$D1 = ad 10000 - 29999
$D2 = ad 30000 - 49999
AD-URI = ldap://dc1.nfskeys.test
AD-Base = $SAMBA_AD_BASEDN
AD-SASL-Mech = GSSAPI
AD-Keytab = $SAMBA_AD_KEYTAB
$D2.AD-URI = ldap://dc2.trust.test
$D2.AD-Base = $SAMBA_TRUST_BASEDN
EOF
} >"$T_TMP/gss.conf"
NK_RUN=t_samba_member_run
# shellcheck disable=SC2046
nk_run "$T_TMP/gss.conf" $(awk '{ print $1 }' "$T_TMP/sids") >"$T_TMP/gss.nk-uid"
# shellcheck disable=SC2046
nk_run "$T_TMP/gss.conf" --group $(awk '{ print $1 }' "$T_TMP/sids") >"$T_TMP/gss.nk-gid"
NK_RUN=''
awk 'FILENAME ~ /nk-uid$/ { nu[$1] = $2; next }
     FILENAME ~ /nk-gid$/ { ng[$1] = $2; next }
     { print $1, $2, $3, nu[$1], $5, ng[$1] }' \
	"$T_TMP/gss.nk-uid" "$T_TMP/gss.nk-gid" "$adtable" >"$T_TMP/$name.table"
check_agree "$N1's SIDs with the machine keytab, as winbind's idmap_ad" "\$1 ~ /^$D1-/"
check_agree "$N2's SIDs through the trust's tickets, as winbind's idmap_ad" "\$1 ~ /^$D2-/"
check_eq "$name: carol 30002 and tstaff 40002 from dc2" "30002 40002" \
	"$(awk -v c="$(awk '$1 == "carol" { print $3 }' "$SAMBA_TRUST_ACCOUNTS")" \
		-v t="$(awk '$1 == "tstaff" { print $3 }' "$SAMBA_TRUST_ACCOUNTS")" '
		$1 == c { z = $4 } $1 == t { w = $6 } END { print z, w }' "$T_TMP/$name.table")"
diag "done in $(($(date +%s) - t0)) s"
