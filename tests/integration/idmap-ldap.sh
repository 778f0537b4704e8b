#!/bin/sh
# The ldap backend against a real slapd on loopback with generated RFC 2307 entries:
# name/group/id/principal lookups, the NFSv4-name attribute, filter escaping, then the
# server stopped mid-test (a bounded -EHOSTDOWN, no hang), hung (search timeout) and
# back again (the same long-lived engine recovers after its backoff).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"

t_slapd_start || skip_all "slapd cannot run here (slapd, ldap-utils, back_mdb needed)"
S=$SLAPD_SUFFIX
{
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$S"
	printf 'dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n\n' "$S"
	i=0
	while [ $i -lt 150 ]; do
		printf 'dn: uid=user%d,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\nuid: user%d\ncn: user%d\nuidNumber: %d\ngidNumber: 20000\nhomeDirectory: /home/user%d\n\n' \
			$i "$S" $i $i $((10000 + i)) $i
		i=$((i + 1))
	done
	# an NFSv4 name that differs from uid (kept in description, the configured attribute)
	printf 'dn: uid=alice,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\nuid: alice\ncn: alice\nuidNumber: 30001\ngidNumber: 20000\nhomeDirectory: /home/alice\ndescription: Alice.Smith@partner.example\n\n' "$S"
	# a name full of filter metacharacters
	printf 'dn: uid=star*man,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\nuid: star*man\ncn: star\nuidNumber: 30002\ngidNumber: 20000\nhomeDirectory: /home/star\n\n' "$S"
	printf 'dn: cn=staff,ou=groups,%s\nobjectClass: posixGroup\ncn: staff\ngidNumber: 20000\n\n' "$S"
	printf 'dn: cn=eng,ou=groups,%s\nobjectClass: posixGroup\ncn: eng\ngidNumber: 20001\nmemberUid: alice\nmemberUid: user1\n\n' "$S"
	printf 'dn: cn=ops,ou=groups,%s\nobjectClass: posixGroup\ncn: ops\ngidNumber: 20002\nmemberUid: alice\n\n' "$S"
} >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" || skip_all "ldapadd failed"

cat >"$T_TMP/nfskeys.conf" <<CONF
[General]
Domain = ldap.test
Local-Realms = LDAP.TEST
[Translation]
Method = ldap
[LDAP]
URI = $SLAPD_URI
Base = $S
User-Base = ou=people,$S
Group-Base = ou=groups,$S
NFSv4-Name-Attr = description
Timeout = 2
Search-Timeout = 2
Backoff-Max = 2
CONF
field() { sed -n "s/.*\"$1\":\\([^,}]*\\).*/\\1/p" | tr -d '"'; }
# show_stderr SINCE FILE: when a check failed after the first SINCE failures, what the
# `idmap query` run writing FILE said on stderr, as TAP diagnostics.
show_stderr() {
	[ "$TAP_FAILED" -gt "$1" ] && [ -s "$2" ] || return 0
	diag "stderr of nfskeys idmap query ($(basename "$2")):"
	sed 's/^/#   /' "$2"
}

# All the plain lookups go through one engine in one run; answer N is line N.
cat >"$T_TMP/requests" <<'REQ'
name-to-uid user0@ldap.test
name-to-uid user149@LDAP.TEST
name-to-uid user5@ldap.test
name-to-uid Alice.Smith@partner.example
uid-to-name 30001
uid-to-name 10007
group-to-gid eng@ldap.test
gid-to-group 20002
principal-to-ids alice@LDAP.TEST
principal-to-ids alice@EVIL.TEST
name-to-uid user0@other.test
name-to-uid star*man@ldap.test
name-to-uid user*@ldap.test
name-to-uid x)(uid=*@ldap.test
uid-to-name 99999
name-to-uid user0
group-to-gid eng
REQ
"$NFSKEYS" -c "$T_TMP/nfskeys.conf" idmap query <"$T_TMP/requests" >"$T_TMP/answers" 2>"$T_TMP/query.err"
a() { sed -n "${1}p" "$T_TMP/answers"; }
enoent="No such file or directory"

plan 28
failed=$TAP_FAILED
check_eq "user0@ldap.test -> 10000" 10000 "$(a 1 | field id)"
check_eq "user149@LDAP.TEST -> 10149 (domain case-insensitive)" 10149 "$(a 2 | field id)"
check_eq "answer names the ldap backend" ldap "$(a 3 | field backend)"
check_eq "NFSv4 name attribute maps a foreign-domain name" 30001 "$(a 4 | field id)"
check_eq "uid -> name uses the NFSv4 name attribute" "Alice.Smith@partner.example" "$(a 5 | field name)"
check_eq "uid -> name@domain otherwise" "user7@ldap.test" "$(a 6 | field name)"
check_eq "group eng -> 20001" 20001 "$(a 7 | field id)"
check_eq "gid 20002 -> ops@ldap.test" "ops@ldap.test" "$(a 8 | field name)"
check_eq "principal alice@LDAP.TEST -> groups" "[20000,20001,20002]" \
	"$(a 9 | sed -n 's/.*"groups":\(\[[^]]*\]\).*/\1/p')"
check_eq "principal of a foreign realm is refused" "$enoent" "$(a 10 | field error)"
check_eq "a foreign domain does not match uid" "$enoent" "$(a 11 | field error)"
check_eq "filter metacharacters are matched literally" 30002 "$(a 12 | field id)"
check_eq "a wildcard does not match other entries" "$enoent" "$(a 13 | field error)"
check_eq "an injected filter does not match" "$enoent" "$(a 14 | field error)"
check_eq "unknown uid" "$enoent" "$(a 15 | field error)"
# a bare name (no @domain) is not known to be in our domain: as nsswitch and nfsidmap, it
# maps by uid/cn only with No-Strip (the NFSv4-name attribute still matches it as it is)
check_eq "bare user name without No-Strip: no mapping" "$enoent" "$(a 16 | field error)"
check_eq "bare group name without No-Strip: no mapping" "$enoent" "$(a 17 | field error)"
show_stderr $failed "$T_TMP/query.err"
out=$("$NFSKEYS" -c "$T_TMP/nfskeys.conf" idmap explain user0 2>&1)
check_contains "explain names No-Strip for a bare name" "No-Strip" "$out"
sed 's/^Method = ldap$/Method = ldap\nNo-Strip = both/' "$T_TMP/nfskeys.conf" >"$T_TMP/nostrip.conf"
failed=$TAP_FAILED
printf 'name-to-uid user0\ngroup-to-gid eng\nname-to-uid user1@ldap.test\n' |
	"$NFSKEYS" -c "$T_TMP/nostrip.conf" idmap query >"$T_TMP/nostrip" 2>"$T_TMP/nostrip.err"
check_eq "bare user name with No-Strip maps by uid" 10000 "$(sed -n 1p "$T_TMP/nostrip" | field id)"
check_eq "bare group name with No-Strip maps by cn" 20001 "$(sed -n 2p "$T_TMP/nostrip" | field id)"
check_eq "name@domain still maps with No-Strip" 10001 "$(sed -n 3p "$T_TMP/nostrip" | field id)"
show_stderr $failed "$T_TMP/nostrip.err"

# One long-lived engine while the server goes away and comes back.
failed=$TAP_FAILED
mkfifo "$T_TMP/in"
"$NFSKEYS" -c "$T_TMP/nfskeys.conf" idmap query --no-cache <"$T_TMP/in" >"$T_TMP/out" 2>"$T_TMP/err" &
qpid=$!
exec 3>"$T_TMP/in"
t_on_exit "kill $qpid"
ask() { # KIND KEY -> the answer line, waiting for it (120 s at most: a hang guard)
	want_line=$(($(wc -l <"$T_TMP/out") + 1))
	echo "$1 $2" >&3
	t_wait_for "[ \$(wc -l <'$T_TMP/out') -ge $want_line ]" 120
	sed -n "${want_line}p" "$T_TMP/out"
}
# err_since N: the engine's stderr after its first N lines
err_since() { tail -n +$(($1 + 1)) "$T_TMP/err"; }
check_eq "connected engine answers" 10001 "$(ask name-to-uid user1@ldap.test | field id)"

# A stopped server refuses the connection: the engine fails on that, not on a timeout.
t_slapd_kill
e0=$(wc -l <"$T_TMP/err")
a=$(ask name-to-uid user2@ldap.test)
check_eq "server stopped: backend failure, not 'not found'" "Host is down" "$(echo "$a" | field error)"
check_eq "server stopped: on the refused connection, not a timeout (Can't contact, no Timed out)" \
	"yes no" "$(err_since $e0 | grep -q "Can't contact LDAP server" && echo yes || echo no) $(
		err_since $e0 | grep -q 'Timed out' && echo yes || echo no)"

t_slapd_restart || not_ok "slapd restart"
sleep 2.2 # the backoff (Backoff-Max = 2) must pass
check_eq "server back: the same engine recovers" 10003 "$(ask name-to-uid user3@ldap.test | field id)"

# A hung server (stopped with SIGSTOP): the search timeout bounds the wait.
pid=$(cat "$SLAPD_DIR/slapd.pid")
kill -STOP "$pid"
t_on_exit "kill -CONT $pid"
e0=$(wc -l <"$T_TMP/err")
a=$(ask name-to-uid user4@ldap.test)
# (slapd stays stopped until the test continues it: the answer is the engine's own)
st=$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f1)
kill -CONT "$pid"
check_eq "server hung: backend failure" "Host is down" "$(echo "$a" | field error)"
check_eq "server hung: the engine gave up on its own (Timed out) while slapd was stopped" \
	"yes T" "$(err_since $e0 | grep -q 'Timed out' && echo yes || echo no) $st"
sleep 2.2
check_eq "server resumed: recovered" 10005 "$(ask name-to-uid user5@ldap.test | field id)"
show_stderr $failed "$T_TMP/err"
exec 3>&-
