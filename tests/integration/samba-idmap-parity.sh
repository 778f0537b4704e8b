#!/bin/sh
# nfskeys's SID -> uid/gid mapping against winbind's, on a real Samba AD domain (a DC and a
# member server running winbindd, tests/harness/samba-ad.sh).  For every user, computer
# and group of the DC, BUILTIN's groups, the well-known SIDs, Unix SIDs (S-1-22-1-N,
# S-1-22-2-N), a domain the DC does not know and two RIDs of the domain no account has,
# winbind's uid and gid under its rid
# backend (`wbinfo --sids-to-unix-ids`: what --sid-to-uid and --sid-to-gid answer, in one
# call) is compared with `nfskeys idmap sid [--group]` under the same fixed range in [SID]
# ("S-1-5-21-A-B-C = MIN - MAX").  Two ranges: one whose ids cross 2^31 (RID 1000 is id
# 2^31) and end at the highest RID of the test's accounts (the next RID is out of range in
# both), and an ordinary one.  Back the other way, the uids and gids of the range (and the
# ids next to it) to SIDs: `wbinfo --unix-ids-to-sids` against `nfskeys idmap sid
# [--group] ID`.
# autorid: winbind's idmap_autorid as the default ("*") backend against nfskeys's [SID]
# Algorithm = autorid with the same range and rangesize, both ways.  A domain's range
# depends on the order of first use, so both sides meet the domains in one fixed order:
# the domain (winbind: a SID of it mapped alone; nfskeys: [SID] Domains, assigned at
# start), then BUILTIN, then the RIDs of no account that need ranges of their own
# ("DOMAIN#N"), each alone, then one SID of each other range of the domain's SIDs, in the
# order of the ranges, each alone; then the domain's SIDs in batches (no new range is
# needed there) and every other SID one at a time, in order (winbind answers a batch
# with a BUILTIN SID in it with some well-known SIDs unmapped that it maps alone).  Each
# nfskeys run is a process of its own, starting from the State-File the ones before it
# wrote, so its ranges are also those read back from the file.  Two runs:
# rangesize 1000000 (range 0 the pool, the domain's range from 2000000), and rangesize
# 2000 around 2^31 (RID 1000 of the domain is 2^31, its RIDs from 2000 on in ranges of
# their own; with rangesize 600 or 1000 winbind 4.17 maps nothing at all here).  BUILTIN
# is unmapped on both: winbind on the member finds no BUILTIN domain for its SIDs, and
# nfskeys gives BUILTIN a range only when [SID] Domains lists S-1-5-32.
# ad: winbind's idmap_ad (schema_mode rfc2307) for the domain against nfskeys's
# "DOMAIN = ad MIN - MAX" reading the DC (simple bind as the administrator, the password
# from the 0600 file), both ways: a range taking in every uidNumber/gidNumber of the
# test (3000000000, kept as -1294967296 by the DC, included) and a narrower one; every
# account's uidNumber (users) or gidNumber (groups) below 2^31 is the id of both, and
# those of 2^31 and more, which the DC stores negative, are unmapped in both.
# Back (ids -> SIDs), an id answered with a Unix SID S-1-22-1-ID/S-1-22-2-ID (nfskeys's
# answer, as smbd's, for an id no backend maps; winbind's too at times) counts as
# unmapped.
# sssd: nfskeys's default algorithm (SSSD's slices) against libsss_idmap itself
# (tests/harness/sss-idmap-map, domains learnt in the order of the SIDs on both sides),
# both ways, with libsss_idmap's default bounds and with bounds crossing 2^31.
# Not compared, and said so: the SIDs winbind maps through a tdb default backend (ids
# handed out in order of first use; nfskeys maps no well-known SID outside autorid), in
# the rid runs ids outside every range, and in the sssd runs Unix SIDs (nfskeys maps them
# as smbd does, libsss_idmap knows none).
#
# The DC has NFSKEYS_SAMBA_BULK (default 2000) accounts more than the harness's template
# (users and groups, some with uidNumber/gidNumber, some of those at 2^31 and above:
# tests/harness/samba-ad.sh, _samba_ad_bulk_add), some 2070 SIDs in all.  The
# requirement's 10 000 SIDs: NFSKEYS_SAMBA_BULK=10000 (some 10 070 SIDs); adding them
# costs about 100 s of CPU once per build tree (the template is kept), the comparisons
# about as much again, so it is not the default.  winbind and nfskeys are asked in
# batches (wbinfo 500 SIDs or ids a run; nfskeys reads them on stdin), but for autorid,
# where winbind is asked one SID at a time for those not of the domain (see above).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/samba-ad.sh"

SAMBA_AD_BULK=${NFSKEYS_SAMBA_BULK:-2000}
SSS_MAP="$top_builddir/tests/harness/sss-idmap-map"
t0=$(date +%s)
t_samba_ad_start || fail_all "the Samba DC did not start (log above)"
t1=$(date +%s)
t_samba_member_join || fail_all "net ads join of the member failed (log above)"
plan 43
diag "DC ($SAMBA_AD_BULK accounts added to the template) up in $((t1 - t0)) s," \
	"member joined in $(($(date +%s) - t1)) s"
DOM=$SAMBA_AD_SID

# The SIDs: "SID KIND NAME"
{
	t_samba_ad_objects
	for s in S-1-1-0 S-1-5-2 S-1-5-18 S-1-5-113; do echo "$s wellknown $s"; done
	echo "S-1-22-1-1234 unix Unix user 1234"
	echo "S-1-22-2-1234 unix Unix group 1234"
	echo "S-1-22-1-3000000000 unix Unix user 3000000000"
	echo "S-1-5-21-1-2-3-1000 foreign a domain nobody knows"
	echo "$SAMBA_AD_SID-4321 norid a RID no account has"
	echo "$SAMBA_AD_SID-1000123 norid a RID no account has"
} >"$T_TMP/sids"
n_sids=$(wc -l <"$T_TMP/sids")
n_dom=$(grep -c "^$DOM-" "$T_TMP/sids")
diag "$n_sids SIDs, $n_dom of them the domain's ($DOM):" \
	"$(awk '{ n[$2]++ } END { for (k in n) printf "%s %d, ", k, n[k] }' "$T_TMP/sids")"
# the counts compared, per run: "NAME SIDS IDS-BACK"
: >"$T_TMP/counts"

# nfskeys runs in the DC's network namespace for the ad runs (NK_RUN=t_samba_ad_net);
# winbind is asked one SID at a time when WB_EACH is set
NK_RUN= WB_EACH=

# nfskeys's answers for the keys of stdin, one a line (SIDs, or ids), the kind given
# (uid, or gid with --group): "KEY ANSWER" lines, "KEY unmapped" for those it has no
# mapping for.  In this process (-L), not from a daemon of the host's.
nk_keys() {
	_conf=$1
	shift
	$NK_RUN "$NFSKEYS" -c "$_conf" idmap sid -L "$@" - 2>"$T_TMP/nk.err" |
		awk '$2 == "->" { print $1, $3 }'
	sed -n 's/^nfskeys: idmap sid: \([^:]*\): no mapping.*/\1 unmapped/p' "$T_TMP/nk.err"
	# anything else on stderr is an error the comparison must not hide
	grep -v ': no mapping (see' "$T_TMP/nk.err" >&2
}

# nfskeys's SIDs for ids (uid, or gid with --group): "ID SID" lines, "ID unmapped"
nk_sids() {
	_conf=$1
	shift
	_g=
	[ "${1:-}" = --group ] && _g=--group && shift
	printf '%s\n' "$@" | nk_keys "$_conf" $_g
}

# nfskeys's answers for every SID, one kind (uid, or gid with --group): "SID ID" lines,
# "SID unmapped" for those it has no mapping for
nk_ids() {
	awk '{ print $1 }' "$T_TMP/sids" | nk_keys "$@"
}

# The start of every run's nfskeys.conf: the sid backend alone, its [SID] section next
nk_conf_head() {
	printf '[General]\nDomain = nfskeys.test\n[Translation]\nMethod = sid\n[SID]\n'
}

# winbind's default domain ("*") in the runs of one backend for the domain: tdb, ids
# 5000-9999 handed out in order of first use
wb_default_tdb() {
	printf '\tidmap config * : backend = tdb\n\tidmap config * : range = 5000-9999\n'
}

# One rid run: winbind's rid backend and nfskeys's [SID] range LOW-HIGH.
rid_run() {
	name=$1 low=$2 high=$3
	{ wb_default_tdb; cat; } >"$T_TMP/$name.wb" <<EOF
	idmap config $SAMBA_AD_DOMAIN : backend = rid
	idmap config $SAMBA_AD_DOMAIN : range = $low-$high
EOF
	{ nk_conf_head; cat; } >"$T_TMP/$name.conf" <<EOF
Auto-Domains = no
State-File = $T_TMP/$name.slices
$DOM = $low - $high
EOF
	SEED= EXTRA_IDS="$((low - 1)) $((high + 1))"
	cmp_run
}

# One comparison, winbind with the "idmap config" lines of $T_TMP/$name.wb and nfskeys
# with $T_TMP/$name.conf: first the SIDs of $SEED, one at a time and in order, on both
# sides, then every SID.  Writes $T_TMP/$name.table: "SID KIND WB_UID NK_UID WB_GID
# NK_GID"; and back, for the ids either side gave and $EXTRA_IDS, $T_TMP/$name.back:
# "uID WB_SID NK_SID" and "gID WB_SID NK_SID".  With WB_EACH, winbind is asked the SIDs
# not of the domain one at a time, in order, the domain's in batches (the seed gave each
# of their ranges its number first), and back, the ids it gave in batches, the others
# one at a time.
cmp_run() {
	_t0=$(date +%s)
	t_samba_winbind_start "$T_TMP/$name.wb" ||
		fail_all "winbindd did not start for $name"
	_t1=$(date +%s)
	for _s in $SEED; do
		t_wbinfo_ids "$_s" >/dev/null
		nk_ids_of "$T_TMP/$name.conf" "$_s" >/dev/null 2>&1
	done
	nk_ids "$T_TMP/$name.conf" >"$T_TMP/$name.nk-uid"
	nk_ids "$T_TMP/$name.conf" --group >"$T_TMP/$name.nk-gid"
	if [ -n "$WB_EACH" ]; then
		# shellcheck disable=SC2046
		t_wbinfo_ids $(awk -v d="$DOM-" 'index($1, d) == 1 { print $1 }' "$T_TMP/sids")
		for _s in $(awk -v d="$DOM-" 'index($1, d) != 1 { print $1 }' "$T_TMP/sids"); do
			t_wbinfo_ids "$_s"
		done
	else
		# shellcheck disable=SC2046
		t_wbinfo_ids $(awk '{ print $1 }' "$T_TMP/sids")
	fi >"$T_TMP/$name.wb-ids"
	awk 'FILENAME ~ /nk-uid$/ { nu[$1] = $2; next }
	     FILENAME ~ /nk-gid$/ { ng[$1] = $2; next }
	     FILENAME ~ /wb-ids$/ { wu[$1] = $2; wg[$1] = $3; next }
	     { print $1, $2, wu[$1], nu[$1], wg[$1], ng[$1] }' \
		"$T_TMP/$name.nk-uid" "$T_TMP/$name.nk-gid" "$T_TMP/$name.wb-ids" "$T_TMP/sids" \
		>"$T_TMP/$name.table"
	ids=$( (awk '{ for (i = 3; i <= 6; i++) if ($i ~ /^[0-9]+$/) print $i }' \
		"$T_TMP/$name.table"
		echo $EXTRA_IDS) | tr ' ' '\n' | sort -nu)
	# shellcheck disable=SC2086
	if [ -n "$WB_EACH" ]; then
		# (winbind fails a batch with one id it cannot map: DOMAIN_NOT_FOUND; the ids it
		# gave map, in batches, the rest one at a time)
		awk '$3 ~ /^[0-9]+$/ { print "u" $3 } $5 ~ /^[0-9]+$/ { print "g" $5 }' \
			"$T_TMP/$name.table" | sort -u >"$T_TMP/$name.wb-given"
		for i in $ids; do echo "u$i"; echo "g$i"; done | sort -u |
			comm -23 - "$T_TMP/$name.wb-given" >"$T_TMP/$name.wb-other"
		# shellcheck disable=SC2046
		t_wbinfo_sids $(cat "$T_TMP/$name.wb-given") >"$T_TMP/$name.wb-batch" 2>/dev/null ||
			for i in $(cat "$T_TMP/$name.wb-given"); do
				t_wbinfo_sids "$i" 2>/dev/null || echo "$i unmapped"
			done >"$T_TMP/$name.wb-batch"
		cat "$T_TMP/$name.wb-batch"
		for i in $(cat "$T_TMP/$name.wb-other"); do
			t_wbinfo_sids "$i" 2>/dev/null || echo "$i unmapped"
		done
	else
		t_wbinfo_sids $(for i in $ids; do echo "u$i"; done)
		t_wbinfo_sids $(for i in $ids; do echo "g$i"; done)
	fi | sort >"$T_TMP/$name.wb-sids"
	# shellcheck disable=SC2086
	{
		nk_sids "$T_TMP/$name.conf" $ids | sed 's/^/u/'
		nk_sids "$T_TMP/$name.conf" --group $ids | sed 's/^/g/'
	} | sort >"$T_TMP/$name.nk-sids"
	# every id either side answered (a side without it: "missing", which differs)
	join -a 1 -a 2 -e missing -o 0,1.2,2.2 "$T_TMP/$name.wb-sids" "$T_TMP/$name.nk-sids" \
		>"$T_TMP/$name.back"
	_t2=$(date +%s)
	t_samba_winbind_stop
	diag "$name: winbindd up in $((_t1 - _t0)) s, lookups $((_t2 - _t1)) s, \
stopped in $(($(date +%s) - _t2)) s"
	count_run
}

# the counts of the run: every SID of the table, uid and gid; the ids back
count_run() {
	echo "$name $(wc -l <"$T_TMP/$name.table") $(wc -l <"$T_TMP/$name.back")" \
		>>"$T_TMP/counts"
}

# nfskeys's ids for the SIDs given (uid, then gid), for the seeding
nk_ids_of() {
	_conf=$1
	shift
	$NK_RUN "$NFSKEYS" -c "$_conf" idmap sid -L "$@"
	$NK_RUN "$NFSKEYS" -c "$_conf" idmap sid -L --group "$@"
}

# check_agree DESCRIPTION FILTER(awk condition on the table's fields): uid and gid
# agree; "mapped", the SIDs with a uid or a gid from winbind.  A row missing an answer
# (either side gave nothing) differs.
check_agree() {
	t_samba_agree "$name: $1, uid and gid" SIDs 0 "$T_TMP/$name.table" "$2" \
		'NF != 6 || $3 != $4 || $5 != $6' '$3 != "unmapped" || $5 != "unmapped"' \
		"SID KIND winbind-uid nfskeys-uid winbind-gid nfskeys-gid"
}

# ids -> SIDs: those of the range agree; outside every range nfskeys answers Samba's Unix
# SIDs (what smbd gives such ids), winbind none
check_back() {
	t_samba_agree "$name: uids and gids of the range -> the same SIDs" ids 1 \
		"$T_TMP/$name.back" "{ i = substr(\$1, 2) + 0 } i >= $low && i <= $high" \
		'NF != 3 || $2 != $3' '$2 != "unmapped"' "ID winbind-SID nfskeys-SID"
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
# highest RID of the accounts the template has (its own and the bulk ones), so the next
# RID (the member's, joined later) is out of range for both.
last_rid=$(awk '{ n = split($3, a, "-"); if (a[n] + 0 > m) m = a[n] + 0 } END { print m }' \
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

# ids -> SIDs, every id given of LOW-HIGH; a Unix SID (nfskeys's answer, and winbind's
# at times, for an id no backend maps) counts as unmapped
check_back_all() {
	awk -v l="$low" -v h="$high" '{ i = substr($1, 2) + 0 }
		i >= l && i <= h { for (k = 2; k <= 3; k++) if ($k ~ /^S-1-22-[12]-/) $k = "unmapped"
			print }' \
		"$T_TMP/$name.back" >"$T_TMP/$name.back-range"
	t_samba_agree "$name: uids and gids of the range -> the same SIDs" ids 1 \
		"$T_TMP/$name.back-range" 1 '$2 != $3' '$2 != "unmapped"' \
		"ID winbind-SID nfskeys-SID"
}

# The SIDs of every kind, each kind compared on its own
check_agree_all() {
	check_agree "the domain's users and computers" "\$2 == \"user\" && \$1 ~ /^$DOM-/"
	check_agree "the domain's groups" "\$2 == \"group\" && \$1 ~ /^$DOM-/"
	check_agree "BUILTIN" "\$1 ~ /^S-1-5-32-/"
	check_agree "well-known SIDs" "\$2 == \"wellknown\""
	check_agree "Unix and unknown-domain SIDs" "\$2 == \"unix\" || \$2 == \"foreign\""
	check_agree "the domain's RIDs of no account" "\$2 == \"norid\""
}

# One autorid run: winbind's autorid as "*" and nfskeys's Algorithm = autorid, range
# LOW-HIGH of ranges of SIZE ids, the domains met in the order said above.
autorid_run() {
	name=$1 low=$2 high=$3 size=$4
	cat >"$T_TMP/$name.wb" <<EOF
	idmap config * : backend = autorid
	idmap config * : range = $low-$high
	idmap config * : rangesize = $size
EOF
	{ nk_conf_head; cat; } >"$T_TMP/$name.conf" <<EOF
Algorithm = autorid
Range-Min = $low
Range-Max = $high
Range-Size = $size
Auto-Domains = no
Domains = $DOM
State-File = $T_TMP/$name.state
EOF
	# the domain, BUILTIN, two ranges "DOMAIN#N" of RIDs no account has, then one SID of
	# each other range of the domain's SIDs, in the order of the ranges
	SEED="$DOM-500 S-1-5-32-544 $DOM-4321 $DOM-1000123 $(awk -v d="$DOM-" -v z="$size" '
		index($1, d) == 1 { r = substr($1, length(d) + 1) + 0; k = int(r / z)
			if (!(k in s)) s[k] = $1 }
		END { for (k in s) print k, s[k] }' "$T_TMP/sids" | sort -n | cut -d' ' -f2)"
	WB_EACH=1
	# the ends of the range and of its first ranges, and the ids next to them
	EXTRA_IDS=$(for k in 0 1 2 3 4; do
		echo $((low + k * size - 1)) $((low + k * size)) $((low + k * size + size - 1))
	done; echo $((high)) $((high + 1)))
	cmp_run
	WB_EACH=
}

name=autorid-1m
autorid_run "$name" 1000000 19999999 1000000
check_agree_all
check_back_all
# rangesize 2000 from 2147480648: the pool (range 0) ends at 2147482647, the domain's
# RIDs 0-1999 (range 1) cross 2^31 at RID 1000, RID 4321 is in "DOMAIN#2" (range 2); 40
# ranges, room for every "DOMAIN#N" of 10000 accounts and the other domains
name=autorid-2g
autorid_run "$name" 2147480648 2147560647 2000
check_agree_all
check_back_all
check_eq "$name: RID 1000 is 2^31, RID 4321 is in range 2 (DOMAIN#2), for both" \
	"2147483648 2147483648 $((2147480648 + 2 * 2000 + 321)) $((2147480648 + 2 * 2000 + 321))" \
	"$(awk -v a="$DOM-1000" -v b="$DOM-4321" '$1 == a { x = $3 " " $4 } $1 == b { y = $5 " " $6 }
		END { print x, y }' "$T_TMP/$name.table")"

# One ad run: winbind's ad backend (rfc2307) for the domain, tdb as "*"; nfskeys's
# "DOMAIN = ad LOW - HIGH", reading the DC as its administrator (password from the 0600
# file).  nfskeys runs in the DC's network namespace.
ad_run() {
	name=$1 low=$2 high=$3
	{ wb_default_tdb; cat; } >"$T_TMP/$name.wb" <<EOF
	idmap config $SAMBA_AD_DOMAIN : backend = ad
	idmap config $SAMBA_AD_DOMAIN : schema_mode = rfc2307
	idmap config $SAMBA_AD_DOMAIN : range = $low-$high
EOF
	{ nk_conf_head; cat; } >"$T_TMP/$name.conf" <<EOF
Auto-Domains = no
State-File = $T_TMP/$name.slices
$DOM = ad $low - $high
AD-URI = $SAMBA_AD_URI
AD-Base = $SAMBA_AD_BASEDN
AD-Bind-DN = CN=Administrator,CN=Users,$SAMBA_AD_BASEDN
AD-Bind-Password-File = $SAMBA_AD_ADMINPW_FILE
# plain LDAP inside the test's own network namespace
AD-Allow-Cleartext-Bind = yes
EOF
	SEED=
	# the test's uidNumber/gidNumber values (the bulk's at 2^31 and above too), and the
	# ends of the range
	EXTRA_IDS="10000 10001 20001 3000000000 3000000001 2147483647 2147483648 3000000100
		3500000000 4294967294 $((low - 1)) $low $high $((high + 1))"
	NK_RUN=t_samba_ad_net
	cmp_run
	NK_RUN=
}

# uidNumber 10001 and gidNumber 20001 in range; 3000000000 and 3000000001 too
name=ad-wide
ad_run "$name" 10000 3999999999
check_agree "the domain's users and computers" "\$2 == \"user\" && \$1 ~ /^$DOM-/"
check_agree "the domain's groups" "\$2 == \"group\" && \$1 ~ /^$DOM-/"
check_back_all
check_eq "$name: alice's uid is her uidNumber, staff's gid its gidNumber, for both" \
	"10001 10001 20001 20001" \
	"$(awk -v a="$(t_samba_ad_sid alice)" -v s="$(t_samba_ad_sid staff)" '
		$1 == a { u = $3 " " $4 } $1 == s { g = $5 " " $6 } END { print u, g }' \
		"$T_TMP/$name.table")"
# every account of the template with a uidNumber (users) or gidNumber (groups) in the
# range and below 2^31 -> that id, for both; at 2^31 and above (stored negative by the
# DC) -> unmapped, for both
awk 'FILENAME ~ /table$/ { wu[$1] = $3; nu[$1] = $4; wg[$1] = $5; ng[$1] = $6; next }
	{ v = $2 == "user" ? $4 : $5; if (v == "-" || v < 10000) next
	  w = $2 == "user" ? wu[$3] " " nu[$3] : wg[$3] " " ng[$3]
	  print $1, $2, v, w }' "$T_TMP/$name.table" "$SAMBA_AD_ACCOUNTS" >"$T_TMP/ad-ids"
t_samba_agree "$name: the uidNumber of users, the gidNumber of groups below 2^31, for both" \
	accounts 1 "$T_TMP/ad-ids" '$3 < 2147483648' '$4 != $3 || $5 != $3' 1 \
	"NAME KIND DC winbind nfskeys"
t_samba_agree "$name: those of 2^31 and above (stored negative): unmapped for both" \
	accounts 0 "$T_TMP/ad-ids" '$3 >= 2147483648' '$4 != "unmapped" || $5 != "unmapped"' \
	'$4 != "unmapped"' "NAME KIND DC winbind nfskeys"
report_allocated
# 10001 (alice) below the range; 20001 in; 3000000000 and 3000000001 above
name=ad-narrow
ad_run "$name" 15000 2999999999
check_agree "the domain's users and computers" "\$2 == \"user\" && \$1 ~ /^$DOM-/"
check_agree "the domain's groups" "\$2 == \"group\" && \$1 ~ /^$DOM-/"
check_back_all
report_allocated

# One sssd run: nfskeys's default algorithm (SSSD's slices, Auto-Domains) against
# libsss_idmap with the same bounds (none: the defaults of both), both ways; each
# nfskeys run a new process, from the State-File the first one wrote.  The Unix SIDs are
# left out (see above).  The table has libsss_idmap's id as "winbind's" uid and
# gid (it gives one id for both).
sssd_run() {
	name=$1
	shift
	{ nk_conf_head; cat; } >"$T_TMP/$name.conf" <<EOF
State-File = $T_TMP/$name.slices
EOF
	[ $# = 3 ] && printf 'Range-Min = %s\nRange-Max = %s\nRange-Size = %s\n' "$@" \
		>>"$T_TMP/$name.conf"
	awk '$2 != "unix"' "$T_TMP/sids" >"$T_TMP/$name.sids"
	awk '{ print $1 }' "$T_TMP/$name.sids" | "$SSS_MAP" "$@" >"$T_TMP/$name.sss" ||
		fail_all "sss-idmap-map failed"
	awk '{ print $1 }' "$T_TMP/$name.sids" | nk_keys "$T_TMP/$name.conf" >"$T_TMP/$name.nk-uid"
	awk '{ print $1 }' "$T_TMP/$name.sids" | nk_keys "$T_TMP/$name.conf" --group \
		>"$T_TMP/$name.nk-gid"
	awk 'FILENAME ~ /nk-uid$/ { nu[$1] = $2; next }
	     FILENAME ~ /nk-gid$/ { ng[$1] = $2; next }
	     FILENAME ~ /sss$/ { w[$1] = $2; next }
	     { print $1, $2, w[$1], nu[$1], w[$1], ng[$1] }' \
		"$T_TMP/$name.nk-uid" "$T_TMP/$name.nk-gid" "$T_TMP/$name.sss" "$T_TMP/$name.sids" \
		>"$T_TMP/$name.table"
	# back: every id either gave
	awk '{ for (i = 3; i <= 6; i++) if ($i ~ /^[0-9]+$/) print $i }' "$T_TMP/$name.table" |
		sort -nu >"$T_TMP/$name.ids"
	# (libsss_idmap knows the domains it was given: the SIDs first, as SSSD learns them)
	awk '{ print $1 }' "$T_TMP/$name.sids" | cat - "$T_TMP/$name.ids" | "$SSS_MAP" "$@" \
		>"$T_TMP/$name.sss-all" || fail_all "sss-idmap-map failed"
	awk '$1 ~ /^[0-9]+$/' "$T_TMP/$name.sss-all" >"$T_TMP/$name.sss-sids"
	{
		sed 's/^/u/' "$T_TMP/$name.sss-sids"
		sed 's/^/g/' "$T_TMP/$name.sss-sids"
	} | sort >"$T_TMP/$name.wb-sids"
	{
		nk_keys "$T_TMP/$name.conf" <"$T_TMP/$name.ids" | sed 's/^/u/'
		nk_keys "$T_TMP/$name.conf" --group <"$T_TMP/$name.ids" | sed 's/^/g/'
	} | sort >"$T_TMP/$name.nk-sids"
	# every id either side answered (a side without it: "missing", which differs)
	join -a 1 -a 2 -e missing -o 0,1.2,2.2 "$T_TMP/$name.wb-sids" "$T_TMP/$name.nk-sids" \
		>"$T_TMP/$name.back"
	count_run
}

if [ -x "$SSS_MAP" ]; then
	# libsss_idmap's defaults: 200000-2000200000, slices of 200000
	name=sssd-default
	low=200000 high=2000200000
	sssd_run "$name"
	check_agree "the domain's users and computers" "\$2 == \"user\" && \$1 ~ /^$DOM-/"
	check_agree "the domain's groups" "\$2 == \"group\" && \$1 ~ /^$DOM-/"
	check_agree "BUILTIN, well-known and unknown-domain SIDs, RIDs of no account" \
		"\$1 !~ /^$DOM-/ || \$2 == \"norid\""
	check_back_all
	# slices from 2000000000 to 4000000000: the domain's slice may be on either side of
	# 2^31, the RIDs of 200000 and more in secondary slices
	name=sssd-2g
	low=2000000000 high=4000000000
	sssd_run "$name" 2000000000 4000000000 200000
	check_agree "the domain's users and computers" "\$2 == \"user\" && \$1 ~ /^$DOM-/"
	check_agree "the domain's groups" "\$2 == \"group\" && \$1 ~ /^$DOM-/"
	check_agree "BUILTIN, well-known and unknown-domain SIDs, RIDs of no account" \
		"\$1 !~ /^$DOM-/ || \$2 == \"norid\""
	check_back_all
	diag "$name: $(awk '$3 ~ /^[0-9]+$/ && $3 >= 2147483648' "$T_TMP/$name.table" |
		wc -l) SIDs with an id of 2^31 and more"
else
	for i in 1 2 3 4 5 6 7 8; do skip "tests/harness/sss-idmap-map was not built"; done
fi

diag "compared, per run: SIDs (uid and gid of each), ids back (as uid and as gid):"
sed 's/^/#   /' "$T_TMP/counts"
