#!/bin/sh
# The LDAP goal (doc/PERFORMANCE.md): with [LDAP] Unique-Ids = yes a name -> id search gives the
# id's name, so a new owner costs one LDAP search instead of two: in the engine's cache
# (nfskeys idmap query) and in nfskeys-idmapd's reverse prefetch for knfsd (played by
# tests/harness/fake-kernel.py).  Without the option, when a backend before ldap knows the
# id, and for unknown names, everything is as before.  Searches are counted in slapd's own
# log (loglevel stats), answers compared with real id -> name lookups.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/slapd.sh"

[ -f "$NFSKEYS_PLUGIN_DIR/idmap-ldap.so" ] || skip_all "the ldap backend plugin was not built"
SLAPD_LOG_STATS=1
t_slapd_start || skip_all "slapd cannot run here (slapd, ldap-utils, back_mdb needed)"
S=$SLAPD_SUFFIX
{
	t_ldif_ou people
	t_ldif_ou groups
	for i in 0 1 2 3 4 5 6 7 8 9; do t_ldif_posix_user "user$i" $((10000 + i)); done
	# an NFSv4 name that is not uid@domain (the configured NFSv4-Name-Attr)
	printf 'dn: uid=alice,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\nuid: alice\ncn: alice\nuidNumber: 30001\ngidNumber: 20000\nhomeDirectory: /home/alice\ndescription: Alice.Smith@partner.example\n\n' "$S"
	# two entries sharing a uidNumber (what Unique-Ids promises not to exist)
	t_ldif_posix_user dupa 40000
	t_ldif_posix_user dupb 40000
	# an LDAP user whose uidNumber /etc/passwd knows too (root)
	t_ldif_posix_user ghost 0
	printf 'dn: cn=staff,ou=groups,%s\nobjectClass: posixGroup\ncn: staff\ngidNumber: 20000\n\n' "$S"
	printf 'dn: cn=eng,ou=groups,%s\nobjectClass: posixGroup\ncn: eng\ngidNumber: 20001\n\n' "$S"
} >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" || skip_all "ldapadd failed"
plan 38

# conf FILE METHOD UNIQUE [LINE...]: a configuration on this slapd
conf() {
	_f=$1 _m=$2 _u=$3
	shift 3
	{
		printf '[General]\nDomain = ldap.test\n[Translation]\nMethod = %s\n' "$_m"
		printf '[LDAP]\nURI = %s\nBase = %s\nUser-Base = ou=people,%s\n' "$SLAPD_URI" "$S" "$S"
		printf 'Group-Base = ou=groups,%s\nNFSv4-Name-Attr = description\nUnique-Ids = %s\n' \
			"$S" "$_u"
		[ $# -gt 0 ] && printf '%s\n' "$@"
	} >"$_f"
}
field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p" | tr -d '"'; }
# query CONF OUT [--no-cache]: the requests on stdin through one in-process engine
query() {
	"$NFSKEYS" -c "$1" idmap query ${3-} >"$2" 2>"$2.err"
	[ ! -s "$2.err" ] || diag "idmap query said: $(cat "$2.err")"
}
# ids DELTA-SINCE: searches by an id since the count SINCE
id_searches() { echo $(($(t_slapd_searches '(uid|gid)Number=') - $1)); }
name_searches() { echo $(($(t_slapd_searches '(cn|uid|description)=') - $1)); }

# ---------------------------------------------------------------- the engine's cache
cat >"$T_TMP/req" <<'REQ'
name-to-uid user3@ldap.test
uid-to-name 10003
name-to-uid Alice.Smith@partner.example
uid-to-name 30001
group-to-gid eng@ldap.test
gid-to-group 20001
REQ
conf "$T_TMP/yes.conf" ldap yes
conf "$T_TMP/no.conf" ldap no
i0=$(id_searches 0) n0=$(name_searches 0)
query "$T_TMP/yes.conf" "$T_TMP/yes.out" <"$T_TMP/req"
check_eq "Unique-Ids = yes: three new names, three searches" 3 "$(name_searches "$n0")"
check_eq "... and no search by an id (the ids' names came with them)" 0 "$(id_searches "$i0")"
i0=$(id_searches 0) n0=$(name_searches 0)
query "$T_TMP/no.conf" "$T_TMP/no.out" <"$T_TMP/req"
check_eq "Unique-Ids = no: three searches by name" 3 "$(name_searches "$n0")"
check_eq "... and three by id, as before" 3 "$(id_searches "$i0")"
sed 's/^/# yes: /' "$T_TMP/yes.out"
sed 's/^/# no:  /' "$T_TMP/no.out"
# the co-cached answer is the one a real id -> name lookup gives (all but the cache's
# flags and remaining TTL, which differ by nature)
strip() { sed -e 's/"flags":[^,}]*//' -e 's/"ttl":[^,}]*//' -e 's/"cached":[^,}]*//'; }
for n in 2 4 6; do
	y=$(sed -n "${n}p" "$T_TMP/yes.out" | strip)
	o=$(sed -n "${n}p" "$T_TMP/no.out" | strip)
	check_eq "answer $n ($(sed -n "${n}p" "$T_TMP/req")): co-cached = looked up" "$o" "$y"
done
check_eq "... the NFSv4-name attribute's form, as the id search gives it" \
	"Alice.Smith@partner.example" "$(sed -n 4p "$T_TMP/yes.out" | field name)"
check_eq "... and the group's" "eng@ldap.test" "$(sed -n 6p "$T_TMP/yes.out" | field name)"

# ---------------------------------------------------------------- Unique-Names: the other way
# an id's search gives its name's id: what a client asks after the server named an owner
cat >"$T_TMP/req5" <<'REQ'
uid-to-name 10007
name-to-uid user7@ldap.test
gid-to-group 20000
group-to-gid staff@ldap.test
uid-to-name 30001
name-to-uid Alice.Smith@partner.example
REQ
conf "$T_TMP/names.conf" ldap no 'Unique-Names = yes'
i0=$(id_searches 0) n0=$(name_searches 0)
query "$T_TMP/names.conf" "$T_TMP/names.out" <"$T_TMP/req5"
sed 's/^/# names: /' "$T_TMP/names.out"
check_eq "Unique-Names = yes: three ids searched" 3 "$(id_searches "$i0")"
check_eq "... and of the names only the one outside the NFSv4 domain" 1 "$(name_searches "$n0")"
i0=$(id_searches 0) n0=$(name_searches 0)
query "$T_TMP/no.conf" "$T_TMP/names-no.out" <"$T_TMP/req5"
check_eq "Unique-Names = no: three searches by id and three by name" "3 3" \
	"$(id_searches "$i0") $(name_searches "$n0")"
for n in 2 4 6; do
	check_eq "answer $n ($(sed -n "${n}p" "$T_TMP/req5")): co-cached = looked up" \
		"$(sed -n "${n}p" "$T_TMP/names-no.out" | strip)" \
		"$(sed -n "${n}p" "$T_TMP/names.out" | strip)"
done

# ---------------------------------------------------------------- the chain's order
# nsswitch before ldap: it knows uid 0 (root in /etc/passwd, read without blocking), so
# ghost's entry must not answer for uid 0; for uid 10004 it would have to ask NSS (which
# may block): that id is looked up on its own.
conf "$T_TMP/chain.conf" nsswitch,ldap yes
printf 'name-to-uid ghost@ldap.test\nuid-to-name 0\nname-to-uid user4@ldap.test\nuid-to-name 10004\n' \
	>"$T_TMP/req2"
i0=$(id_searches 0)
query "$T_TMP/chain.conf" "$T_TMP/chain.out" <"$T_TMP/req2"
sed 's/^/# chain: /' "$T_TMP/chain.out"
check_eq "nsswitch,ldap: ghost@ldap.test -> 0 from ldap" "0 ldap" \
	"$(sed -n 1p "$T_TMP/chain.out" | field id) $(sed -n 1p "$T_TMP/chain.out" | field backend)"
check_eq "... uid 0 answered by nsswitch (the chain's answer), not co-cached from ghost" \
	"root@ldap.test nsswitch" \
	"$(sed -n 2p "$T_TMP/chain.out" | field name) $(sed -n 2p "$T_TMP/chain.out" | field backend)"
check_eq "... uid 10004 (nsswitch may block on it): searched by id, as before" \
	"1 user4@ldap.test" \
	"$(t_slapd_searches 'uidNumber=10004') $(sed -n 4p "$T_TMP/chain.out" | field name)"

# ---------------------------------------------------------------- shared ids, unknown names
printf 'name-to-uid dupb@ldap.test\nuid-to-name 40000\n' >"$T_TMP/req3"
i0=$(t_slapd_searches 'uidNumber=40000')
query "$T_TMP/no.conf" "$T_TMP/dup.out" <"$T_TMP/req3"
printf 'uid-to-name 40000\n' | query "$T_TMP/no.conf" "$T_TMP/dup-real.out" --no-cache
sed 's/^/# dup: /' "$T_TMP/dup.out" "$T_TMP/dup-real.out"
check_eq "shared uidNumber, Unique-Ids = no: dupb -> 40000" 40000 \
	"$(sed -n 1p "$T_TMP/dup.out" | field id)"
check_eq "... uid 40000 searched by id after it (2 searches: the two runs)" 2 \
	"$(($(t_slapd_searches 'uidNumber=40000') - i0))"
check_eq "... and answered as the id search answers it alone" \
	"$(field name <"$T_TMP/dup-real.out")" "$(sed -n 2p "$T_TMP/dup.out" | field name)"
# what nfskeys.conf(5) warns of: a directory that breaks the promise gets the id's name
# from whichever entry was mapped last
query "$T_TMP/yes.conf" "$T_TMP/dup-yes.out" <"$T_TMP/req3"
check_eq "shared uidNumber, Unique-Ids = yes: uid 40000 answers dupb, the name mapped (the documented risk)" \
	"dupb@ldap.test" "$(sed -n 2p "$T_TMP/dup-yes.out" | field name)"
printf 'name-to-uid nosuch@ldap.test\nuid-to-name 99999\n' >"$T_TMP/req4"
query "$T_TMP/yes.conf" "$T_TMP/neg.out" <"$T_TMP/req4"
check_eq "unknown name with Unique-Ids = yes: not found, nothing co-cached (99999 searched)" \
	"No such file or directory 1" \
	"$(sed -n 1p "$T_TMP/neg.out" | field error) $(t_slapd_searches 'uidNumber=99999')"

# ---------------------------------------------------------------- nfskeys-idmapd for knfsd
RPC="$T_TMP/rpc"
mkdir -p "$RPC" "$T_TMP/pipefs"
# run_daemon UNIQUE N: the daemon on the fake channels answers nametoid for user5 and the
# group eng (and an unknown name); output in $T_TMP/outN, stats in $T_TMP/statsN
run_daemon() {
	conf "$IDMAPD_CONF" ldap "$1" '[Idmapd]' "Socket = $IDMAPD_SOCK" \
		"Kernel-Keyrings = nfskeys-test-none-$$" '[Kernel]' 'Server-Channels = yes' \
		'Client-Pipe = no' "Channel-Dir = $RPC"
	printf '%s\n' 'chan nametoid * user user5@ldap.test\n' \
		'chan nametoid * group eng@ldap.test\n' 'chan nametoid * user nosuch5@ldap.test\n' \
		>"$T_TMP/script$2"
	rm -f "$RPC/ready" "$RPC/go"
	python3 "$top_srcdir/tests/harness/fake-kernel.py" "$RPC" "$T_TMP/pipefs" \
		"$T_TMP/script$2" >"$T_TMP/out$2" 2>"$T_TMP/fk$2.err" &
	FK=$!
	t_wait_for "test -e '$RPC/ready'" 10 || diag "fake kernel did not start: $(cat "$T_TMP/fk$2.err")"
	t_idmapd_start
	touch "$RPC/go"
	wait $FK
	sed 's/^/# /' "$T_TMP/out$2"
	"$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats --prometheus >"$T_TMP/stats$2" 2>&1
	"$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats >"$T_TMP/stats$2.txt" 2>&1
	"$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats --json >"$T_TMP/stats$2.json" 2>&1
	# explain searches by id itself (in-process): the daemon's own searches counted first
	IDS=$(id_searches "$i0")
	"$NFSKEYS" -c "$IDMAPD_CONF" idmap explain 10005 >"$T_TMP/explain$2" 2>&1
	t_idmapd_stop
}
st() { awk -v m="nfskeys_idmapd_$2" '$1 == m { print $2 }' "$T_TMP/stats$1"; }
primed() {
	awk '$1 ~ /^P/ { sub(/^P[0-9]+ [a-z]+ /, ""); $4 = "EXP"; printf "%s%s", sep, $0; sep = " " }' \
		"$T_TMP/out$1"
}
i0=$(id_searches 0)
run_daemon yes 1
check_eq "idmapd, Unique-Ids = yes: user5 and eng primed into idtoname" \
	"'* user 10005 EXP user5@ldap.test\n' '* group 20001 EXP eng@ldap.test\n'" "$(primed 1)"
check_eq "... no search by id" 0 "$IDS"
check_eq "... reverse_cocached_total 2 of reverse_prefetched_total 2" "2 2" \
	"$(st 1 reverse_cocached_total) $(st 1 reverse_prefetched_total)"
check_eq "... the ldap backend asked twice (the names found), not 4 times" 2 \
	"$(st 1 'backend_requests_total{backend="ldap"}')"
check_contains "explain of uid 10005 says its answer came from user5's own search" \
	"name-search   uid-to-name 10005 -> user5@ldap.test" "$(cat "$T_TMP/explain1")"
i0=$(id_searches 0)
run_daemon no 2
check_eq "idmapd, Unique-Ids = no: the same lines primed" "$(primed 1)" "$(primed 2)"
check_eq "... two searches by id, as before" 2 "$IDS"
check_eq "... reverse_cocached_total 0, reverse_prefetched_total 2" "0 2" \
	"$(st 2 reverse_cocached_total) $(st 2 reverse_prefetched_total)"
check_eq "... the ldap backend asked 4 times" 4 "$(st 2 'backend_requests_total{backend="ldap"}')"
check_contains "... and explain says uid 10005 was looked up right after user5" \
	"prefetch      uid-to-name 10005 -> user5@ldap.test" "$(cat "$T_TMP/explain2")"
check_eq "stats as text show the counter" 2 \
	"$(awk '$1 == "reverse_cocached_total" { print $2 }' "$T_TMP/stats1.txt")"
check_contains "... and --json" \
	'"name":"reverse_cocached_total","labels":{},"type":"counter","value":2' \
	"$(tr -d ' \n' <"$T_TMP/stats1.json")"

# a bad value is refused, naming it
conf "$T_TMP/bad.conf" ldap maybe
out=$(printf 'name-to-uid user1@ldap.test\n' | "$NFSKEYS" -c "$T_TMP/bad.conf" idmap query 2>&1)
diag "$out"
check_contains "Unique-Ids = maybe: the ldap backend refuses to start, naming key and value" \
	"error: [LDAP] Unique-Ids = maybe: expected yes or no" "$(echo "$out" | grep 'error:')"
check_contains "... and the lookup fails rather than guess" '"error":' "$out"
conf "$T_TMP/bad2.conf" ldap no 'Unique-Names = sure'
out=$(printf 'uid-to-name 10001\n' | "$NFSKEYS" -c "$T_TMP/bad2.conf" idmap query 2>&1)
check_contains "Unique-Names = sure: refused, naming key and value" \
	"error: [LDAP] Unique-Names = sure: expected yes or no" "$(echo "$out" | grep 'error:')"
