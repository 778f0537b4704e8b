#!/bin/sh
# nfskeys's SID -> uid/gid mapping against winbind's, on a real Samba AD domain (a DC and a
# member server running winbindd, tests/harness/samba-ad.sh).  For every user, computer
# and group of the DC, BUILTIN's groups, the well-known SIDs, Unix SIDs (S-1-22-1-N,
# S-1-22-2-N) and a domain the DC does not know, winbind's uid and gid under its rid
# backend (`wbinfo --sids-to-unix-ids`: what --sid-to-uid and --sid-to-gid answer, in one
# call) is compared with `nfskeys idmap sid [--group]` under the same fixed range in [SID]
# ("S-1-5-21-A-B-C = MIN - MAX").  Two ranges: one whose ids cross 2^31 (RID 1000 is id
# 2^31) and end at the highest RID of the test's accounts (the next RID is out of range in
# both), and an ordinary one.  Back the other way, the uids and gids of the range (and the
# ids next to it) to SIDs: `wbinfo --unix-ids-to-sids` against `nfskeys idmap sid
# [--group] ID`.
# Not compared, and said so (SKIP): the SIDs winbind maps through its default backend
# (tdb: ids handed out in order of first use; nfskeys maps no well-known SID), ids outside
# every range (nfskeys answers Samba's Unix SIDs S-1-22-1-N and S-1-22-2-N, as smbd does;
# winbind only those it has met), and the autorid and ad backends, which nfskeys has no
# equivalent of yet: what winbind answers under them is printed.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/samba-ad.sh"

t0=$(date +%s)
t_samba_ad_start || fail_all "the Samba DC did not start (log above)"
t1=$(date +%s)
t_samba_member_join || fail_all "net ads join of the member failed (log above)"
plan 13
diag "DC up in $((t1 - t0)) s, member joined in $(($(date +%s) - t1)) s"
DOM=$SAMBA_AD_SID

# The SIDs: "SID KIND NAME"
{
	t_samba_ad_objects
	for s in S-1-1-0 S-1-5-2 S-1-5-18; do echo "$s wellknown $s"; done
	echo "S-1-22-1-1234 unix Unix user 1234"
	echo "S-1-22-2-1234 unix Unix group 1234"
	echo "S-1-22-1-3000000000 unix Unix user 3000000000"
	echo "S-1-5-21-1-2-3-1000 foreign a domain nobody knows"
} >"$T_TMP/sids"
n_sids=$(wc -l <"$T_TMP/sids")
n_dom=$(grep -c "^$DOM-" "$T_TMP/sids")
diag "$n_sids SIDs, $n_dom of them the domain's ($DOM)"

# nfskeys's SIDs for ids (uid, or gid with --group): "ID SID" lines, "ID unmapped"
nk_sids() {
	_conf=$1
	shift
	"$NFSKEYS" -c "$_conf" idmap sid "$@" 2>"$T_TMP/nk.err" | awk '$2 == "->" { print $1, $3 }'
	sed -n 's/^nfskeys: idmap sid: \([^:]*\): no mapping.*/\1 unmapped/p' "$T_TMP/nk.err"
	grep -v ': no mapping (see' "$T_TMP/nk.err" >&2
}

# nfskeys's answers for every SID, one kind (uid, or gid with --group): "SID ID" lines,
# "SID unmapped" for those it has no mapping for
nk_ids() {
	_conf=$1
	shift
	# shellcheck disable=SC2046
	"$NFSKEYS" -c "$_conf" idmap sid "$@" $(awk '{ print $1 }' "$T_TMP/sids") 2>"$T_TMP/nk.err" |
		awk '$2 == "->" { print $1, $3 }'
	sed -n 's/^nfskeys: idmap sid: \([^:]*\): no mapping.*/\1 unmapped/p' "$T_TMP/nk.err"
	# anything else on stderr is an error the comparison must not hide
	grep -v ': no mapping (see' "$T_TMP/nk.err" >&2
}

# One rid run: winbind's rid backend and nfskeys's [SID] range LOW-HIGH.  Writes
# $T_TMP/NAME.table: "SID KIND WB_UID NK_UID WB_GID NK_GID".
rid_run() {
	name=$1 low=$2 high=$3
	cat >"$T_TMP/$name.wb" <<EOF
	idmap config * : backend = tdb
	idmap config * : range = 5000-9999
	idmap config $SAMBA_AD_DOMAIN : backend = rid
	idmap config $SAMBA_AD_DOMAIN : range = $low-$high
EOF
	cat >"$T_TMP/$name.conf" <<EOF
[General]
Domain = nfskeys.test
[Translation]
Method = sid
[SID]
Auto-Domains = no
State-File = $T_TMP/$name.slices
$DOM = $low - $high
EOF
	_t0=$(date +%s)
	t_samba_winbind_start "$T_TMP/$name.wb" ||
		fail_all "winbindd did not start with the rid backend"
	_t1=$(date +%s)
	nk_ids "$T_TMP/$name.conf" >"$T_TMP/$name.nk-uid"
	nk_ids "$T_TMP/$name.conf" --group >"$T_TMP/$name.nk-gid"
	# shellcheck disable=SC2046
	t_wbinfo_ids $(awk '{ print $1 }' "$T_TMP/sids") >"$T_TMP/$name.wb-ids"
	awk 'FILENAME ~ /nk-uid$/ { nu[$1] = $2; next }
	     FILENAME ~ /nk-gid$/ { ng[$1] = $2; next }
	     FILENAME ~ /wb-ids$/ { wu[$1] = $2; wg[$1] = $3; next }
	     { print $1, $2, wu[$1], nu[$1], wg[$1], ng[$1] }' \
		"$T_TMP/$name.nk-uid" "$T_TMP/$name.nk-gid" "$T_TMP/$name.wb-ids" "$T_TMP/sids" \
		>"$T_TMP/$name.table"
	# back: the ids winbind gave the domain's SIDs, and the ids just outside the range
	ids=$( (awk '$3 ~ /^[0-9]+$/ { print $3 }' "$T_TMP/$name.table"
		echo $((low - 1)) $((high + 1))) | tr ' ' '\n' | sort -nu)
	# shellcheck disable=SC2086
	{
		t_wbinfo_sids $(for i in $ids; do echo "u$i"; done)
		t_wbinfo_sids $(for i in $ids; do echo "g$i"; done)
	} | sort >"$T_TMP/$name.wb-sids"
	# shellcheck disable=SC2086
	{
		nk_sids "$T_TMP/$name.conf" $ids | sed 's/^/u/'
		nk_sids "$T_TMP/$name.conf" --group $ids | sed 's/^/g/'
	} | sort >"$T_TMP/$name.nk-sids"
	join "$T_TMP/$name.wb-sids" "$T_TMP/$name.nk-sids" >"$T_TMP/$name.back"
	_t2=$(date +%s)
	t_samba_winbind_stop
	diag "$name: winbindd up in $((_t1 - _t0)) s, lookups $((_t2 - _t1)) s, \
stopped in $(($(date +%s) - _t2)) s"
}

# check_agree DESCRIPTION FILTER(awk condition on the table's fields)
check_agree() {
	awk "$2" "$T_TMP/$name.table" >"$T_TMP/sel"
	n=$(wc -l <"$T_TMP/sel")
	awk '$3 != $4 || $5 != $6' "$T_TMP/sel" >"$T_TMP/diff"
	if [ "$n" -gt 0 ] && [ ! -s "$T_TMP/diff" ]; then
		ok "$name: $1 ($n SIDs, uid and gid)"
	else
		not_ok "$name: $1 ($n SIDs, uid and gid)"
		diag "SID KIND winbind-uid nfskeys-uid winbind-gid nfskeys-gid"
		sed 's/^/# /' "$T_TMP/diff"
	fi
}

# ids -> SIDs: those of the range agree; outside every range nfskeys answers Samba's Unix
# SIDs (what smbd gives such ids), winbind none
check_back() {
	awk -v l="$low" -v h="$high" '{ i = substr($1, 2) + 0 } i >= l && i <= h' \
		"$T_TMP/$name.back" >"$T_TMP/sel"
	n=$(wc -l <"$T_TMP/sel")
	awk '$2 != $3' "$T_TMP/sel" >"$T_TMP/diff"
	if [ "$n" -gt 0 ] && [ ! -s "$T_TMP/diff" ]; then
		ok "$name: uids and gids of the range -> the same SIDs ($n ids)"
	else
		not_ok "$name: uids and gids of the range -> the same SIDs ($n ids)"
		diag "ID winbind-SID nfskeys-SID"
		sed 's/^/# /' "$T_TMP/diff"
	fi
	awk -v l="$low" -v h="$high" '{ i = substr($1, 2) + 0 } i < l || i > h' "$T_TMP/$name.back" |
		sed 's/^/# outside the range: ID winbind nfskeys: /'
	diag "$name: not compared: ids outside the range (nfskeys gives Samba's Unix SIDs" \
		"S-1-22-1-ID and S-1-22-2-ID, as smbd does; winbind none)"
}

# the SIDs winbind maps through its default backend (ids 5000-9999 handed out in order)
report_allocated() {
	awk 'function alloc(v) { return v ~ /^[0-9]+$/ && v >= 5000 && v <= 9999 }
	     alloc($3) || alloc($5)' "$T_TMP/$name.table" >"$T_TMP/$name.alloc"
	diag "$name: winbind's default backend (tdb, in order of first use) gave these; \
nfskeys: unmapped"
	awk '{ print "# ", $1, "uid", $3, "gid", $5, "nfskeys", $4, $6 }' "$T_TMP/$name.alloc"
	diag "$name: not compared: $(wc -l <"$T_TMP/$name.alloc") well-known SIDs (nfskeys maps" \
		"no well-known SID; winbind allocates them from its default range)"
}

# Crossing 2^31: RID 1000 (the DC's own account) is 2147483648; the range ends at the
# highest RID of the accounts the test made, so the next RID (the member's, joined later)
# is out of range for both.
last_rid=$(awk '{ n = split($3, a, "-"); if (a[n] > m) m = a[n] } END { print m }' \
	"$SAMBA_AD_ACCOUNTS")
name=rid-2g
rid_run "$name" 2147482648 $((2147482648 + last_rid))
check_agree "the domain's users" "\$2 == \"user\" && \$1 ~ /^$DOM-/"
check_agree "the domain's groups" "\$2 == \"group\" && \$1 ~ /^$DOM-/"
check_eq "$name: RID 1000 is 2^31 for both" \
	"$DOM-1000 user 2147483648 2147483648 2147483648 2147483648" \
	"$(grep "^$DOM-1000 " "$T_TMP/$name.table")"
end=$((2147482648 + last_rid))
check_eq "$name: the last RID of the range ($DOM-$last_rid) is its end, $end, for both" \
	"$end $end $end $end" \
	"$(awk -v s="$DOM-$last_rid" '$1 == s { print $3, $4, $5, $6 }' "$T_TMP/$name.table")"
check_eq "$name: the RIDs past the range (the member's account): unmapped for both" \
	"unmapped unmapped unmapped unmapped" \
	"$(awk -v d="$DOM-" -v l="$last_rid" '
		index($1, d) == 1 && substr($1, length(d) + 1) + 0 > l { print $3, $4, $5, $6 }' \
		"$T_TMP/$name.table" | sort -u)"
check_agree "BUILTIN, Unix and unknown-domain SIDs" \
	"\$1 ~ /^S-1-5-32-/ || \$2 == \"unix\" || \$2 == \"foreign\""
check_back
report_allocated

name=rid-100k
rid_run "$name" 100000 199999
check_agree "the domain's users and computers" "\$2 == \"user\" && \$1 ~ /^$DOM-/"
check_agree "the domain's groups" "\$2 == \"group\" && \$1 ~ /^$DOM-/"
check_agree "BUILTIN, Unix and unknown-domain SIDs" \
	"\$1 ~ /^S-1-5-32-/ || \$2 == \"unix\" || \$2 == \"foreign\""
check_back
report_allocated

# autorid and ad: winbind's answers for the domain's accounts, for the record.
for b in autorid ad; do
	if [ $b = autorid ]; then
		cat >"$T_TMP/$b.wb" <<EOF
	idmap config * : backend = autorid
	idmap config * : range = 1000000-19999999
	idmap config * : rangesize = 1000000
EOF
	else
		# ad's range takes in uidNumber 10001 and the 3000000000 the DC stores as -1294967296
		cat >"$T_TMP/$b.wb" <<EOF
	idmap config * : backend = tdb
	idmap config * : range = 5000-9999
	idmap config $SAMBA_AD_DOMAIN : backend = ad
	idmap config $SAMBA_AD_DOMAIN : schema_mode = rfc2307
	idmap config $SAMBA_AD_DOMAIN : range = 10000-3999999999
EOF
	fi
	t_samba_winbind_start "$T_TMP/$b.wb" || fail_all "winbindd did not start with the $b backend"
	# shellcheck disable=SC2046
	t_wbinfo_ids $(awk '{ print $3 }' "$SAMBA_AD_ACCOUNTS") "$DOM-500" "$DOM-513" \
		S-1-1-0 S-1-5-11 >"$T_TMP/$b.wb-ids"
	awk 'FILENAME ~ /wb-ids$/ { u[$1] = $2; g[$1] = $3; next }
	     { print $1, $2, $3, "uidNumber=" $4, "gidNumber=" $5, "winbind: uid", u[$3],
		     "gid", g[$3]; seen[$3] = 1 }
	     END { for (s in u) if (!(s in seen)) print s, "winbind: uid", u[s], "gid", g[s] }' \
		"$T_TMP/$b.wb-ids" "$SAMBA_AD_ACCOUNTS" >"$T_TMP/$b.table"
	t_samba_winbind_stop
	diag "$b: winbind's answers"
	sed 's/^/#   /' "$T_TMP/$b.table"
done
# the reference itself works: autorid's first domain range follows the one it keeps for
# the default domain, and ad answers alice's uidNumber
alice=$(t_samba_ad_sid alice)
check_eq "reference: autorid maps alice (RID ${alice##*-}) to 2000000 + RID" \
	"uid $((2000000 + ${alice##*-}))" \
	"$(grep "^alice " "$T_TMP/autorid.table" | awk '{ print $7, $8 }')"
check_eq "reference: ad maps alice to her uidNumber" \
	"uid 10001" "$(grep "^alice " "$T_TMP/ad.table" | awk '{ print $7, $8 }')"
diag "not compared: autorid (nfskeys has no autorid backend yet; winbind's answers above)"
diag "not compared: ad (nfskeys has no backend reading uidNumber/gidNumber by objectSid" \
	"yet; winbind's answers above)"
