#!/bin/sh
# nfskeys idmap lookup/reverse with many keys through nfskeys-idmapd: one connection and
# batched calls (idmapd_client_lookup_many), answers in the order given, an error per
# key that does not map, keys from stdin with '-' (more than one batch), --local and the
# in-process fallback when the daemon is gone giving the same answers.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
plan 14

NK() { $T_VALGRIND "$NFSKEYS" -c "$IDMAPD_CONF" "$@"; }
stat() { "$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats | awk -v n="$1" '$1 == n { print $2 }'; }
norm() { sed 's/, ttl [0-9]*s//; s/, cached//'; } # the daemon's TTLs count down

t_idmapd_conf
check "daemon starts" t_idmapd_start

# 1. Many keys on the command line: one connection, every key asked of the daemon.
set -- user3@example.test nosuch@example.test alice@example.test user150@example.test \
	bad@other@x user0@example.test
l0=$(stat 'requests_total{op="lookup"}')
c0=$(stat connections_total)
NK idmap lookup "$@" >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "a key that does not map fails the run (exit 1)" 1 $?
check_eq "the others are answered in order" \
	"user3@example.test -> 10003 (static) alice@example.test -> 2001 (static) user150@example.test -> 10150 (static) user0@example.test -> 10000 (static)" \
	"$(norm <"$T_TMP/out" | tr '\n' ' ' | sed 's/ $//')"
check_contains "an error per key that failed (nosuch)" \
	"idmap lookup: nosuch@example.test: no mapping" "$(cat "$T_TMP/err")"
check_contains "(bad@other@x)" "idmap lookup: bad@other@x:" "$(cat "$T_TMP/err")"
# (the stats call counts its own connection)
check_eq "over one connection" 1 "$(($(stat connections_total) - c0 - 1))"
check_eq "all six asked of the daemon" 6 "$(($(stat 'requests_total{op="lookup"}') - l0))"
check_contains "a second run is answered from the daemon's cache" \
	"user3@example.test -> 10003 (static, cached" "$(NK idmap lookup user3@example.test)"

# 2. reverse too, with its own per-key errors.
out=$(NK idmap reverse 10007 4000000 2001 2>&1)
check_eq "reverse through the daemon, in order, with the error in place" \
	"10007 -> user7@example.test (static) nfskeys: idmap reverse: 4000000: no mapping (see 'nfskeys idmap explain') 2001 -> alice@example.test (static)" \
	"$(printf '%s\n' "$out" | norm | tr '\n' ' ' | sed 's/ $//')"

# 3. Keys from stdin: 1500 lines (two batches), blank lines skipped, order kept.
awk 'BEGIN { for (i = 0; i < 1500; i++) { if (i % 500 == 7) print ""
	printf "user%d@example.test\n", (i * 37) % 260 } }' >"$T_TMP/keys"
l0=$(stat 'requests_total{op="lookup"}')
NK idmap lookup --nobody - <"$T_TMP/keys" >"$T_TMP/daemon.out" 2>&1
check_eq "1500 keys from stdin (--nobody: exit 0)" 0 $?
check_eq "all asked of the daemon" 1500 "$(($(stat 'requests_total{op="lookup"}') - l0))"
"$NFSKEYS" -c "$IDMAPD_CONF" idmap lookup --nobody --local - <"$T_TMP/keys" >"$T_TMP/local.out" 2>&1
check_eq "--local does not ask it" 1500 "$(($(stat 'requests_total{op="lookup"}') - l0))"
# nobody answers carry the engine's reason and TTL wording; compare the mappings
cut -d' ' -f1-3 "$T_TMP/daemon.out" >"$T_TMP/d"
cut -d' ' -f1-3 "$T_TMP/local.out" >"$T_TMP/l"
check "and the answers are the in-process ones, line for line" cmp "$T_TMP/d" "$T_TMP/l"

# 4. The daemon gone: the same lookup falls back to the engine in this process.
t_idmapd_stop
NK idmap lookup --nobody - <"$T_TMP/keys" 2>&1 | cut -d' ' -f1-3 >"$T_TMP/f"
check "without the daemon: the same answers in process" cmp "$T_TMP/f" "$T_TMP/l"
