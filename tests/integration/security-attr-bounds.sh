#!/bin/sh
# doc/security/FINDINGS.md D4, D10: attrd against a local user who fills its store, leaves
# policy behind removed directories, or asks from a namespace of its own.
# - per-user limits ([Attrd] Max-Policies-Per-User, Max-Bytes-Per-User); root and the
#   admin group are not limited; a mkdir / set / rmdir loop stays within them;
# - a policy is keyed to its directory's file handle: another user's new directory of the
#   same name is not bound by it (dropped when it sets, and by the orphan sweep at reload
#   and every Orphan-Check-Interval);
# - a caller in `unshare -Urm` + chroot gets the directory's real identity, and a caller
#   whose mount table is longer than the daemon reads (4 MiB) is refused at once.
# Real daemon, real SQLite store, real user and mount namespaces; other uids run the
# 0755 install.
. "$top_srcdir/tests/harness/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (other uids, the daemon's store)"
command -v setpriv >/dev/null || skip_all "setpriv missing"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 missing"

plan 29
chmod 755 "$T_TMP"
ATTRD_CONF="$T_TMP/nfskeys.conf"
. "$top_srcdir/tests/harness/attrd.sh"
SOCK="$T_TMP/attrd.sock"
mkdir -m 755 "$T_TMP/store"
write_conf() {
	printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\nAdmin-Group = users\n' \
		"$T_TMP/store/attr.db" "$SOCK" >"$ATTRD_CONF"
	printf 'Max-Policies-Per-User = 3\nMax-Bytes-Per-User = 2500\nOrphan-Check-Interval = %s\n' \
		"$1" >>"$ATTRD_CONF"
	chmod 644 "$ATTRD_CONF"
}
write_conf 1d
t_attrd_start -v || fail_all "nfskeys-attrd did not start: $(tail -5 "$ATTRD_LOG")"
t_ou_load
NA_OU=$(t_ou nfsattr)
na() { "$NFSATTR" -c "$ATTRD_CONF" "$@"; }
# as UID: nfsattr ARGS as that uid (no groups)
as() {
	_u=$1
	shift
	setpriv --reuid="$_u" --regid="$_u" --clear-groups $T_OU_ENV "$NA_OU" -c "$ATTRD_CONF" "$@"
}
run_as() {
	_u=$1
	shift
	setpriv --reuid="$_u" --regid="$_u" --clear-groups "$@"
}
# the explicit attributes of DIR, "key=value ..." in order; when nfsattr or the parse fails,
# a line saying so (never "", which the checks expect of a directory without policy)
attrs() {
	if ! na get --json "$1" >"$T_TMP/attrs.json" 2>"$T_TMP/attrs.err"; then
		echo "(nfsattr get failed: $(head -n1 "$T_TMP/attrs.err"))"
		return 1
	fi
	python3 -c 'import json,sys
print(" ".join(a["key"] + "=" + a["value"] for a in json.load(sys.stdin)["attributes"]))' \
		<"$T_TMP/attrs.json" 2>&1 || { echo "(bad JSON from nfsattr get)"; return 1; }
}
reload() {
	_n=$(grep -c 'reloaded' "$ATTRD_LOG")
	kill -HUP "$ATTRD_PID"
	t_wait_for "[ \$(grep -c 'reloaded' '$ATTRD_LOG') -gt $_n ]" 10
}

# --- item 4: at most 3 directories per user
Q="$T_TMP/q"
mkdir -m 755 "$Q" "$Q/d1" "$Q/d2" "$Q/d3" "$Q/d4" "$Q/d5"
chown 65534:65534 "$Q"/d*
n=0
for i in 1 2 3; do as 65534 set "$Q/d$i" cache=none >/dev/null && n=$((n + 1)); done
check_eq "uid 65534 sets policy on 3 directories" 3 "$n"
as 65534 set "$Q/d4" cache=none >"$T_TMP/out" 2>&1
check_eq "a 4th directory over Max-Policies-Per-User = 3: refused, exit 4" 4 "$?"
sed 's/^/# /' "$T_TMP/out"
check_contains "... saying which limit" \
	"would have policy on 4 directories" "$(cat "$T_TMP/out")"
check_contains "... and naming its key" "over its limit of 3 directories ([Attrd] Max-Policies-Per-User)" \
	"$(cat "$T_TMP/out")"
check_eq "... nothing stored for it" "" "$(attrs "$Q/d4")"
check "more attributes on a directory it has: allowed" as 65534 set "$Q/d1" actimeo=5
check "an Admin-Group member is not limited" \
	setpriv --reuid=65534 --regid=65534 --groups=100 $T_OU_ENV "$NA_OU" -c "$ATTRD_CONF" \
	set "$Q/d4" cache=read
na unset "$Q/d4" --all >/dev/null # (rows count for who set them, admin or not)
n=0
for i in 1 2 3 4 5; do mkdir "$Q/r$i" && na set "$Q/r$i" cache=none >/dev/null && n=$((n + 1)); done
check_eq "root is not limited (5 directories)" 5 "$n"

# --- item 4: at most 2500 bytes per user (domain, path, key and value of each row)
for i in 1 2 3; do as 65534 unset "$Q/d$i" --all >/dev/null; done
big=$(python3 -c 'print("x" * 1000)')
n=0
for i in 1 2; do as 65534 set "$Q/d$i" "user.big=$big" >/dev/null && n=$((n + 1)); done
check_eq "two 1000-byte values fit in Max-Bytes-Per-User = 2500" 2 "$n"
as 65534 set "$Q/d3" "user.big=$big" >"$T_TMP/out" 2>&1
check_eq "a third: refused, exit 4" 4 "$?"
sed 's/^/# /' "$T_TMP/out"
check_contains "... naming the byte limit" "bytes ([Attrd] Max-Bytes-Per-User)" "$(cat "$T_TMP/out")"
for i in 1 2; do as 65534 unset "$Q/d$i" --all >/dev/null; done

# --- item 4: mkdir, set 8 values, rmdir, 10 times: the removed directories' rows count
# until the sweep drops them, so the store holds at most 3 directories of them
L="$T_TMP/loop"
mkdir -m 755 "$L"
chown 65534:65534 "$L"
n=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	run_as 65534 mkdir "$L/x$i"
	as 65534 set "$L/x$i" cache=none actimeo=1 cto=off lookupcache=none fscache=off \
		acregmin=1 acregmax=2 acdirmin=1 >/dev/null 2>&1 && n=$((n + 1))
	run_as 65534 rmdir "$L/x$i"
done
check_eq "mkdir / set / rmdir x10: 3 stored, the rest refused" 3 "$n"
check_eq "... 3 removed directories in the store" 3 \
	"$(na list | grep -c "$L/x")"
reload
check_contains "the sweep at reload drops them" "dropped 24 attribute(s) of removed directories" \
	"$(cat "$ATTRD_LOG")"
check_eq "... none left" 0 "$(na list | grep -c "$L/x")"
run_as 65534 mkdir "$L/again"
check "... and the user may set again" as 65534 set "$L/again" cache=none

# --- item 4: alice's policy does not bind bob's new directory of the same name
S="$T_TMP/shared"
mkdir -m 1777 "$S"
run_as 65531 mkdir "$S/X"
as 65531 set "$S/X" inherit=no cache=none >/dev/null
run_as 65531 rmdir "$S/X"
run_as 65532 mkdir "$S/X"
check "bob (65532) sets on his new /shared/X" as 65532 set "$S/X" actimeo=5
check_eq "... which holds bob's attribute only (alice's inherit=no and cache dropped)" \
	"actimeo=5" "$(attrs "$S/X")"
check_contains "... logged" "dropped 2 attribute(s) set on a directory of the same name that was removed" \
	"$(cat "$ATTRD_LOG")"
t_attrd_stop

# ... and without bob setting anything: the sweep every Orphan-Check-Interval
write_conf 1
t_attrd_start -v || fail_all "nfskeys-attrd did not restart"
run_as 65531 mkdir "$S/Y"
as 65531 set "$S/Y" inherit=no cache=none >/dev/null
check_eq "alice's /shared/Y holds her policy" "cache=none inherit=no" "$(attrs "$S/Y")"
run_as 65531 rmdir "$S/Y"
run_as 65532 mkdir "$S/Y" "$S/Y/sub"
t_wait_for "[ -z \"\$(attrs '$S/Y')\" ]" 5
check_eq "within Orphan-Check-Interval = 1s, bob's new /shared/Y has no attributes" "" "$(attrs "$S/Y")"
na show "$S/Y/sub" >"$T_TMP/show.out" 2>&1
check_eq "... and below it no inheritance cut (nfsattr show: exit 0, no cut named)" "0:" \
	"$?:$(grep 'inheritance stops' "$T_TMP/show.out")"
check "a directory that still exists keeps its policy through the sweeps" \
	test "$(attrs "$Q/r1")" = "cache=none"

# --- item 7: a caller in its own user and mount namespace, chrooted into a copy of /
N="$T_TMP/ns"
mkdir -m 755 "$N" "$T_TMP/root"
chown 65530:65530 "$N"
real=$(na get --json "$N" | python3 -c 'import json,sys; print(json.load(sys.stdin)["directory"])')
echo "# real identity: $real"
run_as 65530 unshare -Urm sh -c "mount --rbind / '$T_TMP/root' && exec chroot '$T_TMP/root' \
	$T_OU_ENV '$NA_OU' -c '$ATTRD_CONF' set --json '$N' cache=read" >"$T_TMP/out" 2>&1
check_eq "set from unshare -Urm + chroot: accepted" 0 "$?"
sed 's/^/# /' "$T_TMP/out"
check_eq "... under the directory's real identity" "$real" \
	"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["directory"])' <"$T_TMP/out" 2>&1)"

# ... whose mount table is longer than the daemon reads: 1000 mounts stacked on one
# directory with a 3000-byte path (about 6 KiB a line), the caller's on top (its line last)
cat >"$T_TMP/stack.py" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
d = sys.argv[1].encode()
for i in range(1000):
    if libc.mount(d, d, None, 4096, None) != 0:  # MS_BIND
        sys.exit("mount %d: %s" % (i, os.strerror(ctypes.get_errno())))
os.execvp(sys.argv[2], sys.argv[2:])
PY
chmod 644 "$T_TMP/stack.py"
B="$T_TMP/big"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do B="$B/$(printf '%0200d' "$i")"; done
mkdir -p -m 755 "$B"
chown 65529:65529 "$B"
t0=$(date +%s%N)
run_as 65529 unshare -Urm $T_OU_ENV python3 "$T_TMP/stack.py" "$B" "$NA_OU" -c "$ATTRD_CONF" \
	set "$B" cache=read >"$T_TMP/out" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check_eq "a caller with 1000 mounts of 6 KiB lines: refused ($ms ms, with the mounts made)" 1 "$rc"
sed 's/^/# /' "$T_TMP/out"
check_contains "... saying why" "mount table is longer than" "$(cat "$T_TMP/out")"
check "the daemon still serves" t_attrd_alive
check "stops cleanly" t_attrd_stop
