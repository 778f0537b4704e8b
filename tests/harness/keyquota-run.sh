#!/bin/sh
# Runs as the requesting uid inside its own session keyring (keyctl session - sh THIS ...):
# places unrelated keys, brings the uid's key byte quota to KQ_FREE bytes free, requests
# KQ_DESC through the test's request-key route, puts the quota back, and prints key=value
# lines for tests/harness/keyquota.sh to check.  The quota is filled with filler keys
# (KQ_MODE=fill: the uid's own quota) or lowered with root_maxbytes (KQ_MODE=root) or
# root_maxkeys (KQ_MODE=rootkeys, KQ_FREE then counts keys), the original value KQ_ORIG
# restored right after the request, on every exit path, and by the caller.
# Environment: KQ_MODE KQ_FREE KQ_DESC KQ_CALLOUT KQ_RING KQ_ORIG KQ_RETRY_TTL
set -u
uid=$(id -u)
SYSCTL=/proc/sys/kernel/keys/root_maxbytes col=5
[ "$KQ_MODE" = rootkeys ] && SYSCTL=/proc/sys/kernel/keys/root_maxkeys col=4

used_max() { awk -v u="$uid:" -v c=$col '$1 == u { split($c, b, "/"); print b[1], b[2] }' /proc/key-users; }
free_bytes() { set -- $(used_max); echo $(($2 - $1)); }
xs() { head -c "$1" /dev/zero | tr '\0' x; }
restore() { [ "$KQ_MODE" != fill ] && echo "$KQ_ORIG" >"$SYSCTL"; }
# The request in the background: a signal then interrupts our wait at once, and its trap
# restores the quota while the request is still in flight.
request() {
	t0=$(date +%s%N)
	keyctl request2 user "$KQ_DESC" "$KQ_CALLOUT" @s >"$KQ_OUT" 2>&1 &
	wait $! && res=ok || res=failed
	t1=$(date +%s%N)
	err=$(cat "$KQ_OUT")
}
KQ_OUT=$(mktemp)
ring=
trap 'restore; rm -f "$KQ_OUT"; [ -n "$ring" ] && keyctl unlink "$ring" @u >/dev/null 2>&1' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# Our own keys, which no quota trouble may touch: five in the session keyring and two
# mappings in the configured kernel keyring (Kernel-Keyrings), kept in the user keyring
# as the kernel keeps .id_resolver; linking @u into @s lets us possess it.
keyctl link @u @s >/dev/null 2>&1
for i in 1 2 3 4 5; do keyctl add user "unrelated-$i" "value-$i" @s >/dev/null || exit 1; done
ring=$(keyctl newring "$KQ_RING" @u) || exit 1
keyctl add user "uid:bob@example.test" 2003 "$ring" >/dev/null || exit 1
keyctl add user "gid:staff@example.test" 3001 "$ring" >/dev/null || exit 1
echo "ring=$ring"

# Wait until no key of ours is still being garbage-collected (usage steady for 0.3 s).
last= n=0
while [ $n -lt 30 ]; do
	cur=$(used_max)
	[ "$cur" = "$last" ] && break
	last=$cur n=$((n + 1))
	sleep 0.3
done

if [ "$KQ_MODE" = fill ]; then
	# Filler keys: a big one, then one sized on the measured remainder (a user key costs
	# its description + 1, its payload and 4 bytes for the link in the session keyring).
	f=$(free_bytes)
	[ "$f" -gt $((KQ_FREE + 300)) ] || exit 1
	keyctl add user filler "$(xs $((f - KQ_FREE - 200)))" @s >/dev/null || exit 1
	f=$(free_bytes)
	keyctl add user filler2 "$(xs $((f - KQ_FREE - 12)))" @s >/dev/null || exit 1
	echo "free=$(free_bytes)"
	request
else
	# root's quota is shared by every root process: keep the lowered window short.
	set -- $(used_max)
	echo $(($1 + KQ_FREE)) >"$SYSCTL" || exit 1
	echo "free=$(free_bytes)"
	request
	restore
	echo "restored=$(cat "$SYSCTL")"
fi
echo "request=$res"
echo "error=$err"
echo "ms=$(((t1 - t0) / 1000000))"
# The requested key as the kernel shows it (flags, timeout), if any, and what reading it
# gives (a rejected key has no payload: the read fails with the rejection's error).
line=$(awk -v d="$KQ_DESC" '$8 == "user" && $9 == d { print $1, $2, $4; exit }' /proc/keys)
if [ -n "$line" ]; then
	set -- $line
	echo "key=$2 $3"
	echo "serial=$((0x$1))"
	echo "read=$(keyctl pipe "$((0x$1))" 2>&1 | tr -c '[:print:]' '.')"
fi
printf 'unrelated='
for i in 1 2 3 4 5; do
	k=$(keyctl search @s user "unrelated-$i" 2>/dev/null) && printf '%s ' "$(keyctl print "$k")"
done
echo
printf 'ringkeys='
for d in uid:bob@example.test gid:staff@example.test; do
	k=$(keyctl search "$ring" user "$d" 2>/dev/null) && printf '%s=%s ' "$d" "$(keyctl print "$k")"
done
echo
[ "$KQ_MODE" = fill ] && { keyctl search @s user filler >/dev/null && keyctl search @s user filler2 \
	>/dev/null && echo "filler=kept" || echo "filler=gone"; }

# Quota back (fillers removed / sysctl restored): once the rejection has expired, the same
# request in the same session succeeds.
if [ "$KQ_MODE" = fill ]; then
	keyctl unlink "$(keyctl search @s user filler)" @s >/dev/null
	keyctl unlink "$(keyctl search @s user filler2)" @s >/dev/null
fi
n=0
while :; do
	if k=$(keyctl request2 user "$KQ_DESC" "$KQ_CALLOUT" @s 2>/dev/null); then
		echo "retry=$(keyctl pipe "$k" | od -An -v -tx1 | tr -d ' \n')"
		break
	fi
	n=$((n + 1))
	[ $n -gt $((KQ_RETRY_TTL * 10 + 30)) ] && { echo "retry=failed"; break; }
	sleep 0.1
done
echo "retry_after_ms=$((($(date +%s%N) - t1) / 1000000))"
