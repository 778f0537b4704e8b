#!/bin/sh
# What 'nfskeys cifs add' costs the kernel's per-user key quota (kernel.keys.maxkeys /
# maxbytes, charged per uid whatever the user namespace), for containers that share a uid:
# the key itself and nothing else once it has run, in a user namespace of the container's
# own too (no user or user-session keyrings made there: 3 keys and 52 bytes each); the
# same as cifscreds in a shared namespace; while it runs one staging keyring (the thread
# keyring), so it needs 2 free keys, and with 1 it fails naming the quota, leaving
# nothing behind.  A throwaway uid's own quota: it runs in the parallel suite.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/keyusers.sh"

ku_need_tools
t_ou_load
NK=$(t_ou nfskeys)
Q=$((3800000 + $$ % 100000))
AS_Q="setpriv --reuid=$Q --regid=$Q --clear-groups"
$AS_Q unshare --user --map-current-user true 2>/dev/null ||
	skip_all "uid $Q cannot make a user namespace here"
chmod 755 "$T_TMP"
mkdir "$T_TMP/q" && chown "$Q:$Q" "$T_TMP/q"
cp "$top_srcdir/tests/harness/keyusers.sh" "$T_TMP/keyusers.sh"
# inner.sh cost|edge N CMD...: run as uid Q in its new session keyring; the password
# goes to CMD's standard input.  cost: what is charged (settled) before and after CMD,
# which should leave N keys; edge: fill the quota with user keys until N keys are left,
# then CMD.
cat >"$T_TMP/inner.sh" <<'EOS'
. "${0%/*}/keyusers.sh"
u=$(id -u) mode=$1 free=$2
shift 2
before=$(ku_settled $u)
echo "before=$before"
if [ "$mode" = edge ]; then
	room() { set -- $(ku_settled $u); echo $(($3 - free - $1)); }
	n=$(room)
	i=0
	while [ $i -lt $n ]; do
		keyctl add user "fill-$i" x @s >/dev/null || break
		i=$((i + 1))
	done
	echo "nfill=$i"
	echo "filled=$(ku_get $u)"
fi
printf 'Pw-9\n' | "$@" >"${0%/*}/q/$mode-$free.err" 2>&1
echo "rc=$?"
# cost: FREE is the keys the command should leave; its exited keyrings go when the key
# garbage collector runs: waited for (10 s at most), then what is left is measured
if [ "$mode" = cost ]; then
	b=$(ku_settled $u) i=0
	while [ $i -lt 50 ] && [ "${b%% *}" -gt $((${before%% *} + free)) ]; do
		sleep 0.2
		b=$(ku_get $u) i=$((i + 1))
	done
fi
echo "after=$(ku_settled $u)"
echo "logon=$(for k in $(keyctl rlist @s); do keyctl rdescribe "$k"; done | grep -c '^logon;')"
echo "fillers=$(for k in $(keyctl rlist @s); do keyctl rdescribe "$k"; done | grep -c ';fill-')"
EOS
chmod 644 "$T_TMP/inner.sh" "$T_TMP/keyusers.sh"
v() { sed -n "s/^$2=//p" "$T_TMP/$1.out" | head -n1; }
# the keys of the previous run's session go when the key garbage collector runs: each run
# starts once uid Q holds no more than its user keyrings (30 s at most)
run() { # NAME [unshare...] -- inner.sh arguments
	_n=$1
	shift
	t_wait_for '[ "$(ku_get $Q | cut -d" " -f1)" -le 2 ]' 30
	timeout 120 "$@" >"$T_TMP/$_n.out" 2>&1
}
# keys, bytes of "KEYS BYTES MAX MAX"
delta() { set -- $(v "$1" before) $(v "$1" after); echo "$(($5 - $1)) $(($6 - $2))"; }
# the key: "cifs:a:192.0.2.10" + NUL, "alice:Pw-9" + NUL, its link in the session keyring
KEY_COST="1 $((17 + 1 + 10 + 1 + 4))"

plan 10

# 1. A container with a user namespace of its own (rootless: the uid makes it).
run userns $AS_Q unshare --user --map-current-user keyctl session - $T_OU_ENV \
	sh "$T_TMP/inner.sh" cost 1 "$NK" cifs add -u alice 192.0.2.10
check_eq "own user namespace: cifs add succeeds, its key in the session keyring" "0 1" \
	"$(v userns rc) $(v userns logon)"
check_eq "... and costs the key alone: keys, bytes (no user keyrings made in the namespace)" \
	"$KEY_COST" "$(delta userns)"
[ "$TAP_FAILED" = 0 ] || sed 's/^/# /' "$T_TMP/userns.out" "$T_TMP/q/cost-1.err"

# 2. The shared namespace, side by side with cifscreds (the user keyrings exist already).
$AS_Q keyctl show @u >/dev/null 2>&1
if command -v cifscreds >/dev/null 2>&1; then
	run ours $AS_Q keyctl session - $T_OU_ENV sh "$T_TMP/inner.sh" cost 1 \
		"$NK" cifs add -u alice 192.0.2.10
	run ref $AS_Q keyctl session - setsid -w sh "$T_TMP/inner.sh" cost 1 \
		cifscreds add -u alice 192.0.2.10
	check_eq "shared namespace: nfskeys and cifscreds leave the same keys and bytes charged" \
		"$KEY_COST / $KEY_COST" "$(delta ours) / $(delta ref)"
else
	skip "cifscreds not installed (cifs-utils): no side-by-side cost"
fi

# 3. The edge of the quota: the thread keyring the new key is staged in is a key too.
run edge2 $AS_Q keyctl session - $T_OU_ENV sh "$T_TMP/inner.sh" edge 2 \
	"$NK" cifs add -u alice 192.0.2.10
set -- $(v edge2 filled)
check_eq "2 keys left: filled to the maximum less 2" "$(($3 - 2))" "$1"
check_eq "... cifs add succeeds (the key and its staging keyring fit)" 0 "$(v edge2 rc)"
check_eq "... the key is in the session keyring" 1 "$(v edge2 logon)"
[ "$TAP_FAILED" = 0 ] || sed 's/^/# /' "$T_TMP/edge2.out" "$T_TMP/q/edge-2.err"

run edge1 $AS_Q keyctl session - $T_OU_ENV sh "$T_TMP/inner.sh" edge 1 \
	"$NK" cifs add -u alice 192.0.2.10
set -- $(v edge1 filled)
check_eq "1 key left: filled to the maximum less 1" "$(($3 - 1))" "$1"
check_eq "... cifs add fails" 1 "$(v edge1 rc)"
check_contains "... naming the key, the uid and the quota" \
	"cannot add key cifs:a:192.0.2.10: uid $Q has used up its key quota" "$(cat "$T_TMP/q/edge-1.err")"
check_eq "... no key left behind, every filler kept" "0 $(v edge1 nfill)" \
	"$(v edge1 logon) $(v edge1 fillers)"
[ "$TAP_FAILED" = 0 ] || sed 's/^/# /' "$T_TMP/edge1.out" "$T_TMP/q/edge-1.err"
