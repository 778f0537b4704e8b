#!/bin/sh
# The ldap idmap backend's connection pool (make bench): nfskeys-idmapd with 8 workers
# against a real slapd, 8 clients each looking up names new to the cache one at a time
# (every lookup is a search), for [LDAP] Pool-Size 1, 2, 4 and 8.  Twice: slapd on the
# loopback as it is, and behind a proxy that holds every chunk LDAP_POOL_DELAY_MS (default
# 5) milliseconds, a directory a few network hops away.  Prints lookups per second and
# the latency per lookup.  LDAP_POOL_N: lookups per run (default 800; the directory holds
# that many users per run); LDAP_POOL_SIZES: the pool sizes (default "1 2 4 8").
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/slapd.sh"
. "$top_srcdir/tests/harness/faults.sh"
N=${LDAP_POOL_N:-800}
DELAY=${LDAP_POOL_DELAY_MS:-5}
POOLS=${LDAP_POOL_SIZES:-1 2 4 8}
RUNS=0
for p in $POOLS; do RUNS=$((RUNS + 2)); done
NFSKEYS_PLUGIN_DIR=${NFSKEYS_PLUGIN_DIR:-$top_builddir/plugins/.libs}
export NFSKEYS_PLUGIN_DIR

[ -f "$NFSKEYS_PLUGIN_DIR/idmap-ldap.so" ] || { echo "the ldap plugin was not built: skipped"; exit 0; }
t_slapd_start || { echo "slapd cannot run here: skipped"; exit 0; }
S=$SLAPD_SUFFIX
{
	t_ldif_ou people
	i=0
	while [ $i -lt $((N * RUNS)) ]; do t_ldif_posix_user "user$i" $((10000 + i)); i=$((i + 1)); done
} >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" >/dev/null || { echo "ldapadd failed"; exit 1; }
t_proxy_start "$SLAPD_PORT" || { echo "the proxy did not start"; exit 1; }
TAP_PLANNED=0 # no TAP here

echo "-- idmap ldap backend: $N new names, 8 clients, nfskeys-idmapd Workers = 8"
echo "   (load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs)"
printf '%-28s %9s %10s %9s %9s\n' "directory" "Pool-Size" "lookups/s" "p50 ms" "p99 ms"
first=0
for where in loopback delayed; do
	for p in $POOLS; do
		if [ "$where" = loopback ]; then uri=$SLAPD_URI; else uri="ldap://127.0.0.1:$PROXY_PORT/"; fi
		t_proxy_mode delay "$DELAY"
		t_idmapd_conf "[General]" "Domain = ldap.test" "[Translation]" "Method = ldap" \
			"[LDAP]" "URI = $uri" "Base = $S" "User-Base = ou=people,$S" \
			"Pool-Size = $p" "[Idmapd]" "Workers = 8" "Refresh-Ahead = 0" \
			"Max-Queue-Per-User = 4096"
		t_idmapd_start || { echo "idmapd did not start"; exit 1; }
		python3 "$top_srcdir/tests/harness/idmapd-stress.py" "$IDMAPD_SOCK" parallel 8 \
			"$first" "$N" ldap.test >"$T_TMP/run.out" 2>"$T_TMP/run.err"
		t_idmapd_stop
		sed 's/^/   /' "$T_TMP/run.err"
		[ -s "$T_TMP/run.err" ] && grep -i "ldap\|error\|fail" "$T_TMP/idmapd.log" | tail -3 | sed 's/^/   daemon: /'
		v() { sed -n "s/^$1=//p" "$T_TMP/run.out"; }
		[ "$(v failed)" = 0 ] || echo "   ($(v failed) lookups failed)"
		label=$where
		[ "$where" = delayed ] && label="delayed ${DELAY} ms a chunk"
		printf '%-28s %9s %10s %9s %9s\n' "$label" "$p" "$(v per_s)" "$(v p50_ms)" "$(v p99_ms)"
		first=$((first + N))
	done
done
