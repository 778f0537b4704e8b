#!/bin/sh
# A reload while a lookup is in flight on the worker pool: the lookup, started under the
# old configuration (ldap backend, real slapd held with SIGSTOP), finishes after the
# new configuration (static backend, other ids) was swapped in, and is answered entirely
# by the old one; the old engine stays alive until it is done (checked for use after free
# under ASan); requests after the swap get the new configuration.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/slapd.sh"

t_idmapd_slapd_users 1 5
plan 8

head_conf() {
	printf '[General]\nDomain = ldap.test\n[Idmapd]\nSocket = %s\n' "$IDMAPD_SOCK"
	printf 'Kernel-Keyrings = nfskeys-test-none-%s\nStale-Limit = 0\n' "$$"
}
{
	head_conf
	printf '[Translation]\nMethod = ldap\n[LDAP]\nURI = %s\nBase = %s\n' "$SLAPD_URI" "$S"
	printf 'User-Base = ou=people,%s\nTimeout = 5\nSearch-Timeout = 10\n' "$S"
} >"$IDMAPD_CONF"
printf '[Idmapd]\nSocket = %s\n' "$IDMAPD_SOCK" >"$T_TMP/client.conf"
NK() { "$NFSKEYS" -c "$T_TMP/client.conf" "$@"; }
gen() { NK idmapd ping | sed 's/.*generation \([0-9]*\).*/\1/'; }

t_idmapd_start
check_contains "lookup through LDAP (old configuration)" "10001	" \
	"$(NK idmapd lookup name-to-uid user1@ldap.test)"
g0=$(gen)

# Hold the directory, start a lookup that needs it, then reload to a static table.
kill -STOP "$(cat "$SLAPD_DIR/slapd.pid")"
t_on_exit "kill -CONT $(cat "$SLAPD_DIR/slapd.pid")"
# (the program itself in the background, not a subshell: its own exit status)
"$NFSKEYS" -c "$T_TMP/client.conf" idmapd --timeout 30 lookup name-to-uid user5@ldap.test \
	>"$T_TMP/inflight.out" 2>&1 &
inflight=$!
sleep 0.3
{
	head_conf
	printf '[Translation]\nMethod = static\n[Static]\nuser5@ldap.test = 77005\n'
} >"$IDMAPD_CONF.new"
mv "$IDMAPD_CONF.new" "$IDMAPD_CONF"
out=$(NK idmapd reload 2>&1)
check_contains "the reload completes while the lookup waits on the worker pool" \
	"generation $((g0 + 1))" "$out"
check "(the lookup is still waiting)" kill -0 "$inflight"
check_contains "a request after the swap uses the new configuration" "77005	" \
	"$(NK idmapd lookup name-to-uid user5@ldap.test)"

# The directory answers: the lookup that started under the old configuration gets the
# old configuration's answer, from the old engine kept alive for it.
kill -CONT "$(cat "$SLAPD_DIR/slapd.pid")"
wait "$inflight"
check_eq "the in-flight lookup succeeds" 0 $?
check_contains "answered entirely by the old configuration (ldap)" "10005	ttl=" \
	"$(cat "$T_TMP/inflight.out")"
check_contains "and the new one stays in force (its answer was not cached)" "77005	" \
	"$(NK idmapd lookup name-to-uid user5@ldap.test)"

t_idmapd_stop
rc=$?
check_eq "the daemon stops cleanly (exit 0; no use after free under ASan)" 0 "$rc"
[ "$rc" = 0 ] || sed 's/^/# /' "$T_TMP/idmapd.log" | tail -40
