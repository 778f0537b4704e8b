#!/bin/sh
# nfskeys doctor on the real /proc/key-users: a throwaway uid brought near its key quota
# by keys it adds itself (setpriv) is reported with a warning from 80 % of its keys or
# bytes on, a problem once the quota has no room for one more credential, each with the
# sysctl to raise and the keys that count, in text and in --json.  Its own uid's quota:
# it runs in the parallel suite.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/keyusers.sh"

ku_need_tools
Q=$((3700000 + $$ % 100000))
AS_Q="setpriv --reuid=$Q --regid=$Q --clear-groups"
chmod 755 "$T_TMP"
mkdir "$T_TMP/q" && chown "$Q:$Q" "$T_TMP/q"
cp "$top_srcdir/tests/harness/keyusers.sh" "$T_TMP/keyusers.sh"
mkfifo -m 666 "$T_TMP/q/go"
# holder.sh SIZE TARGET...: as uid Q in a new session keyring, add keys with SIZE-byte
# payloads until Q is charged TARGET keys, say so on the status file, wait for a line on
# the fifo; the next TARGET; the keys go with the session at the end.
cat >"$T_TMP/holder.sh" <<'EOS'
. "${0%/*}/keyusers.sh"
u=$(id -u) size=$1 q=${0%/*}/q i=0
shift
pay=$(head -c "$size" /dev/zero | tr '\0' x)
for target; do
	set -- $(ku_settled $u)
	while [ "$1" -lt "$target" ]; do
		keyctl padd user "k$i" @s >/dev/null <<EOP || break
$pay
EOP
		i=$((i + 1))
		set -- $(ku_get $u)
	done
	echo "at=$*" >>"$q/status"
	read _ <"$q/go"
done
EOS
chmod 644 "$T_TMP/holder.sh" "$T_TMP/keyusers.sh"
HOLDER=
hold() { # SIZE TARGET...
	rm -f "$T_TMP/q/status"
	$AS_Q keyctl session - sh "$T_TMP/holder.sh" "$@" >"$T_TMP/holder.out" 2>&1 &
	HOLDER=$!
}
t_on_exit '[ -n "$HOLDER" ] && kill $HOLDER 2>/dev/null'
# at N: wait until the holder reports its Nth target, print what it says Q is charged
at() {
	t_wait_for "test \$(grep -c . '$T_TMP/q/status') -ge $1" 60
	sed -n "$1s/^at=//p" "$T_TMP/q/status"
}
next() { echo go >"$T_TMP/q/go"; }
# Q's finding in doctor's text and JSON output
doc() {
	"$NFSKEYS" doctor >"$T_TMP/doc.out" 2>&1
	"$NFSKEYS" doctor --json >"$T_TMP/doc.json" 2>&1
	grep " quota uid $Q: " "$T_TMP/doc.out"
}
json() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["check"] == "quota" and x["subject"] == "uid " + sys.argv[2]]
print(f[0]["status"] if f else "none")' "$T_TMP/doc.json" "$Q"
}
plan 13

# keys: 170 of 200 (85 %), then 199 (1 left: no room for a credential and its staging
# keyring); small keys, few bytes
hold 1 170 199
set -- $(at 1)
check_eq "170 keys charged to uid $Q" "170" "$1"
line=$(doc)
check_contains "85 % of the keys: a warning" \
	"info    quota uid $Q: warning: 170 of $3 keys and $2 of $4 bytes used (85 %, " "$line"
check_contains "... with the sysctl to raise, as a sysctl.d file" \
	"fix: raise kernel.keys.maxkeys and kernel.keys.maxbytes (for every uid but root), e.g. /etc/sysctl.d/60-keys.conf with 'kernel.keys.maxkeys = $(($3 * 2))'" "$line"
check_contains "... and which of our keys count" \
	"each CIFS credential (one logon key per server address or domain" "$line"
check_eq "... --json: status info" info "$(json)"
next
set -- $(at 2)
check_eq "199 keys charged" "199" "$1"
line=$(doc)
check_contains "1 key left: a problem, full" \
	"problem quota uid $Q: 199 of $3 keys and $2 of $4 bytes used (99 %, " "$line"
check_contains "... it names what fails" "full, no room for one more credential (2 keys, 64 bytes); new keys fail with EDQUOT; fix: raise kernel.keys.maxkeys" "$line"
check_eq "... --json: status problem" problem "$(json)"
next
wait $HOLDER
HOLDER=
# the session's keys go once the kernel's key garbage collector has run
check "uid $Q back to no more than its user keyrings once the session ended" \
	t_wait_for '[ "$(ku_get $Q | cut -d" " -f1)" -le 2 ]' 30

# bytes: 3 big keys (about 75 %), then a 4th: fewer than 64 bytes left.  Each costs its
# payload, its 3-byte description and a 4-byte link; the session keyring 1 key, 5 bytes.
set -- $(ku_settled $Q)
size=$(((($4 - $2 - 5 - 40) / 4) - 7))
hold $size $(($1 + 4)) $(($1 + 5))
set -- $(at 1)
line=$(doc)
check "bytes at $(($2 * 100 / $4)) %: under 80 %, ok" \
	sh -c 'case "$1" in "ok      quota uid "*) exit 0;; esac; exit 1' sh "$line"
next
set -- $(at 2)
line=$(doc)
check_contains "bytes at $(($2 * 100 / $4)) % of $4: a problem, full" \
	"problem quota uid $Q: $1 of $3 keys and $2 of $4 bytes used" "$line"
check_contains "... suggesting twice the bytes" "'kernel.keys.maxbytes = $(($4 * 2))'" "$line"
next
wait $HOLDER
HOLDER=
[ "$TAP_FAILED" = 0 ] || sed 's/^/# /' "$T_TMP/doc.out" "$T_TMP/holder.out" "$T_TMP/q/status"
