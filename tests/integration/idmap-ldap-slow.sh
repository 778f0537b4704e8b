#!/bin/sh
# One slow search on a live directory fails alone; a silent directory backs the ldap
# backend off, said once.  A real slapd behind the fault proxy (tcp-proxy.py), the ldap
# backend with a pool of 4 connections in nfskeys-idmapd (4 workers):
#  1. slapd stopped (SIGSTOP): 4 lookups at once time out with every connection silent:
#     the backoff is logged once, not once per connection, a lookup after them fails
#     with "Host is down", and no search is taken for a slow one.
#  2. hold-match: the proxy holds every request naming one user (sloth, then slug) on its
#     connection while the others pass.  While that search waits, other names are looked
#     up (replies on other connections); its Search-Timeout then fails that lookup alone
#     ("Connection timed out", not "Host is down"), the next new name is answered, no
#     backoff is logged ("next try in"), the slow search is logged once (a second one
#     within the minute is not logged again), and the name resolves once the proxy lets
#     its searches pass.
#  3. a principal's group search (memberUid) held: the lookup fails rather than answer
#     with the primary gid alone, and has its group once the proxy lets it pass.
# No time is asserted: the proxy's record says a search was held, every wait is a hang
# guard (GUARD).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/slapd.sh"
. "$top_srcdir/tests/harness/faults.sh"

t_idmapd_slapd_users $(seq 0 99)
{
	t_ldif_posix_user sloth 10500
	t_ldif_posix_user slug 10501
	t_ldif_ou groups
	printf 'dn: cn=herd,ou=groups,%s\nobjectClass: posixGroup\ncn: herd\n' "$S"
	printf 'gidNumber: 20009\nmemberUid: sloth\n\n'
} >"$T_TMP/slow.ldif"
t_slapd_load "$T_TMP/slow.ldif" || fail_all "ldapadd of sloth, slug and their group failed"
t_proxy_start "$SLAPD_PORT" || skip_all "the TCP proxy did not start (python3)"
plan 21
GUARD=120

t_idmapd_conf "[General]" "Domain = ldap.test" "Local-Realms = LDAP.TEST" "[Translation]" \
	"Method = ldap" "[LDAP]" "URI = ldap://127.0.0.1:$PROXY_PORT/" "Base = $S" \
	"User-Base = ou=people,$S" "Group-Base = ou=groups,$S" \
	"Timeout = 5" "Search-Timeout = 5" "Pool-Size = 4" "Backoff-Max = 60" \
	"[Idmapd]" "Workers = 4" "Refresh-Ahead = 0" "Stale-TTL = 1"
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; fail_all "idmapd did not start"; }
LOG="$T_TMP/idmapd.log"

# ask [--json] KIND KEY: the daemon's answer (or the error); look NAME: name-to-uid
# NAME@ldap.test
ask() { timeout $GUARD "$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup "$@" 2>&1; }
look() { ask name-to-uid "$1@ldap.test"; }
# log_count TEXT: lines of the daemon's log holding TEXT since the mark (log_mark)
log_mark() { LOG_MARK=$(wc -l <"$LOG"); }
log_count() { tail -n +$((LOG_MARK + 1)) "$LOG" | grep -c -F -- "$1"; }

check_contains "through the proxy: user0 -> 10000" 10000 "$(look user0)"
NEXT=1 # the next userN never looked up: a search of its own

# 1. slapd stopped: 4 lookups at once, all silent (the search on the warm connection,
# binds on the others)
pid=$(cat "$SLAPD_DIR/slapd.pid")
log_mark
kill -STOP "$pid"
t_on_exit "kill -CONT $pid"
FAILED='backend_failures_total{backend="failed"}'
f0=$(t_idmapd_stat "$FAILED")
# (one client, 4 threads started together: the timeouts fall within the first backoff)
python3 "$top_srcdir/tests/harness/idmapd-stress.py" "$IDMAPD_SOCK" parallel 4 $NEXT 4 \
	ldap.test >"$T_TMP/down.out" 2>&1
f1=$(t_idmapd_stat "$FAILED")
backoffs=$(log_count 'next try in') slows=$(log_count 'took longer than [LDAP] Search-Timeout')
a=$(look user$((NEXT + 4)))
kill -CONT "$pid"
check_eq "slapd stopped: the 4 lookups at once all failed (the daemon's count)" 4 \
	$((${f1:-0} - ${f0:-0}))
check_eq "... the backend backed off, logged once (not once per connection)" 1 "$backoffs"
check_eq "... no search was taken for a slow one" 0 "$slows"
check_contains "... a lookup after them: the server is down" "Host is down" "$a"
NEXT=$((NEXT + 5))
# slapd back: the backend tries again after its backoff (1 s, then 2 s)
t_wait_for "look user$NEXT | grep -q $((10000 + NEXT))" $GUARD
check_contains "slapd back: the backend answers again" $((10000 + NEXT)) "$(look user$NEXT)"
NEXT=$((NEXT + 1))

# 2. one search slow, the server answering the others
# slow_round TEXT KIND KEY: the proxy holds the searches holding TEXT; KIND KEY is looked
# up in the background and, while it waits, new names one after the other (each a reply
# on another connection after the held search went out).  Sets SLOW (KEY's answer),
# OTHERS (how many others were asked) and WRONG (users answered with anything but their
# uid).
slow_round() {
	t_proxy_mode hold-match "$1"
	ask "$2" "$3" >"$T_TMP/slow.out" &
	_pid=$!
	t_wait_for "[ \$(t_proxy_count held-match) -ge 1 ]" $GUARD
	OTHERS=0 WRONG=0
	while kill -0 $_pid 2>/dev/null; do
		if [ $NEXT -lt 90 ]; then
			_a=$(look user$NEXT)
			case "$_a" in
			*$((10000 + NEXT))*) ;;
			*) WRONG=$((WRONG + 1)) && diag "user$NEXT: $_a" ;;
			esac
		else # (users all asked: a name nobody has is a reply too)
			look ghost$NEXT >/dev/null
		fi
		OTHERS=$((OTHERS + 1)) NEXT=$((NEXT + 1))
		sleep 0.2 # (not every user in one round)
	done
	wait $_pid
	SLOW=$(cat "$T_TMP/slow.out")
}

log_mark
slow_round sloth name-to-uid sloth@ldap.test
check "sloth's search was held on its connection ($(t_proxy_count held-match) held)" \
	test "$(t_proxy_count held-match)" -ge 1
check_eq "while it waited, the other names were answered right ($OTHERS asked)" 0 "$WRONG"
check_contains "sloth's lookup timed out on its own" "Connection timed out" "$SLOW"
a=$(look user$NEXT)
check_contains "the next new name is answered right away (no backoff)" $((10000 + NEXT)) "$a"
NEXT=$((NEXT + 1))
check_eq "no backoff was logged" 0 "$(log_count 'next try in')"
check_eq "the slow search was logged once" 1 "$(log_count 'took longer than [LDAP] Search-Timeout')"
check_eq "... naming the kind of search, not the name" 0 "$(log_count sloth)"
check_contains "... saying the server was not backed off" "the server is not backed off" \
	"$(grep -F 'Search-Timeout' "$LOG" | tail -n 1)"

slow_round slug name-to-uid slug@ldap.test
check_contains "a second slow search (slug) fails alone too" "Connection timed out" "$SLOW"
check_eq "... and is not logged again within the minute" 1 \
	"$(log_count 'took longer than [LDAP] Search-Timeout')"
check_eq "... still no backoff" 0 "$(log_count 'next try in')"

# the proxy lets every search pass again: sloth resolves once its failure expires from
# the daemon's cache (Stale-TTL 1 s)
t_proxy_mode forward
t_wait_for "look sloth | grep -q 10500" $GUARD
check_contains "with the delay gone, sloth resolves" 10500 "$(look sloth)"

# 3. a principal whose group search (memberUid) is the slow one: the lookup fails, not
# answered with the primary gid alone (a wrong answer the cache would keep)
slow_round memberUid principal-to-ids sloth@LDAP.TEST
check_contains "principal whose group search is slow: the lookup fails" \
	"Connection timed out" "$SLOW"
t_proxy_mode forward
groups() {
	ask --json principal-to-ids sloth@LDAP.TEST | sed -n 's/.*"groups":\(\[[^]]*\]\).*/\1/p'
}
t_wait_for '[ "$(groups)" = "[20000,20009]" ]' $GUARD
check_eq "with the delay gone, the principal has its groups" "[20000,20009]" "$(groups)"

if [ "$TAP_FAILED" -gt 0 ]; then
	diag "the daemon's ldap messages:"
	grep -F 'idmap ldap' "$LOG" | sed 's/^/#   /'
fi
check "the daemon stops cleanly" t_idmapd_stop
