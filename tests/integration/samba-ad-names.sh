#!/bin/sh
# NFSv4 names of Active Directory accounts through the ldap backend ([LDAP] Schema = ad),
# on a real Samba AD DC (tests/harness/samba-ad.sh): the member's machine keytab (written
# by `net ads keytab create` after `net ads join`) and a SASL GSSAPI bind, no password in
# any file, argument or environment.  For every user, computer and group of the DC, the
# expected id is the uidNumber/gidNumber the DC stores, read straight from its sam.ldb
# with ldbsearch (AD's signed 32-bit form taken modulo 2^32 here, by awk): name@REALM and
# name@dns.domain map to it, or to nobody when the account has none, and then
# `nfskeys idmap explain` names the missing attribute; the ids map back to the name.  A
# second configuration whose NFSv4 domain is neither the realm nor the DNS domain: the
# realm is accepted through Local-Realms, the answers carry it (Name-Domain), another
# domain is a domain mismatch.  Principals also through GSS-Methods = krb5,ldap, and
# winbind's ad backend on the member as a cross-check.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/samba-ad.sh"

# Cyrus SASL's GSSAPI module, which libldap's GSSAPI bind loads, and the Kerberos tools
ls /usr/lib/*/sasl2/libgssapiv2.so* >/dev/null 2>&1 ||
	skip_all "Cyrus SASL's GSSAPI module is not installed (libsasl2-modules-gssapi-mit)"
command -v klist >/dev/null 2>&1 || skip_all "klist not installed (krb5-user)"
t_samba_ad_start || fail_all "the Samba DC did not start (log above)"
t_samba_member_join || fail_all "net ads join of the member failed (log above)"
M=$SAMBA_MEMBER_DIR
SAM="$SAMBA_AD_DIR/dc/private/sam.ldb"
REALM=$SAMBA_AD_REALM
DOMAIN=nfskeys.test

# One more account than the template has: a user with a uidNumber but no gidNumber (an
# RFC 2307 attribute set half-way); written to the DC's database directly.
TDB_NO_FSYNC=1 samba-tool user add carol --random-password -s "$SAMBA_AD_CONF" -H "$SAM" \
	>"$T_TMP/carol.log" 2>&1 || { cat "$T_TMP/carol.log" >&2; fail_all "samba-tool user add"; }
carol_dn=$(ldbsearch -H "$SAM" '(sAMAccountName=carol)' dn | sed -n 's/^dn: //p')
printf 'dn: %s\nchangetype: modify\nadd: uidNumber\nuidNumber: 10002\n' "$carol_dn" |
	ldbmodify -H "$SAM" >>"$T_TMP/carol.log" 2>&1 ||
	{ cat "$T_TMP/carol.log" >&2; fail_all "ldbmodify carol"; }
# The DC's LDAP service principal, which a DC registers for itself (samba_spnupdate, run by
# the dnsupdate service the harness's DC goes without): the GSSAPI bind asks for a ticket
# to ldap/dc1.nfskeys.test.
dc_dn=$(ldbsearch -H "$SAM" '(sAMAccountName=DC1$)' dn | sed -n 's/^dn: //p')
printf 'dn: %s\nchangetype: modify\nadd: servicePrincipalName\nservicePrincipalName: %s\nservicePrincipalName: %s\n' \
	"$dc_dn" ldap/dc1.nfskeys.test ldap/DC1 | ldbmodify -H "$SAM" >>"$T_TMP/carol.log" 2>&1 ||
	{ cat "$T_TMP/carol.log" >&2; fail_all "ldbmodify the DC's SPNs"; }

# The machine keytab, from the machine password the join stored (secrets.tdb): into a
# file of the test's, never the host's /etc/krb5.keytab.
KEYTAB="$M/krb5.keytab"
nsenter -t "$SAMBA_MEMBER_NS_PID" --net --mount env KRB5_CONFIG="$M/krb5.conf" \
	net ads keytab create -P -s "$M/smb.conf" --option='kerberos method = dedicated keytab' \
	--option="dedicated keytab file = FILE:$KEYTAB" >"$T_TMP/keytab.log" 2>&1
[ -s "$KEYTAB" ] || { cat "$T_TMP/keytab.log" >&2; fail_all "net ads keytab create wrote no keytab"; }
diag "machine keytab: $(klist -k "$KEYTAB" | awk 'NR > 3 { print $2 }' | sort -u | tr '\n' ' ')"

# nfskeys in the member's namespaces (its /etc/hosts names the DC), with a KRB5CCNAME in a
# directory that does not exist: the bind must need no credential cache of the
# environment's, and must not write one
NOCC="$T_TMP/no-such-dir/ccache"
nk() {
	nsenter -t "$SAMBA_MEMBER_NS_PID" --net --mount env KRB5_CONFIG="$M/krb5.conf" \
		KRB5CCNAME="FILE:$NOCC" "$NFSKEYS" "$@"
}

# The DC's accounts: "KIND<TAB>NAME<TAB>UIDNUMBER<TAB>GIDNUMBER", - for none; ids as
# unsigned (the DC keeps 3000000000 as -1294967296).  Groups include BUILTIN's.
ldbsearch -H "$SAM" '(|(objectClass=user)(objectClass=group))' sAMAccountName objectClass \
	uidNumber gidNumber >"$T_TMP/dc.ldif" 2>"$T_TMP/ldbsearch.err" ||
	{ cat "$T_TMP/ldbsearch.err" >&2; fail_all "ldbsearch of the DC's accounts"; }
awk -v OFS='\t' '
	function u32(n) { return n == "-" ? n : sprintf("%.0f", n < 0 ? n + 4294967296 : n) }
	function out() { if (name != "" && kind != "") print kind, name, u32(uid), u32(gid) }
	/^dn: / { out(); name = ""; kind = ""; uid = "-"; gid = "-" }
	/^objectClass: user$/ { kind = "user" }
	/^objectClass: group$/ { kind = "group" }
	/^sAMAccountName: / { name = substr($0, 17) }
	/^uidNumber: / { uid = $2 }
	/^gidNumber: / { gid = $2 }
	END { out() }' "$T_TMP/dc.ldif" | sort >"$T_TMP/accounts"
n_users=$(awk -F '\t' '$1 == "user"' "$T_TMP/accounts" | wc -l)
n_groups=$(awk -F '\t' '$1 == "group"' "$T_TMP/accounts" | wc -l)
diag "the DC has $n_users users and computers, $n_groups groups:"
sed 's/^/#   /' "$T_TMP/accounts"

cat >"$T_TMP/ad.conf" <<EOF
[General]
Domain = $DOMAIN
[Translation]
Method = ldap
[LDAP]
URI = ldap://dc1.nfskeys.test
Base = $SAMBA_AD_BASEDN
Schema = ad
SASL-Mech = GSSAPI
Keytab = $KEYTAB
Timeout = 10
Search-Timeout = 10
EOF
# the NFSv4 domain is neither: the realm is ours by Local-Realms, and is the answers' domain
sed -e "s/^Domain = .*/Domain = nfs.example\nLocal-Realms = $REALM/" \
	-e "s/^Schema = ad$/Schema = ad\nName-Domain = $REALM/" "$T_TMP/ad.conf" >"$T_TMP/realm.conf"

field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p" | tr -d '"'; }

# run_names CONF SUFFIX...: for every account and suffix, the name -> id request of its
# kind (and principal -> ids for users); "KIND NAME SUFFIX EXPECTED GOT" in CONF.table,
# EXPECTED and GOT "none" when there is no id
run_names() {
	_c=$1
	shift
	: >"$T_TMP/req"
	: >"$T_TMP/want"
	while IFS="$(printf '\t')" read -r kind name uid gid; do
		for sfx; do
			if [ "$kind" = user ]; then
				printf 'name-to-uid %s@%s\n' "$name" "$sfx" >>"$T_TMP/req"
				printf 'uid\t%s@%s\t%s\n' "$name" "$sfx" "$uid" >>"$T_TMP/want"
			else
				printf 'group-to-gid %s@%s\n' "$name" "$sfx" >>"$T_TMP/req"
				printf 'gid\t%s@%s\t%s\n' "$name" "$sfx" "$gid" >>"$T_TMP/want"
			fi
		done
		# a principal: uid and gid, both from the user's entry
		[ "$kind" = user ] || continue
		printf 'principal-to-ids %s@%s\n' "$name" "$REALM" >>"$T_TMP/req"
		[ "$uid" != - ] && [ "$gid" != - ] && ids="$uid/$gid" || ids=-
		printf 'principal\t%s@%s\t%s\n' "$name" "$REALM" "$ids" >>"$T_TMP/want"
	done <"$T_TMP/accounts"
	nk -c "$T_TMP/$_c.conf" idmap query --no-cache <"$T_TMP/req" >"$T_TMP/$_c.ans" \
		2>"$T_TMP/$_c.err"
	# the answers: the id, uid/gid for a principal, - when there is no mapping; another
	# failure (a bind refused, a server down) is itself, never "-"
	while read -r line; do
		id=$(echo "$line" | field id)
		gid=$(echo "$line" | field gid)
		err=$(echo "$line" | field error)
		if [ -n "$err" ] && [ "$err" != "No such file or directory" ]; then
			echo "error: $err"
		elif [ -z "$id" ]; then
			echo -
		elif [ -n "$gid" ]; then
			echo "$id/$gid"
		else
			echo "$id"
		fi
	done <"$T_TMP/$_c.ans" >"$T_TMP/$_c.got"
	paste "$T_TMP/want" "$T_TMP/$_c.got" >"$T_TMP/$_c.table"
	[ "$(wc -l <"$T_TMP/$_c.ans")" = "$(wc -l <"$T_TMP/req")" ] ||
		diag "$_c: $(wc -l <"$T_TMP/req") requests but $(wc -l <"$T_TMP/$_c.ans") answers"
	return 0
}

# check_names CONF DESCRIPTION AWK-CONDITION: the selected rows agree (at least one)
check_names() {
	awk -F '\t' "$3" "$T_TMP/$1.table" >"$T_TMP/sel"
	n=$(wc -l <"$T_TMP/sel")
	awk -F '\t' '$3 != $4' "$T_TMP/sel" >"$T_TMP/diff"
	if [ "$n" -gt 0 ] && [ ! -s "$T_TMP/diff" ]; then
		ok "$1: $2 ($n names)"
	else
		not_ok "$1: $2 ($n names)"
		diag "KIND NAME DC nfskeys"
		sed 's/^/#   /' "$T_TMP/diff"
		sed 's/^/#   stderr: /' "$T_TMP/$1.err" | head -20
	fi
}

plan 26

# --- NFSv4 domain = the DNS domain; the realm is the same name in capitals
run_names ad "$DOMAIN" "$REALM"
check_names ad "users with a uidNumber, name@$DOMAIN and name@$REALM -> the DC's uidNumber" \
	"\$1 == \"uid\" && \$3 != \"-\""
check_names ad "groups with a gidNumber, both forms -> the DC's gidNumber" \
	"\$1 == \"gid\" && \$3 != \"-\""
check_names ad "users and computers without uidNumber, both forms -> no mapping (nobody)" \
	"\$1 == \"uid\" && \$3 == \"-\""
check_names ad "groups without gidNumber (BUILTIN's too), both forms -> no mapping (nobody)" \
	"\$1 == \"gid\" && \$3 == \"-\""
check_names ad "principals name@$REALM -> the DC's uidNumber/gidNumber, or none" \
	"\$1 == \"principal\""
check_eq "ad: the id of 2^31 and more: big@$REALM -> 3000000000, biggrp -> 3000000001" \
	"3000000000 3000000001" \
	"$(awk -F '\t' '$1 != "principal" && ($2 == "big@'"$REALM"'" || $2 == "biggrp@'"$REALM"'") {
		print $4 }' "$T_TMP/ad.table" | sort | tr '\n' ' ' | sed 's/ $//')"
n_mapped=$(awk -F '\t' '$3 != "-"' "$T_TMP/ad.table" | wc -l)
n_nobody=$(awk -F '\t' '$3 == "-"' "$T_TMP/ad.table" | wc -l)
diag "ad: $(wc -l <"$T_TMP/ad.table") names compared: $n_mapped with an id, $n_nobody without"

# reverse: every uidNumber and gidNumber of the DC -> the account's name in the NFSv4 domain
awk -F '\t' '$1 == "user" && $3 != "-" { print "uid-to-name", $3, $2 }
	$1 == "group" && $4 != "-" { print "gid-to-group", $4, $2 }' "$T_TMP/accounts" \
	>"$T_TMP/rev.want"
n_rev=$(wc -l <"$T_TMP/rev.want")
# reverse_check CONF DOMAIN-OF-THE-ANSWERS
reverse_check() {
	awk '{ print $1, $2 }' "$T_TMP/rev.want" |
		nk -c "$T_TMP/$1.conf" idmap query --no-cache >"$T_TMP/$1.rev" 2>"$T_TMP/$1.rev.err"
	while read -r line; do
		echo "$line" | field name
	done <"$T_TMP/$1.rev" >"$T_TMP/$1.rev.got"
	awk -v d="$2" '{ print $1, $2, $3 "@" d }' "$T_TMP/rev.want" |
		paste -d ' ' - "$T_TMP/$1.rev.got" | awk '$3 != $4' >"$T_TMP/diff"
	if [ "$n_rev" -gt 0 ] && [ ! -s "$T_TMP/diff" ]; then
		ok "$1: ids -> name@$2, the DC's account of that uidNumber/gidNumber ($n_rev ids)"
	else
		not_ok "$1: ids -> name@$2, the DC's account of that uidNumber/gidNumber ($n_rev ids)"
		diag "KIND ID DC nfskeys"
		sed 's/^/#   /' "$T_TMP/diff"
		sed 's/^/#   stderr: /' "$T_TMP/$1.rev.err" | head -20
	fi
}
reverse_check ad "$DOMAIN"
check_eq "ad: an id no account has -> no mapping" "No such file or directory" \
	"$(echo 'uid-to-name 123456' | nk -c "$T_TMP/ad.conf" idmap query --no-cache | field error)"

# explain names what is missing
out=$(nk -c "$T_TMP/ad.conf" idmap explain "bob@$REALM" 2>&1)
check_contains "explain bob (no RFC 2307 attributes): nobody" "result: nobody" "$out"
check_contains "explain bob: the missing attribute is uidNumber" \
	"AD user 'bob@$REALM' is in the directory but has no uidNumber" "$out"
check_contains "explain bob: the cause is an account without an id, not an unknown one" \
	"cause: the user is known but has no usable id" "$out"
out2=$(nk -c "$T_TMP/ad.conf" idmap explain --group "plain@$DOMAIN" 2>&1)
check_contains "explain group plain: no gidNumber" \
	"AD group 'plain@$DOMAIN' is in the directory but has no gidNumber" "$out2"
out3=$(nk -c "$T_TMP/ad.conf" idmap explain --principal "carol@$REALM" 2>&1)
check_contains "explain principal carol (uidNumber, no gidNumber): gidNumber named" \
	"'carol@$REALM' is in the directory but has no gidNumber" "$out3"
out4=$(nk -c "$T_TMP/ad.conf" idmap explain "nosuchuser@$DOMAIN" 2>&1)
check_contains "explain an unknown name: no such user (not a missing attribute)" \
	"cause: no such user" "$out4"
diag "explain bob@$REALM:"
echo "$out" | sed 's/^/#   /'

# --- NFSv4 domain nfs.example: the realm by Local-Realms, answers in it
run_names realm "$REALM"
check_names realm "users and groups name@$REALM -> the DC's ids, or none" \
	"\$1 != \"principal\""
reverse_check realm "$REALM"
# (the DNS domain is the realm but for case: Name-Domain takes it in, as DNS does)
check_eq "realm: alice@$DOMAIN, the realm in other case -> 10001" 10001 \
	"$(echo "name-to-uid alice@$DOMAIN" | nk -c "$T_TMP/realm.conf" idmap query | field id)"
a=$(echo 'name-to-uid alice@other.example' | nk -c "$T_TMP/realm.conf" idmap query --no-cache)
check_eq "realm: alice@other.example (no domain or realm of ours) -> no mapping" \
	"No such file or directory" "$(echo "$a" | field error)"
out=$(nk -c "$T_TMP/realm.conf" idmap explain "alice@other.example" 2>&1)
check_contains "realm: explain alice@other.example: a domain mismatch" "cause: domain mismatch" \
	"$out"

# --- over TLS: ldaps:// with the DC's own CA (Samba makes it at first start), GSSAPI
# without a SASL security layer inside TLS (AD refuses one)
DC_CA="$SAMBA_AD_DIR/dc/private/tls/ca.pem"
sed -e 's#^URI = ldap://#URI = ldaps://#' -e "s#^Schema = ad\$#Schema = ad\nCA-File = $DC_CA#" \
	"$T_TMP/ad.conf" >"$T_TMP/tls.conf"
a=$(printf 'name-to-uid big@%s\ngid-to-group 20001\n' "$REALM" |
	nk -c "$T_TMP/tls.conf" idmap query --no-cache 2>"$T_TMP/tls.err")
check_eq "ldaps:// with GSSAPI: big@$REALM -> 3000000000, gid 20001 -> staff@$DOMAIN" \
	"3000000000 staff@$DOMAIN" \
	"$(echo "$a" | sed -n 1p | field id) $(echo "$a" | sed -n 2p | field name)"
[ -s "$T_TMP/tls.err" ] && sed 's/^/# stderr: /' "$T_TMP/tls.err"

# a principal the keytab has no key of: the backend does not load, and says why
sed "s/^Schema = ad\$/Schema = ad\nPrincipal = nosuch\$@$REALM/" "$T_TMP/ad.conf" >"$T_TMP/bad.conf"
out=$(nk -c "$T_TMP/bad.conf" idmap explain "alice@$REALM" 2>&1)
check_contains "Principal not in the keytab: the error names both" \
	"[LDAP] Keytab FILE:$KEYTAB has no key of [LDAP] Principal nosuch\$@$REALM" "$out"
check_eq "Principal not in the keytab: a configuration error, not a missing plugin" "" \
	"$(echo "$out" | grep 'unknown backend')"

# --- principals through the chain krb5,ldap: krb5's auth_to_local name is no local user
# here, ldap answers; for an account without uidNumber, explain gives ldap's cause (the
# attribute) over krb5's "no such local user"
sed 's/^Method = ldap$/Method = ldap\nGSS-Methods = krb5,ldap/' "$T_TMP/ad.conf" >"$T_TMP/chain.conf"
if getent passwd alice bob >/dev/null 2>&1; then
	skip "krb5,ldap: this host has a local alice or bob (krb5 would answer)"
	skip "krb5,ldap: explain bob (as above)"
else
	a=$(echo "principal-to-ids alice@$REALM" | nk -c "$T_TMP/chain.conf" idmap query --no-cache)
	check_eq "krb5,ldap: alice@$REALM -> the DC's uidNumber/gidNumber, from ldap" \
		"10001 20001 ldap" \
		"$(echo "$a" | field id) $(echo "$a" | field gid) $(echo "$a" | field backend)"
	out=$(nk -c "$T_TMP/chain.conf" idmap explain --principal "bob@$REALM" 2>&1)
	check_contains "krb5,ldap: explain bob@$REALM: the cause is ldap's missing uidNumber" \
		"cause: the user is known but has no usable id: AD user 'bob@$REALM' is in the directory but has no uidNumber" \
		"$out"
	diag "explain --principal bob@$REALM with GSS-Methods = krb5,ldap:"
	echo "$out" | sed 's/^/#   /'
fi

# --- winbind's ad backend (schema_mode = rfc2307) on the member, as a cross-check: what
# it maps, nfskeys maps to the same id; what it leaves unmapped, nfskeys too.  Reported,
# not compared: the ids of 2^31 and more (Samba 4.17's ad backend leaves the negative
# values unmapped, where nfskeys takes them modulo 2^32: the ids samba-tool was given)
# and the ids its default domain (tdb) hands out to BUILTIN's groups in order of use.
cat >"$T_TMP/wb.conf" <<EOF
	idmap config * : backend = tdb
	idmap config * : range = 5000-9999
	idmap config $SAMBA_AD_DOMAIN : backend = ad
	idmap config $SAMBA_AD_DOMAIN : schema_mode = rfc2307
	idmap config $SAMBA_AD_DOMAIN : range = 10000-3999999999
EOF
if t_samba_winbind_start "$T_TMP/wb.conf"; then
	t_samba_ad_objects | awk '$2 == "user" || $2 == "group"' >"$T_TMP/objects"
	t_samba_wb_ids_of "$T_TMP/objects" >"$T_TMP/wb-ids"
	t_samba_winbind_stop
	# "KIND NAME WINBIND NFSKEYS": the uid of users, the gid of groups; "-" for none
	awk -F '\t' -v d="$DOMAIN" '
		FILENAME ~ /wb-ids$/ { split($0, f, " "); u[f[1]] = f[2]; g[f[1]] = f[3]; next }
		FILENAME ~ /ad.table$/ { if ($1 != "principal") nk[$2] = $4; next }
		{ sid = $0; sub(/ .*/, "", sid); rest = substr($0, length(sid) + 2)
		  kind = rest; sub(/ .*/, "", kind); name = substr(rest, length(kind) + 2)
		  wb = kind == "user" ? u[sid] : g[sid]; if (wb == "unmapped") wb = "-"
		  n = nk[name "@" d]; if (n == "") n = "?"
		  print kind "\t" name "\t" wb "\t" n }' \
		"$T_TMP/wb-ids" "$T_TMP/ad.table" "$T_TMP/objects" >"$T_TMP/wb.table"
	# (ids of 2^31 and more, which the DC stores negative, winbind leaves unmapped)
	SAMBA_AGREE_FS=$(printf '\t')
	t_samba_agree "winbind's ad backend and nfskeys agree" accounts 1 "$T_TMP/wb.table" \
		'($3 == "-" || $3 < 5000 || $3 > 9999) && ($4 == "-" || $4 < 2147483648)' \
		'$3 != $4' '$3 != "-"' "KIND NAME winbind nfskeys"
	SAMBA_AGREE_FS=
	diag "not compared: the ids of 2^31 and more (winbind, nfskeys):"
	awk -F '\t' '$4 != "-" && $4 >= 2147483648' "$T_TMP/wb.table" | sed 's/^/#   /'
	diag "not compared: the ids winbind's default domain (tdb) handed out:"
	awk -F '\t' '$3 != "-" && $3 >= 5000 && $3 <= 9999' "$T_TMP/wb.table" | sed 's/^/#   /'
else
	not_ok "winbindd did not start with the ad backend (log above)"
fi

# no password and no credential cache anywhere
check_eq "the environment's credential cache was neither needed nor written" "absent" \
	"$([ -e "$NOCC" ] || [ -e "$(dirname "$NOCC")" ] && echo present || echo absent)"
