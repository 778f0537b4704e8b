#!/bin/sh
# A fleet of nfskeys-attrd daemons (FLEET_N, default 20, each with its own socket, store and
# runtime directory and its own bind DN) syncing from one OpenLDAP slapd, judged from
# slapd's own log of every operation (loglevel stats), not from the daemons' word:
#  - their first syncs, started together, are spread over Sync-Splay (several distinct
#    seconds), and the first sync of each is a full read; the later ones are spread too;
#  - in intervals without a change, every sync is the cheap search for change stamps
#    alone: no daemon reads the policy attributes again;
#  - after a change in the directory every daemon serves it (asked over its socket), each
#    having read the entries exactly once for it.
# FLEET_FIGURES=FILE writes the per-sync figures of doc/PERFORMANCE.md there.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"

N=${FLEET_N:-20}
M=${FLEET_ENTRIES:-50} # policy entries in the directory
SLAPD_LOG_STATS=1
t_slapd_start "dc=nfskeys,dc=test" || skip_all "slapd cannot run here"
t_slapd_stop
sed -i "/inetorgperson.schema/a include $top_srcdir/data/nfskeys-attr.schema" "$SLAPD_DIR/slapd.conf"
t_slapd_restart || fail_all "slapd rejects data/nfskeys-attr.schema"
LOG="$SLAPD_DIR/stats.log"
BASE="ou=nfskeys,$SLAPD_SUFFIX"

plan 16

ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR="$top_builddir/tools/nfsattr/nfsattr"
# one test-only password for every client's bind DN, in a file (never in argv)
(umask 077; head -c 12 /dev/urandom | base64 | tr -d '/+=\n' >"$T_TMP/client.pw")
{
	t_ldif_ou nfskeys
	t_ldif_ou clients
	i=0
	while [ $i -lt "$N" ]; do
		printf 'dn: cn=client%d,ou=clients,%s\nobjectClass: organizationalRole\nobjectClass: simpleSecurityObject\ncn: client%d\nuserPassword: %s\n\n' \
			$i "$SLAPD_SUFFIX" $i "$(cat "$T_TMP/client.pw")"
		i=$((i + 1))
	done
	printf 'dn: cn=home,%s\nobjectClass: nfskeysDirectoryPolicy\ncn: home\nnfskeysDomain: nfs://fleet\nnfskeysPath: /export/home\nnfskeysAttribute: actimeo=60\n\n' "$BASE"
	i=1
	while [ $i -lt "$M" ]; do
		printf 'dn: cn=p%d,%s\nobjectClass: nfskeysDirectoryPolicy\ncn: p%d\nnfskeysDomain: nfs://fleet\nnfskeysPath: /export/p%d\nnfskeysAttribute: actimeo=%d\nnfskeysAttribute: lookupcache=positive\n\n' \
			$i "$BASE" $i $i $i
		i=$((i + 1))
	done
} >"$T_TMP/fleet.ldif"
t_slapd_load "$T_TMP/fleet.ldif" || fail_all "cannot load the fleet's entries"

# the fleet, started together
PIDS=
i=0
while [ $i -lt "$N" ]; do
	c="$T_TMP/c$i"
	mkdir -p "$c/run"
	cat >"$c/nfskeys.conf" <<EOF
[General]
Runtime-Dir = $c/run
[Attr]
Store = $c/attr.db
[Attrd]
Socket = $c/attrd.sock
LDAP-URI = $SLAPD_URI
LDAP-Base = $BASE
LDAP-Bind-DN = cn=client$i,ou=clients,$SLAPD_SUFFIX
LDAP-Bind-Password-File = $T_TMP/client.pw
# plain LDAP on loopback: TLS is ldap-tls.sh's subject
LDAP-Allow-Cleartext-Bind = yes
Sync-Interval = 2
Sync-Splay = 8
LDAP-Timeout = 10
EOF
	i=$((i + 1))
done
# a bad splay is refused, naming the key and its bounds
sed -e 's/^Sync-Splay = 8$/Sync-Splay = 2d/' "$T_TMP/c0/nfskeys.conf" >"$T_TMP/bad.conf"
out=$(timeout 60 "$ATTRD" -f -c "$T_TMP/bad.conf" 2>&1; echo "exit $?")
check_contains "Sync-Splay over its bound: refused, naming it and the bounds" \
	"error: [Attrd] Sync-Splay = 2d: expected a duration from 0 to 86400 s" "$out"
check_contains "... exit status 3 (configuration)" "exit 3" "$out"

i=0
while [ $i -lt "$N" ]; do
	$T_DAEMON_WRAPPER "$ATTRD" -f -c "$T_TMP/c$i/nfskeys.conf" >>"$T_TMP/c$i/attrd.log" 2>&1 &
	PIDS="$PIDS $!"
	i=$((i + 1))
done
# SIGTERM and wait: under make check-valgrind each daemon's leak check runs to its end
t_on_exit "kill $PIDS 2>/dev/null; wait $PIDS"

# slapd's log as one line per search: "SECOND CLIENT KIND NENTRIES LINE" (KIND full when
# the policy attributes were asked for, stamps for the change stamps alone), from line
# FROM (default 1) on; the client is the connection's bind DN
searches() {
	sed -n "${1:-1},\$p" "$LOG" | awk '
		BEGIN { for (i = 0; i < 16; i++) hex[substr("0123456789abcdef", i + 1, 1)] = i }
		{ t = 0; h = substr($1, 1, index($1, ".") - 1)
		  for (i = 1; i <= length(h); i++) t = t * 16 + hex[substr(h, i, 1)]
		  co = ""; split("", cc) }
		match($0, /conn=[0-9]+ op=[0-9]+/) { co = substr($0, RSTART, RLENGTH); split(co, cc, " ") }
		/ BIND dn="cn=client[0-9]+,/ { d = $0; sub(/.*dn="cn=client/, "", d); sub(/,.*/, "", d)
			who[cc[1]] = d }
		/ SRCH attr=/ { kind[co] = /nfskeysAttribute/ ? "full" : "stamps"; at[co] = t }
		/ SEARCH RESULT / && (co in kind) { n = $0; sub(/.*nentries=/, "", n); sub(/ .*/, "", n)
			if (cc[1] in who) print at[co], who[cc[1]], kind[co], n, NR; delete kind[co] }'
}
lines() { wc -l <"$LOG"; }
# every client made at least $2 searches from line $1 on
each_searched() {
	[ "$(searches "$1" | awk -v k="$2" '{ c[$2]++ } END { for (i in c) if (c[i] >= k) n++; print n + 0 }')" -eq "$N" ]
}
# every daemon answers nfs://fleet/export/home's actimeo with $1, asked over its socket
served() {
	i=0
	while [ $i -lt "$N" ]; do
		v=$("$NFSATTR" -c "$T_TMP/c$i/nfskeys.conf" -s "$T_TMP/c$i/attrd.sock" \
			get nfs://fleet/export/home 2>/dev/null | awk '$1 == "actimeo" { print $2 }')
		[ "$v" = "$1" ] || return 1
		i=$((i + 1))
	done
}

t_wait_for "served 60" 60
check "every daemon serves the directory's policy after its first sync" served 60
searches >"$T_TMP/first.txt"
awk '!($2 in f) { f[$2] = $3 } END { for (c in f) print c, f[c] }' "$T_TMP/first.txt" |
	sort -n >"$T_TMP/first-kind.txt"
check_eq "the first sync of each daemon is a full read" "$N full" \
	"$(awk '{ k[$2]++ } END { for (x in k) print k[x], x }' "$T_TMP/first-kind.txt" | sort | tr '\n' ' ' | sed 's/ $//')"
# Sync-Splay = 8: first syncs drawn over 9 s.  With 20 daemons (FLEET_N at least 20) fewer
# than 5 distinct seconds has a chance below 1e-4; without a splay they all sync at start,
# in 1 or 2.
distinct=$(awk '!($2 in f) { f[$2] = $1 } END { for (c in f) print f[c] }' "$T_TMP/first.txt" | sort -u | wc -l)
check "first syncs of $N daemons started together fall in $distinct distinct seconds (at least 5)" \
	[ "$distinct" -ge 5 ]

# a quiet spell: two syncs of every daemon, none reading the entries
quiet=$(($(lines) + 1))
t_wait_for "each_searched $quiet 2" 90
check "every daemon synced twice more" each_searched "$quiet" 2
searches "$quiet" >"$T_TMP/quiet.txt"
check_eq "no change: no full read" "0" "$(awk '$3 == "full"' "$T_TMP/quiet.txt" | wc -l)"
# every later sync is spread too: the gaps between one daemon's syncs are Sync-Interval
# plus 0-8 s (2-10 s; without a splay all 2, or 3 when a second boundary falls between)
gaps=$(sort -k2,2n -k1,1n "$T_TMP/quiet.txt" |
	awk '$2 == c { print $1 - t } { c = $2; t = $1 }' | sort -un | wc -l)
check "gaps between syncs of one daemon take $gaps distinct values in seconds (at least 5)" \
	[ "$gaps" -ge 5 ]
check_eq "no change: each search returns the $M entries' stamps" "$M" \
	"$(awk '{ print $4 }' "$T_TMP/quiet.txt" | sort -u | tr '\n' ' ' | sed 's/ $//')"
# the daemon's own count agrees: at least the two quiet syncs unchanged, one full read
stats=$("$NFSATTR" -c "$T_TMP/c0/nfskeys.conf" stats)
check_contains "nfsattr stats counts the unchanged syncs" "ldap_unchanged_total" \
	"$(echo "$stats" | grep -E '^ldap_unchanged_total(\{\})? +([2-9]|[1-9][0-9])')"
check_contains "... and the full reads" "ldap_full_reads_total" \
	"$(echo "$stats" | grep -E '^ldap_full_reads_total(\{\})? +1$')"
check_contains "... also in its JSON" '"name":"ldap_unchanged_total"' \
	"$("$NFSATTR" -c "$T_TMP/c0/nfskeys.conf" --json stats)"

# a change: every daemon gets it, reading the entries once
change=$(($(lines) + 1))
printf 'dn: cn=home,%s\nchangetype: modify\nreplace: nfskeysAttribute\nnfskeysAttribute: actimeo=90\n' "$BASE" |
	ldapmodify -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -y "$SLAPD_ROOTPW_FILE" >/dev/null
t_wait_for "served 90" 90
check "after a change in the directory every daemon serves it" served 90
after=$(($(lines) + 1))
t_wait_for "each_searched $after 2" 90
searches "$change" >"$T_TMP/change.txt"
check_eq "each daemon read the entries exactly once for the change" "$N" \
	"$(awk '$3 == "full" { c[$2]++ } END { for (i in c) if (c[i] == 1) n++; print n + 0 }' "$T_TMP/change.txt")"
check_eq "after it, quiet again: no full read" "0" \
	"$(searches "$after" | awk '$3 == "full"' | wc -l)"
# shellcheck disable=SC2086 # the list of pids, word-split on purpose
check "daemons alive" kill -0 $PIDS

if [ -n "${FLEET_FIGURES:-}" ]; then
	{
		echo "daemons $N, entries $M, Sync-Interval 2, Sync-Splay 8"
		for w in quiet change; do
			awk -v w=$w '{ s[$3]++; e[$3] += $4; t[$1] = 1 } END {
				for (x in t) { if (!lo || x < lo) lo = x; if (x > hi) hi = x }
				printf "%s window %d s: %d searches, %d stamps (%d entries), %d full (%d entries)\n",
					w, hi - lo + 1, s["stamps"] + s["full"], s["stamps"], e["stamps"],
					s["full"], e["full"] }' "$T_TMP/$w.txt"
		done
		# what one search of each kind returns, as LDIF (about the bytes on the wire)
		for a in entryCSN "entryCSN modifyTimestamp" \
			"nfskeysDomain nfskeysPath nfskeysAttribute entryCSN modifyTimestamp"; do
			# shellcheck disable=SC2086 # the attribute list, word-split on purpose
			b=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" \
				-y "$SLAPD_ROOTPW_FILE" -b "$BASE" '(objectClass=nfskeysDirectoryPolicy)' \
				$a | wc -c)
			echo "search for $a: $b bytes of LDIF"
		done
	} >"$FLEET_FIGURES"
fi
