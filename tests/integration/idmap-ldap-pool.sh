#!/bin/sh
# doc/security/FINDINGS.md D7: the ldap idmap backend runs concurrent searches in parallel on a
# pool of connections ([LDAP] Pool-Size).  A real slapd made slow per search (a proxy
# holds every chunk 300 ms, so a search takes at least 0.6 s); nfskeys-idmapd with 8
# workers; 8 lookups of distinct names at once.  With Pool-Size = 1 they run one after
# the other; with Pool-Size = 8 they overlap.  The proxy says which (tcp-proxy.py: how
# many chunks it held at once), not a clock.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/slapd.sh"
. "$top_srcdir/tests/harness/faults.sh"

t_idmapd_slapd_users $(seq 0 40)
plan 7
t_proxy_start "$SLAPD_PORT" || fail_all "the TCP proxy did not start"

# run_round FIRST: lookups of user FIRST .. FIRST+7 at once, on 8 connections of one
# client process (tests/harness/idmapd-stress.py); fails unless all 8 were answered
run_round() {
	python3 "$top_srcdir/tests/harness/idmapd-stress.py" "$IDMAPD_SOCK" parallel 8 "$1" 8 \
		ldap.test >"$T_TMP/round.out" 2>&1
	grep -qx "answered=8" "$T_TMP/round.out" && grep -qx "failed=0" "$T_TMP/round.out"
}

# measure POOL: start the daemon with that pool, warm its connections (a first round
# opens and binds them), then a round of 8 new names through the slow proxy; sets OK and
# HELD (the most search chunks the proxy held at once)
measure() {
	t_proxy_mode forward
	t_idmapd_conf "[General]" "Domain = ldap.test" "[Translation]" "Method = ldap" \
		"[LDAP]" "URI = ldap://127.0.0.1:$PROXY_PORT/" "Base = $S" \
		"User-Base = ou=people,$S" "Timeout = 5" "Search-Timeout = 20" "Pool-Size = $1" \
		"[Idmapd]" "Workers = 8" "Refresh-Ahead = 0"
	t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; fail_all "idmapd did not start"; }
	run_round "$2" >/dev/null || diag "warm-up round with Pool-Size $1 failed"
	t_proxy_mode delay 300
	run_round $(($2 + 8))
	OK=$?
	HELD=$(t_proxy_most_held)
	t_idmapd_stop
}

measure 1 0
check_eq "Pool-Size = 1: all 8 lookups answered" 0 "$OK"
check_eq "... one after the other: the proxy never held two of their chunks at once" 1 "$HELD"
measure 8 16
check_eq "Pool-Size = 8: all 8 lookups answered" 0 "$OK"
check "... they overlap: the proxy held $HELD of their chunks at once (at least 2)" \
	test "$HELD" -ge 2

# The key is checked: a bad value is refused with a message naming it
t_idmapd_conf "[Translation]" "Method = ldap" "[LDAP]" "URI = $SLAPD_URI" "Base = $S" \
	"Pool-Size = 0"
out=$("$NFSKEYS" -c "$IDMAPD_CONF" idmap lookup name-to-uid user1@ldap.test 2>&1)
check_contains "Pool-Size = 0 is refused, naming the key" "Pool-Size = 0" "$out"
t_idmapd_conf "[Translation]" "Method = ldap" "[LDAP]" "URI = $SLAPD_URI" "Base = $S" \
	"Pool-Size = 65"
out=$("$NFSKEYS" -c "$IDMAPD_CONF" idmap lookup name-to-uid user1@ldap.test 2>&1)
check_contains "Pool-Size = 65 is refused" "Pool-Size = 65" "$out"
check_contains "... with the range" "from 1 to 64" "$out"
