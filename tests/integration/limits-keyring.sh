#!/bin/sh
# The key quota of the requesting user full: an unprivileged uid (its quota applies, root's
# is huge) fills its key byte quota (/proc/key-users, kernel.keys.maxbytes) so that the
# kernel can still create the key under construction but not give it its payload.  The
# upcall helper then fails to instantiate it: it says so (the errno named), rejects the key
# with that error so the request fails at once, and leaves every other key alone.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (request-key routes, another uid)"
command -v setpriv >/dev/null || skip_all "setpriv not installed (util-linux)"
[ -r /proc/key-users ] || skip_all "no /proc/key-users"

t_idmapd_conf
helper_exec="$top_builddir/tools/nfskeys-upcall"
[ -x "$top_builddir/tools/.libs/nfskeys-upcall" ] && helper_exec="$top_builddir/tools/.libs/nfskeys-upcall"
cat >"$T_TMP/helper.sh" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
LD_LIBRARY_PATH='$top_builddir/libnfskeys/.libs'; export LD_LIBRARY_PATH
exec '$helper_exec' -c '$IDMAPD_CONF' "\$@" 2>>'$T_TMP/helper.err'
SH
chmod +x "$T_TMP/helper.sh"
t_route_upcalls "$T_TMP/helper.sh" || skip_all "needs keyctl and a writable /etc/request-key.d"
: >"$T_TMP/helper.err"
chmod 755 "$T_TMP"
chmod 644 "$T_TMP/helper.err"

# A uid of our own (no other test shares its quota), no passwd entry needed.
Q=$((61000 + $$ % 1000))
D="uid:alice@example.test"   # the key under construction costs 23 bytes (+4), its payload 5
# Can this uid have upcalls at all?  (On some machines request-key answers a non-root
# requester with ENOENT before any helper runs; then there is nothing to test here.)
printf 'create\tuser\t*\t%s-probe\t/bin/keyctl instantiate %%k 1 %%S\n' "$T_CALLOUT" \
	>"/etc/request-key.d/$T_CALLOUT-probe.conf"
t_on_exit "rm -f '/etc/request-key.d/$T_CALLOUT-probe.conf'"
if ! probe=$(timeout 20 setpriv --reuid=$Q --regid=$Q --clear-groups keyctl session - \
	keyctl request2 user "probe:$$" "$T_CALLOUT-probe" @s 2>&1); then
	skip_all "request-key runs no upcall for a non-root requester here ($(echo "$probe" | tail -n1))"
fi
plan 7
cat >"$T_TMP/inner.sh" <<'EOF'
# Run as the quota uid, in a new session keyring.  Prints key=value lines.
Q=$1 D=$2 CALLOUT=$3
quota() { awk -v u="$Q:" '$1 == u { split($5, b, "/"); print b[1], b[2] }' /proc/key-users; }
for i in 1 2 3 4 5; do keyctl add user "unrelated-$i" "value-$i" @s >/dev/null || exit 1; done
set -- $(quota)
used=$1 max=$2
# Fillers so that 28 bytes stay free: enough for the key (23, +4 of accounting), not
# for its payload too (+5).
# (The kernel's accounting has its own overheads: measure and correct once.)
# (The kernel's accounting has its own overheads: a big filler leaving ~100 bytes, then a
# small one measured and corrected once; keyctl update takes at most a page.)
keyctl add user filler "$(head -c $((max - used - 140)) /dev/zero | tr '\0' x)" @s >/dev/null ||
	exit 1
set -- $(quota)
p=$(($2 - $1 - 28 - 12))
f=$(keyctl add user filler2 "$(head -c $p /dev/zero | tr '\0' x)" @s) || exit 1
set -- $(quota)
p=$((p + $2 - $1 - 28))
head -c $p /dev/zero | tr '\0' x | keyctl pupdate "$f" || exit 1
set -- $(quota)
echo "free=$(($2 - $1))"
t0=$(date +%s%N)
err=$(keyctl request2 user "$D" "$CALLOUT" @s 2>&1) && echo "request=ok" || echo "request=failed"
echo "ms=$((($(date +%s%N) - t0) / 1000000))"
echo "error=$err"
for i in 1 2 3 4 5; do
	k=$(keyctl search @s user "unrelated-$i" 2>/dev/null) && printf '%s ' "$(keyctl print "$k")"
done
echo
keyctl search @s user filler >/dev/null 2>&1 && keyctl search @s user filler2 >/dev/null 2>&1 &&
	echo "filler=kept" || echo "filler=gone"
EOF
setpriv --reuid=$Q --regid=$Q --clear-groups keyctl session - sh "$T_TMP/inner.sh" \
	"$Q" "$D" "$T_CALLOUT" >"$T_TMP/inner.out" 2>&1
v() { sed -n "s/^$1=//p" "$T_TMP/inner.out"; }
check_eq "uid $Q's key bytes filled to 28 free (room for the key, not its payload)" 28 "$(v free)"
check_eq "the request fails" failed "$(v request)"
check_contains "... with the quota error the helper rejected it with" "Disk quota exceeded" "$(v error)"
check "... at once ($(v ms) ms < 3000)" test "$(v ms)" -lt 3000
check_contains "the helper says why" \
	"nfskeys-upcall: $D: cannot instantiate key" "$(cat "$T_TMP/helper.err")"
check_eq "the user's other keys are all intact" "value-1 value-2 value-3 value-4 value-5 " \
	"$(sed -n '/^error=/{n;p}' "$T_TMP/inner.out")"
check_eq "... the fillers too" kept "$(v filler)"
[ "$TAP_FAILED" = 0 ] || sed 's/^/# /' "$T_TMP/inner.out" "$T_TMP/helper.err"
