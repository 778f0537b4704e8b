#!/bin/sh
# nfskeys-idmapd end to end: start, answers and caching, concurrent clients, SIGHUP and
# RPC reloads (a broken configuration keeps the old one), misbehaving clients that never
# block others, root-only flush/reload (checked as user nobody), kernel keyring clearing
# on flush, stats in three formats, the served network namespaces (none on this host: no
# rpc_pipefs), clean stop.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
plan 42

NK() { "$NFSKEYS" -c "$IDMAPD_CONF" "$@"; }

t_idmapd_conf
check "daemon starts and answers ping" t_idmapd_start
check_contains "--version" "nfskeys-idmapd" "$("$IDMAPD" --version)"

out=$(NK idmapd lookup name-to-uid alice@example.test)
check_contains "name-to-uid from the static table" "2001	" "$out"
out=$(NK idmapd lookup name-to-uid alice@example.test)
check_contains "second lookup is served from the cache" "cached" "$out"
check_contains "group-to-gid" "3001	" "$(NK idmapd lookup group-to-gid staff@example.test)"
check_contains "uid-to-name (reverse through [Static])" "alice@example.test" \
	"$(NK idmapd lookup uid-to-name 2001)"
out=$(NK idmapd lookup --nobody name-to-uid nosuch@example.test)
# "UID<TAB>ttl=.. backend=.. [nobody]": the uid is nobody's and the answer carries the flag
nobody_uid=$(id -u nobody 2>/dev/null || echo 65534)
check_eq "unknown name gives nobody's uid with the nobody flag" "$nobody_uid flag" \
	"$(printf '%s\n' "$out" | awk -F '\t' '{ n = split($2, w, " "); print $1, (w[n] == "nobody" ? "flag" : "no-flag") }')"
NK idmapd lookup uid-to-name 3999999 >"$T_TMP/o" 2>&1
check_eq "unknown uid fails (exit 1)" 1 $?

# Concurrent clients: 8 threads x 500 lookups over 200 keys, every answer checked.
out=$("$IDMAPD_LOAD" --socket "$IDMAPD_SOCK" --clients 8 --requests 500 --keys 200 --check 2>&1)
check_contains "8 concurrent clients all get right answers ($out)" "wrong=0 failed=0" "$out"

# Misbehaving clients: idle, half a message, oversized, zero-length, garbage; a good
# client must still be answered at once while they hang on.
cat >"$T_TMP/bad.py" <<'PY'
import socket, struct, sys, time, subprocess
path, nk, conf = sys.argv[1:4]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(path); return s
def lookup():
    t0 = time.time()
    out = subprocess.run([nk, "-c", conf, "idmapd", "lookup", "name-to-uid", "user7@example.test"],
                         capture_output=True, text=True).stdout
    return out, time.time() - t0
_, base = lookup()
idle = conn()
partial = conn(); partial.send(struct.pack(">I", 0x80000000 | 100) + b"abc")
big = conn(); big.send(struct.pack(">I", 0x80000000 | 10 * 1024 * 1024))
zero = conn(); zero.send(struct.pack(">I", 0x80000000))
frag = conn(); frag.send(struct.pack(">I", 8) + b"12345678")
garbage = conn(); garbage.send(struct.pack(">I", 0x80000000 | 12) + b"\0\0\0\1" * 3)
out, dt = lookup()
closed = 0
for s in (big, zero, frag, garbage):
    s.settimeout(2)
    try:
        closed += s.recv(100) == b""
    except ConnectionResetError:
        closed += 1
print("answer=%s seconds=%.2f baseline=%.2f closed=%d" % (out.split()[0] if out else "none", dt, base, closed))
PY
out=$(python3 "$T_TMP/bad.py" "$IDMAPD_SOCK" "$NFSKEYS" "$IDMAPD_CONF")
check_contains "good client answered while bad ones hang on ($out)" "answer=10007" "$out"
check_contains "malformed, oversized and fragmented senders are disconnected" "closed=4" "$out"
sec=$(echo "$out" | sed 's/.*seconds=\([0-9.]*\).*/\1/')
base=$(echo "$out" | sed 's/.*baseline=\([0-9.]*\).*/\1/')
# The same command without the bad clients is the yardstick (this machine may be busy);
# a blocked loop would take the idle timeout (30 s).
check "good client not delayed by them ($sec s, alone $base s)" \
	awk "BEGIN { exit !($sec < 3 * $base + 1.0) }"
check_eq "bad frames counted" 3 "$(t_idmapd_stat bad_frames_total)"

# Reload by SIGHUP: a changed mapping applies at once (cache flushed).
gen0=$(NK idmapd ping | sed 's/.*generation \([0-9]*\).*/\1/')
sed -i 's/^alice@example.test = 2001/alice@example.test = 2002/' "$IDMAPD_CONF"
kill -HUP "$IDMAPD_PID"
t_wait_for "'$NFSKEYS' -c '$IDMAPD_CONF' idmapd ping | grep -q 'generation $((gen0 + 1))'" 5
check_contains "SIGHUP reload applies the new mapping" "2002	" \
	"$(NK idmapd lookup name-to-uid alice@example.test)"

# A broken configuration is refused and the running one kept.
cp "$IDMAPD_CONF" "$T_TMP/good.conf"
printf '[Idmapd]\nWorkers = lots\n' >>"$IDMAPD_CONF"
NK2() { "$NFSKEYS" -c "$T_TMP/good.conf" "$@"; }
out=$(NK2 idmapd reload 2>&1)
rc=$?
check_eq "reload of a broken config fails (exit 1)" 1 "$rc"
check_contains "and says why" "Workers" "$out"
check_contains "the old configuration still answers" "2002	" \
	"$(NK2 idmapd lookup name-to-uid alice@example.test)"
check_contains "the failure is logged" "keeping the running configuration" "$(cat "$T_TMP/idmapd.log")"
cp "$T_TMP/good.conf" "$IDMAPD_CONF"

# Root only: flush and reload refused for nobody; stats and lookups allowed.
chmod 755 "$T_TMP"; chmod 644 "$IDMAPD_CONF"
# (the client nobody runs is the installed copy: the build tree may be out of its reach)
AS_NOBODY=
if command -v setpriv >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	t_ou_load; NFSKEYS_OU=$(t_ou nfskeys)
elif command -v runuser >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	AS_NOBODY="runuser -u nobody --"
	t_ou_load; NFSKEYS_OU=$(t_ou nfskeys)
fi
if [ -n "$AS_NOBODY" ]; then
	out=$($AS_NOBODY $T_OU_ENV "$NFSKEYS_OU" -c "$IDMAPD_CONF" idmapd flush 2>&1)
	check_contains "nobody cannot flush" "permission denied" "$out"
	out=$($AS_NOBODY $T_OU_ENV "$NFSKEYS_OU" -c "$IDMAPD_CONF" idmapd reload 2>&1)
	check_contains "nobody cannot reload" "permission denied" "$out"
	out=$($AS_NOBODY $T_OU_ENV "$NFSKEYS_OU" -c "$IDMAPD_CONF" idmap stats 2>&1)
	check_contains "nobody can read stats (nfskeys idmap stats)" 'denied_total{op="flush"}' "$out"
	out=$($AS_NOBODY $T_OU_ENV "$NFSKEYS_OU" -c "$IDMAPD_CONF" idmapd namespaces 2>&1)
	check_contains "nobody can list the served namespaces (as the stats)" \
		"no other network namespace is served now" "$out"
else
	for i in 1 2 3 4; do skip "not root: cannot run a client as nobody"; done
fi

# Flush clears the kernel keyrings named in Kernel-Keyrings.
ring="nfskeys-test-ring-$$"
# Link the user keyring into our session so we possess (and may fill and list) the ring.
keyctl link @u @s >/dev/null 2>&1
if kr=$(keyctl newring "$ring" @u 2>/dev/null); then
	t_on_exit "keyctl unlink $kr @u"
	keyctl add user "uid:alice@example.test" "2001" "$kr" >/dev/null
	sed -i "s/^Kernel-Keyrings = .*/Kernel-Keyrings = $ring/" "$IDMAPD_CONF"
	NK idmapd reload >/dev/null
	check_eq "reload clears the kernel keyring" 0 "$(keyctl rlist "$kr" | wc -w)"
	keyctl add user "uid:bob@example.test" "2003" "$kr" >/dev/null
	keyctl add user "gid:staff@example.test" "3001" "$kr" >/dev/null
	check_eq "the test keyring holds two keys again" 2 "$(keyctl rlist "$kr" | wc -w)"
	out=$(NK idmapd flush)
	check_contains "flush reports the keyring cleared" "cleared 1 kernel keyrings" "$out"
	if left=$(keyctl rlist "$kr"); then
		check_eq "the keyring is empty after flush" "" "$left"
	else
		not_ok "the keyring is empty after flush (cannot list it)"
	fi
	# One name: only its kernel key goes.
	keyctl add user "uid:bob@example.test" "2003" "$kr" >/dev/null
	keep=$(keyctl add user "gid:staff@example.test" "3001" "$kr")
	out=$(NK idmapd flush name-to-uid bob@example.test)
	check_contains "a one-name flush invalidates its kernel key" "kernel key in 1 keyrings" "$out"
	# (an invalidated key leaves the keyring when the key garbage collector runs)
	n=0
	while [ "$(keyctl rlist "$kr" | tr -d ' \n')" != "$keep" ] && [ $n -lt 30 ]; do
		sleep 0.1; n=$((n + 1))
	done
	check_eq "and leaves the other mapping keys" "$keep" "$(keyctl rlist "$kr" | tr -d ' \n')"
else
	for i in 1 2 3 4 5 6; do skip "cannot create a keyring in @u"; done
fi

# Lookups that fail before any backend answers (a malformed SID, the id (uid_t)-1): each
# is counted under backend "none", never under bytes the daemon did not write; stats stay
# valid UTF-8 JSON.  (Under make check-valgrind the daemon's read of the unwritten answer
# is reported too.)
NK idmapd lookup sid-to-uid S-1-5-bad >"$T_TMP/bad1" 2>&1
rc1=$?
NK idmapd lookup uid-to-name 4294967295 >"$T_TMP/bad2" 2>&1
rc2=$?
check "a malformed SID and uid 4294967295 fail ($rc1, $rc2)" [ $rc1 -ne 0 ] && [ $rc2 -ne 0 ]
NK idmapd stats --json >"$T_TMP/stats.json" 2>&1
out=$(python3 -c '
import json, re, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))
bad = [m["labels"]["backend"] for m in d["metrics"]
       if m["name"] == "backend_requests_total" and
       not re.fullmatch(r"[a-z][a-z0-9_-]*", m["labels"]["backend"])]
none = sum(m["value"] for m in d["metrics"]
           if m["name"] == "backend_requests_total" and m["labels"]["backend"] == "none")
print("ok" if not bad and none >= 2 else "bad backends: %r, none: %r" % (bad, none))' \
	"$T_TMP/stats.json" 2>&1)
check_eq "stats --json after them: valid UTF-8, backend labels all names, both under none" \
	"ok" "$out"
NK idmapd stats >"$T_TMP/stats.txt" 2>&1
check "and the text stats count them under backend=\"none\", all printable ASCII" sh -c \
	"grep -q 'backend=\"none\"' '$T_TMP/stats.txt' &&
	[ \$(LC_ALL=C tr -d '\\11\\12\\40-\\176' <'$T_TMP/stats.txt' | wc -c) -eq 0 ]"

# Stats formats.
NK idmap stats --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert any(m["name"]=="lookups_total" for m in d["metrics"])' >"$T_TMP/o" 2>&1
check_eq "stats --json is valid JSON with lookups_total" 0 $?
out=$(NK idmap stats --prometheus)
check_contains "stats --prometheus has a histogram" "# TYPE nfskeys_idmapd_request_latency_seconds histogram" "$out"

# The other network namespaces served: none here (the host has no rpc_pipefs, so neither
# the daemon's own pipes nor any container's are served), said in words and in JSON.
out=$(NK idmapd namespaces 2>&1); rc=$?
check_eq "namespaces: none served, said with the kernel paths (exit 0)" \
	"0 no other network namespace is served now (kernel paths: no kernel paths)" "$rc $out"
out=$(NK idmapd namespaces --json 2>&1)
check "namespaces --json is valid JSON" sh -c 'printf "%s" "$1" | python3 -m json.tool >/dev/null' - "$out"
check_eq "namespaces --json: enabled, none served, the kernel paths" "True 0 [] no kernel paths" \
	"$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["enabled"], d["total"], d["namespaces"], d["kernel"])' 2>&1)"
NK idmapd namespaces --bogus >/dev/null 2>&1
check_eq "namespaces with an unknown argument: usage error (2)" 2 $?

# Refresh-ahead: a hot entry is refetched in the background before it expires, so it is
# still a cache hit after its original TTL (6 s; refresh after 50%; generous sleeps
# because each CLI run may take a second on a busy machine).
sed -i 's/^\[Idmapd\]$/[Idmapd]\nRefresh-Ahead = 50\nRefresh-Hits = 1/' "$IDMAPD_CONF"
printf '[Idmap]\nPositive-TTL = 6\n' >>"$IDMAPD_CONF"
NK idmapd reload >/dev/null
NK idmapd lookup name-to-uid user1@example.test >/dev/null     # miss: fetched at t=0
sleep 3.5
NK idmapd lookup name-to-uid user1@example.test >/dev/null     # hit past 50%: refresh
sleep 3
out=$(NK idmapd lookup name-to-uid user1@example.test)        # t>6.5: first answer expired
check_contains "refreshed ahead: still a cache hit after the first TTL" "10001	ttl=" "$out"
check_contains "(served from the cache)" "cached" "$out"
check "refresh-ahead lookups are counted" test "$(t_idmapd_stat 'lookups_total{result="refresh_ahead"}')" -ge 1

t_idmapd_stop
check_eq "SIGTERM stops it cleanly (exit 0)" 0 $?
check "and the socket is removed" test ! -e "$IDMAPD_SOCK"
