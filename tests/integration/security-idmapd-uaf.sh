#!/bin/sh
# doc/security/FINDINGS.md D1: a use-after-free in nfskeys-idmapd's answer path.  Answering a cache
# entry's waiters used to dispatch the connection's next buffered call from inside the
# reply (rpc-server's "was_full" re-entry); that call added a new key, the LRU evicted
# the entry being answered, and job_done went on walking freed memory.  Pipelined
# lookups on several connections (bursts larger than Max-Inflight) with a cache of 2
# entries make every answer evict.  Meaningful under --enable-asan (the crash is
# reported there); without ASan it still checks that every call is answered.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"

plan 5
STRESS="python3 $top_srcdir/tests/harness/idmapd-stress.py"
val() { sed -n "s/^$1=//p" "$T_TMP/stress.out"; }
t_is_asan || diag "not an ASan build: a use-after-free may go unnoticed here"

t_idmapd_conf "[Idmapd]" "Cache-Size = 2" "Max-Inflight = 2" "Workers = 2" \
	"Refresh-Ahead = 0" "Negative-TTL = 0"
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }

$STRESS "$IDMAPD_SOCK" pipeline 4 24 40 >"$T_TMP/stress.out" 2>&1
sed 's/^/# /' "$T_TMP/stress.out"
check_eq "pipelined lookups with evictions: every call answered (answered/expected)" \
	"$(val expected)/$(val expected)" "$(val answered)/$(val expected)"
check_eq "... none lost, none with a wrong xid or status" "0/0" "$(val lost)/$(val wrong)"
check "... the daemon is alive" kill -0 "$IDMAPD_PID"
check "... evictions happened ($(t_idmapd_stat cache_evictions_total))" \
	test "$(t_idmapd_stat cache_evictions_total)" -gt 100
t_idmapd_stop
if grep -q "Sanitizer" "$T_TMP/idmapd.log"; then
	not_ok "no sanitizer report in the daemon's log"
	sed -n '1,40s/^/# /p' "$T_TMP/idmapd.log"
else
	ok "no sanitizer report in the daemon's log"
fi
