#!/bin/sh
# nfskeys-idmapd's configurations for other network namespaces ([Kernel] Namespace-Dir):
# a good directory is loaded at start and at reload; a file that cannot be used (no [Match],
# a backend that does not load, writable by others, a directory root does not own) stops
# the start with exit status 3, or the reload with the old configuration still serving,
# and the message names the file and the cause; Namespaces = none reads no such directory.
# (Which namespace takes which file is checked on a real kernel: nfs-netns-scale.ktest.)
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"

plan 17

NSD=$T_TMP/namespaces.d
mkdir -p "$NSD"
chmod 0755 "$NSD"
good_profile() {
	printf '[Match]\nNetns = tenant-*\n[General]\nDomain = tenant.test\n[Translation]\nMethod = static\n[Static]\nalice@tenant.test = 7001\n' \
		>"$NSD/tenant.conf"
	chmod 0644 "$NSD/tenant.conf"
}
good_profile
t_idmapd_conf "[Kernel]" "Namespace-Dir = $NSD"
cp "$IDMAPD_CONF" "$T_TMP/good.conf"

# start_fails WHAT CAUSE: the daemon refuses to start (3) and says CAUSE
start_fails() {
	out=$(timeout 20 "$IDMAPD" --foreground --config "$IDMAPD_CONF" 2>&1)
	rc=$?
	check_eq "$1: the daemon does not start (exit 3)" 3 "$rc"
	check_contains "... and says why, naming the file" "$2" "$out"
}

check "a good Namespace-Dir: the daemon starts" t_idmapd_start
check_contains "... and answers as before (alice 2001)" "2001" \
	"$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test)"
t_idmapd_stop

printf '[General]\nDomain = tenant.test\n' >"$NSD/nomatch.conf"
start_fails "a file without [Match]" "$NSD/nomatch.conf: [Match] names no namespace"
rm -f "$NSD/nomatch.conf"

printf '[Match]\nNetns = x\n[Translation]\nMethod = no-such-backend\n' >"$NSD/badbackend.conf"
start_fails "a file naming a backend that does not load" "$NSD/badbackend.conf is not usable"
rm -f "$NSD/badbackend.conf"

printf '[Match\nNetns = x\n' >"$NSD/malformed.conf"
start_fails "a malformed file" "malformed.conf"
rm -f "$NSD/malformed.conf"

if [ "$(id -u)" = 0 ]; then
	chmod 0666 "$NSD/tenant.conf"
	start_fails "a file others may write" "$NSD/tenant.conf: writable by its group or others"
	good_profile
	chown 65534 "$NSD"
	start_fails "a directory root does not own" "Namespace-Dir $NSD: not owned by root"
	chown 0 "$NSD"
else
	skip "as root only: a file others may write (root's files are what is trusted)"
	skip "... and says why"
	skip "as root only: a directory root does not own"
	skip "... and says why"
fi

# --- reload: a broken file is refused, the old configuration keeps serving
check "the daemon starts again with the good directory" t_idmapd_start
gen=$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats | awk '$1 == "config_generation" { print $2 }')
printf '[General]\nDomain = tenant.test\n' >"$NSD/nomatch.conf"
out=$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd reload 2>&1)
check_contains "a reload into a file without [Match] is refused with the cause" \
	"[Match] names no namespace" "$out"
check_eq "... and the old configuration serves (same generation)" "$gen" \
	"$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats | awk '$1 == "config_generation" { print $2 }')"
rm -f "$NSD/nomatch.conf"
check_contains "a reload after the fix is taken" "generation" \
	"$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd reload 2>&1)"
t_idmapd_stop

# --- Namespaces = none: the directory is not read, however broken
printf '[General]\nDomain = x\n' >"$NSD/nomatch.conf"
t_idmapd_conf "[Kernel]" "Namespace-Dir = $NSD" "Namespaces = none"
check "Namespaces = none: a broken Namespace-Dir is not read" t_idmapd_start
t_idmapd_stop
