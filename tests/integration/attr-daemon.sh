#!/bin/sh
# nfskeys-attrd and nfsattr end to end, with the real daemon on a socket in a temp dir:
# inheritance and inherit=no over a deep tree, one export seen through two mount points
# (a bind mount in a private mount namespace stands in for a second NFS mount), owners
# and the admin group allowed, others refused with the reason, restart and SIGHUP,
# export/import, mount options, and malformed protocol input.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/attrd.sh"

# A private mount namespace so the bind mounts vanish with the test.
if [ "$(id -u)" = 0 ] && [ -z "${NFSKEYS_ATTR_NS:-}" ] && command -v unshare >/dev/null &&
   unshare -m --propagation private true 2>/dev/null; then
	NFSKEYS_ATTR_NS=1 exec unshare -m --propagation private "${SHELL:-/bin/sh}" "$0" "$@"
fi
[ "$(id -u)" = 0 ] || skip_all "needs root (bind mounts, running as other users)"

plan 76

MOUNT="$top_builddir/tools/nfsattr/nfskeys-mount"
chmod 755 "$T_TMP"
CONF="$T_TMP/nfskeys.conf"
SOCK="$T_TMP/attrd.sock"
cat >"$CONF" <<EOF
[Attr]
Store = $T_TMP/attr.db
[Attrd]
Socket = $SOCK
Admin-Group = users
EOF
ATTRD_CONF=$CONF
# the daemon must stop cleanly (exit 0) every time
stop_daemon() { t_attrd_stop; check_eq "daemon stops cleanly: exit 0" 0 "$?"; }
na() { "$NFSATTR" -c "$CONF" "$@"; }
# what uid 65534 runs is the installed copy (the build tree may be out of its reach)
t_ou_load
NFSATTR_OU=$(t_ou nfsattr)
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups $T_OU_ENV "$@"; }
# show PATH KEY -> "value from source", "unset" when show names no such key, a line saying
# so when nfsattr show fails (never "unset")
eff() {
	na show "$1" >"$T_TMP/eff.out" 2>&1 || { echo "(nfsattr show failed: $(head -n1 "$T_TMP/eff.out"))"; return 1; }
	awk -v k="$2" '$1 == k { print $2, "from", $4; f = 1 } END { if (!f) print "unset" }' \
		"$T_TMP/eff.out"
}
# the identity of DIR (nfsattr get --json's "directory"); a line saying so on a failure
ident() {
	na get --json "$1" >"$T_TMP/ident.json" 2>&1 || { echo "(nfsattr get failed: $(head -n1 "$T_TMP/ident.json"))"; return 1; }
	python3 -c 'import json,sys; print(json.load(sys.stdin)["directory"])' <"$T_TMP/ident.json" 2>&1 ||
		echo "(no directory in nfsattr get's JSON)"
}

check "--help" "$NFSATTR" --help
check_contains "--version" "nfsattr " "$("$NFSATTR" --version)"
check "nfskeys-attrd --help" "$ATTRD" --help
check_contains "nfskeys-mount --version" "nfskeys-mount " "$("$MOUNT" --version)"

# --- no daemon yet: reads work, changes say what is wrong
EXP="$T_TMP/export"
mkdir -p "$EXP"
out=$(na show "$EXP" 2>&1)
check_contains "show without daemon and without a store" "(no attributes)" "$out"
na set "$EXP" cache=none >"$T_TMP/out" 2>&1; rc=$?
check_eq "set without daemon: exit 5" 5 "$rc"
check_contains "... and says the daemon is not running" "not running" "$(cat "$T_TMP/out")"

t_attrd_start -v && ok "daemon started" || { not_ok "daemon started"; cat "$T_TMP/attrd.log"; exit 1; }

# --- validation errors are named
na set "$EXP" cahce=none >"$T_TMP/out" 2>&1; rc=$?
check_eq "unknown key: exit 1" 1 "$rc"
check_contains "unknown key named" "unknown attribute 'cahce'" "$(cat "$T_TMP/out")"
out=$(na set "$EXP" dirty_limit=64X 2>&1)
check_contains "bad size suffix named" "bad size suffix 'X'" "$out"
out=$(na set "$EXP" acregmax=999999 2>&1)
check_contains "out of range named" "out of range" "$out"

# --- inheritance over a deep tree, and inherit=no
deep="$EXP"
for i in $(seq 1 20); do deep="$deep/d$i"; done
mkdir -p "$deep"
D8="$EXP/d1/d2/d3/d4/d5/d6/d7/d8"
check "set at the export root" na set "$EXP" cache=full actimeo=60
check "set at depth 3" na set "$EXP/d1/d2/d3" cache=read user.team=ops
check "set inherit=no at depth 8" na set "$D8" inherit=no cto=off
check "set at depth 12" na set "$D8/d9/d10/d11/d12" acregmax=5m
ID=$(ident "$EXP")
check_eq "depth 5: cache from depth 3" "read from $ID/d1/d2/d3" "$(eff "$EXP/d1/d2/d3/d4/d5" cache)"
check_eq "depth 5: actimeo from the root" "60 from $ID" "$(eff "$EXP/d1/d2/d3/d4/d5" actimeo)"
check_eq "depth 20: cache cut by inherit=no" "unset" "$(eff "$deep" cache)"
check_eq "depth 20: cto from the cut" "off from $ID/d1/d2/d3/d4/d5/d6/d7/d8" "$(eff "$deep" cto)"
check_eq "depth 20: acregmax from depth 12" "300 from $ID/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/d12" \
	"$(eff "$deep" acregmax)"
check_contains "show names the cut" "inheritance stops at $ID/d1/d2/d3/d4/d5/d6/d7/d8" "$(na show "$deep")"
check "unset inherit" na unset "$D8" inherit
check_eq "depth 20: cache inherited again" "read from $ID/d1/d2/d3" "$(eff "$deep" cache)"

# --- one export, two mount points
MNT="$T_TMP/mnt"
mkdir -p "$MNT"
if mount --bind "$EXP" "$MNT" 2>/dev/null; then
	check "set through the second mount point" na set "$MNT/d1" lookupcache=positive
	check_eq "seen through the first" "positive from $ID/d1" "$(eff "$EXP/d1/d2" lookupcache)"
	check_eq "same identity both ways ($ID/d1)" "$ID/d1:$ID/d1" "$(ident "$EXP/d1"):$(ident "$MNT/d1")"
	umount "$MNT"
else
	skip "bind mount not possible here"; skip "bind mount"; skip "bind mount"
fi

# --- authorization: owner yes, others no (with the reason), admin group yes
OWN="$EXP/alice"
mkdir -p "$OWN"
chown 65534:65534 "$OWN"
check "owner sets on own directory" as_nobody "$NFSATTR_OU" -c "$CONF" set "$OWN" fscache=on
as_nobody "$NFSATTR_OU" -c "$CONF" set "$EXP" fscache=on >"$T_TMP/out" 2>&1; rc=$?
check_eq "non-owner refused: exit 4" 4 "$rc"
check_contains "refusal says why" "belongs to uid 0, and only its owner, root or members of group 'users' may" \
	"$(cat "$T_TMP/out")"
check "admin group member may" setpriv --reuid=65534 --regid=65534 --groups=100 $T_OU_ENV \
	"$NFSATTR_OU" -c "$CONF" set "$EXP/d1" writeback=throttled
check_eq "everyone reads" "on from $ID/alice" "$(as_nobody sh -c "'$NFSATTR_OU' -c '$CONF' show --json '$OWN'" |
	python3 -c 'import json,sys; print([a["value"]+" from "+a["source"] for a in json.load(sys.stdin)["attributes"] if a["key"]=="fscache"][0])')"

# --- restart keeps everything; SIGHUP keeps serving (and keeps the old config on error)
before=$(na list)
stop_daemon
check "daemon restarts" t_attrd_start -v
check_eq "restart keeps every policy" "$before" "$(na list)"
sed -i 's/^Admin-Group = users/Admin-Group = no-such-group-nfskeys/' "$CONF"
kill -HUP "$ATTRD_PID"
t_wait_for "grep -q \"no group 'no-such-group-nfskeys'\" '$T_TMP/attrd.log'" 10
check "daemon survives a bad reload (pid alive, answers over its socket)" t_attrd_alive
check_contains "bad reload logged" "no group 'no-such-group-nfskeys'" "$(cat "$T_TMP/attrd.log")"
sed -i 's/^Admin-Group = no-such-group-nfskeys/Admin-Group = users/' "$CONF"

# --- export / import round trip
na export >"$T_TMP/export.json"
n_before=$(na list | wc -l)
check "unset everything on one directory" na unset "$EXP/d1/d2/d3" --all
check "import (root)" na import "$T_TMP/export.json"
check_eq "import restores it" "$n_before" "$(na list | wc -l)"
check_eq "daemon picked it up" "nfskeys_attrd_policies $n_before" \
	"$(na stats --prometheus | grep '^nfskeys_attrd_policies ')"
printf '{"policies":[{"domain":"nfs://srv","path":"/e","attributes":{"cache":"maybe"}}]}' >"$T_TMP/bad.json"
out=$(na import "$T_TMP/bad.json" 2>&1)
check_contains "import validates first" "policies[0]: bad value 'maybe' for cache" "$out"

# --- mount options for an export that is not mounted
printf '{"policies":[{"domain":"nfs://srv","path":"/export","attributes":{"cache":"none","fscache":"on","acregmin":"10"}}]}' >"$T_TMP/nfs.json"
na import "$T_TMP/nfs.json" >/dev/null 2>&1
check_eq "mount-options for SERVER:/EXPORT/SUB" "lookupcache=none,fsc,acregmin=10" "$(na mount-options srv:/export/sub)"
check_eq "nfskeys-mount --dry-run, explicit options win" \
	"mount.nfs4 srv:/export/sub /mnt/x -o lookupcache=none,acregmin=10,nofsc,vers=4.2" \
	"$("$MOUNT" -c "$CONF" -n -t nfs4 -o nofsc,vers=4.2 srv:/export/sub /mnt/x)"
"$MOUNT" -c "$CONF" -n -o password=x //srv/share /mnt/x >"$T_TMP/out" 2>&1; rc=$?
check_eq "nfskeys-mount refuses a password in argv" 2 "$rc"

# --- a CIFS share named as nfsattr(1) documents it (//SERVER/SHARE/SUB, not a local path)
printf '{"policies":[{"domain":"cifs://srv/share","path":"/dir","attributes":{"actimeo":"30"}}]}' >"$T_TMP/cifs.json"
check "import a CIFS policy" na import "$T_TMP/cifs.json"
check_eq "show //SRV/share/dir/sub: inherited from the share's dir (server in any case)" \
	"30 from cifs://srv/share/dir" "$(eff //SRV/share/dir/sub actimeo)"
check_eq "mount-options //srv/share/dir" "actimeo=30" "$(na mount-options //srv/share/dir 2>&1)"
check_eq "mount-options -t smb3 //srv/share/dir" "actimeo=30" \
	"$(na mount-options -t smb3 //srv/share/dir 2>&1)"
# an unknown -t is a usage error naming it, not an empty line
na mount-options -t bogus srv:/export/sub >"$T_TMP/out" 2>"$T_TMP/err"; rc=$?
check_eq "mount-options -t bogus: exit 2, nothing on stdout" "2|" "$rc|$(cat "$T_TMP/out")"
check_contains "... naming the type and the known ones" \
	"nfsattr: -t bogus: unknown filesystem type (nfs, nfs4, cifs or smb3)" "$(cat "$T_TMP/err")"
# an import row split where lookups never look (the export in the domain, the share in the
# path) is refused with the reason, and nothing of the file is stored
n_before=$(na list | wc -l)
printf '{"policies":[{"domain":"nfs://srv","path":"/ok","attributes":{"actimeo":"5"}},{"domain":"nfs://srv/export","path":"/sub","attributes":{"actimeo":"5"}}]}' >"$T_TMP/never.json"
out=$(na import "$T_TMP/never.json" 2>&1); rc=$?
check_eq "import of nfs://srv/export + /sub: exit 1" 1 "$rc"
check_contains "... says it can never match and where the export goes" \
	"policies[1]: domain 'nfs://srv/export', path '/sub' can never match: an NFS domain is nfs://SERVER alone; the export belongs in \"path\"" "$out"
printf '{"policies":[{"domain":"cifs://srv","path":"/share/dir","attributes":{"actimeo":"5"}}]}' >"$T_TMP/never.json"
check_contains "import of cifs://srv + /share/dir: refused with the reason" \
	"a CIFS domain is cifs://SERVER/SHARE; what is below the share belongs in \"path\"" \
	"$(na import "$T_TMP/never.json" 2>&1)"
check_eq "... and nothing of either file was stored" "$n_before" "$(na list | wc -l)"

# --- a directory named with a newline, a terminal escape and a backslash: every line
# nfsattr prints for a person shows the name escaped (\x0a, \x1b, \\), UTF-8 names as
# they are; --json carries the real name
ESC=$(printf '\033')
ODD="$EXP/$(printf 'odd\n\033[31mred\\x')"
SHOWN='odd\x0a\x1b[31mred\\x'
mkdir "$ODD" "$EXP/café"
out=$(na set "$ODD" actimeo=9 2>&1)
check_eq "set through the daemon: one line, the name escaped" "1|$SHOWN: actimeo=9" \
	"$(printf '%s\n' "$out" | wc -l)|${out##*/}"
out=$(na show "$ODD" 2>&1)
check_eq "show: the name escaped, its own attribute from it, no raw escape byte" \
	"$SHOWN|$SHOWN|0" \
	"$(printf '%s\n' "$out" | sed -n '1s|.*/||p')|$(printf '%s\n' "$out" | sed -n 's|^  actimeo      9            from .*/||p')|$(printf '%s' "$out" | grep -c "$ESC")"
check_eq "show: every line is the name's or an attribute's (no line made by the newline)" "" \
	"$(printf '%s\n' "$out" | grep -v '^local://' | grep -v '^  ')"
out=$(na list 2>&1)
check_eq "list: its line escaped, no raw escape byte" "1|0" \
	"$(printf '%s\n' "$out" | grep -cF "$SHOWN actimeo=9")|$(printf '%s' "$out" | grep -c "$ESC")"
out=$(na writeback "$ODD" 2>&1)
check_eq "writeback: the name escaped, no raw escape byte" "1|0" \
	"$(printf '%s\n' "$out" | grep -cF "/$SHOWN")|$(printf '%s' "$out" | grep -c "$ESC")"
out=$(na unset "$ODD" actimeo 2>&1)
check_eq "unset: the path as given, escaped" "1|0" \
	"$(printf '%s\n' "$out" | grep -cF "$SHOWN: removed 1 attribute")|$(printf '%s' "$out" | grep -c "$ESC")"
out=$(na show "$EXP/$(printf 'gone\033[2J')" 2>&1); rc=$?
check_eq "an error naming a path: escaped, exit 1" "1|nfsattr: $EXP/gone\\x1b[2J: No such file or directory" \
	"$rc|$out"
na set "$EXP/café" actimeo=9 >/dev/null 2>&1
check_contains "a UTF-8 name is shown as it is" "/café" "$(na show "$EXP/café" 2>&1)"
na set "$ODD" actimeo=9 >/dev/null 2>&1
check_eq "--json carries the real name" "yes" "$(na get --json "$ODD" | python3 -c '
import json, sys
print("yes" if json.load(sys.stdin)["directory"].endswith("/odd\n\033[31mred\\x") else "no")' 2>&1)"
na unset "$ODD" --all >/dev/null 2>&1
na unset "$EXP/café" --all >/dev/null 2>&1

# --- malformed protocol input: the daemon answers or drops the client, and stays up
python3 - "$SOCK" >"$T_TMP/proto.out" 2>&1 <<'EOF'
import socket, struct, sys
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(5); s.connect(path); return s
def call(proc, body):
    hdr = struct.pack(">IIIIII", 0x1234, 0, 2, 0x20004e02, 1, proc) + struct.pack(">IIII", 0, 0, 0, 0)
    msg = hdr + body
    return struct.pack(">I", 0x80000000 | len(msg)) + msg
def reply(s):
    mark = s.recv(4)
    if len(mark) < 4: return None
    n = struct.unpack(">I", mark)[0] & 0x7fffffff
    data = b""
    while len(data) < n: data += s.recv(n - len(data))
    return data
# 1. a record without the last-fragment bit: dropped
s = conn(); s.sendall(struct.pack(">I", 16) + b"x" * 16); print("nolast", reply(s)); s.close()
# 2. an absurd length: dropped
s = conn(); s.sendall(struct.pack(">I", 0xffffffff)); print("huge", reply(s)); s.close()
# 3. SET whose arguments are cut short: GARBAGE_ARGS (accept_stat 4)
s = conn(); s.sendall(call(2, struct.pack(">I", 1000))); r = reply(s)
print("garbage", struct.unpack(">IIIIII", r[:24])[5]); s.close()
# 4. a well-formed SET without a descriptor: refused with -EBADF and a message
kv = struct.pack(">I", 1) + struct.pack(">I", 5) + b"cache\0\0\0" + struct.pack(">I", 4) + b"none"
s = conn(); s.sendall(call(2, kv)); r = reply(s)
print("nofd", struct.unpack(">i", r[24:28])[0]); s.close()
# 5. an unknown procedure: PROC_UNAVAIL (3)
s = conn(); s.sendall(call(99, b"")); r = reply(s); print("proc", struct.unpack(">IIIIII", r[:24])[5]); s.close()
EOF
out=$(cat "$T_TMP/proto.out")
check_contains "no last-fragment bit: dropped" "nolast None" "$out"
check_contains "huge record: dropped" "huge None" "$out"
check_contains "garbage arguments: GARBAGE_ARGS" "garbage 4" "$out"
check_contains "SET without a descriptor: -EBADF" "nofd -9" "$out"
check_contains "unknown procedure: PROC_UNAVAIL" "proc 3" "$out"
check "daemon still serves (pid alive, answers over its socket)" t_attrd_alive

stop_daemon
# --- a daemon in its own mount namespace (as under systemd's ProtectSystem=) still finds
# the caller's mount: mount ids are global, and it reads the caller's mountinfo
unshare -m --propagation slave "$ATTRD" -f -c "$CONF" >>"$T_TMP/attrd.log" 2>&1 &
ATTRD_PID=$!
t_on_exit "kill -9 $ATTRD_PID"
t_wait_for "t_attrd_alive" 10
check "set with the daemon in another mount namespace" na set "$EXP/d1/d2" acdirmax=30
check_eq "stored under the same identity" "30 from $ID/d1/d2" "$(eff "$EXP/d1/d2/d3" acdirmax)"
stop_daemon

# --- root without a daemon: --direct, documented fallback
check "--direct set without daemon" na --direct set "$EXP" cto=on
check_eq "visible to readers" "on from $ID" "$(eff "$EXP/d1" cto)"
