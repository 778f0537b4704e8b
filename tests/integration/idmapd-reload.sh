#!/bin/sh
# nfskeys-idmapd reloads off the event loop: a reload made slow by a slow name server (the
# NFSv4 domain is discovered through a DNS TXT record when it is not configured, and the
# configuration, a large [Static] section included, is parsed and the backends initialized
# in a thread of its own) while another client's cached lookups go on being answered, each
# from the old or the new configuration and never back; a broken configuration keeps the
# running one and the RELOAD caller is told what is wrong; reloads and SIGHUPs arriving
# during a reload are coalesced into one more, which takes effect; sd_notify
# RELOADING/READY around each; a SIGTERM during a reload waits for its thread (no leak
# under make check-valgrind).

# The slow name server lives in network, mount and UTS namespaces of the test's own: there
# it can have 127.0.0.1:53, /etc/resolv.conf can point at it and the host name can say
# which DNS domain to ask about, without touching the machine's.
if [ -z "${NFSKEYS_RELOAD_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare -n -m -u --propagation private true 2>/dev/null; then
	NFSKEYS_RELOAD_NS=1 exec unshare -n -m -u --propagation private "${SHELL:-/bin/sh}" "$0" "$@"
fi
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
[ -n "${NFSKEYS_RELOAD_NS:-}" ] ||
	skip_all "needs root and unshare -n -m -u (a slow name server in namespaces of its own)"
command -v ip >/dev/null && ip link set lo up ||
	skip_all "cannot bring up the loopback interface of the test's network namespace"
hostname reload-host.example.test ||
	skip_all "cannot set the host name in the test's UTS namespace"
printf 'nameserver 127.0.0.1\n' >"$T_TMP/resolv.conf"
mount --bind "$T_TMP/resolv.conf" /etc/resolv.conf ||
	skip_all "cannot bind-mount /etc/resolv.conf in the test's mount namespace"
plan 26

# The CLI reads a small configuration of its own (the daemon's is larger).
NK() { "$NFSKEYS" -c "$T_TMP/client.conf" "$@"; }
stat() { NK idmapd stats | awk -v n="$1" '$1 == n { print $2 }'; }
RPC() { python3 "$top_srcdir/tests/harness/idmapd-rpc.py" "$IDMAPD_SOCK" "$@"; }
val() { printf '%s\n' "$2" | sed -n "s/^$1=//p"; } # val KEY OUTPUT

# What makes a reload slow is the name server: the NFSv4 domain is not configured, so each
# load asks DNS for the TXT record _nfsv4idmapdomain.example.test (example.test is the host
# name's domain) and the answer comes DNS_DELAY_MS later.  libnfskeys gives the resolver 1 s:
# an answer later than that makes the domain the host's, the same example.test.  The
# configuration also has BIG more [Static] lines, parsed in the reload's thread as well.
DNS_DELAY_MS=800
BIG=2000
python3 "$top_srcdir/tests/harness/dns-txt.py" 127.0.0.1 _nfsv4idmapdomain.example.test \
	example.test "$DNS_DELAY_MS" "$T_TMP/dns.log" 2>"$T_TMP/dns.err" &
t_on_exit "kill $!"
t_wait_for "test -f '$T_TMP/dns.log'" 5 ||
	skip_all "the test name server did not start: $(cat "$T_TMP/dns.err")"
dns_queries() { grep -c '^_nfsv4idmapdomain\.example\.test 16$' "$T_TMP/dns.log"; }

# conf ALICE_UID [EXTRA-LINES...]: the test configuration, $n_big lines of [Static]
# ($BIG unless set), and extra lines, written next to the old one and renamed over it (a reload never reads a
# half-written file).
conf() {
	alice=$1; shift
	cp "$IDMAPD_CONF" "$IDMAPD_CONF.base"
	sed -i "s/^alice@example.test = .*/alice@example.test = $alice/" "$IDMAPD_CONF.base"
	awk -v n="${n_big:-$BIG}" '/^big0@/ { exit } { print } END { for (i = 0; i < n; i++)
		printf "big%d@example.test = %d\n", i, 50000 + i }' "$IDMAPD_CONF.base" \
		>"$IDMAPD_CONF.new"
	[ $# -gt 0 ] && printf '%s\n' "$@" >>"$IDMAPD_CONF.new"
	mv "$IDMAPD_CONF.new" "$IDMAPD_CONF"
}

# sd_notify messages, one line each, from a datagram socket standing in for systemd.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode().replace("\n", " ") + "\n")
        f.flush()
' "$T_TMP/notify.sock" "$T_TMP/notify.log" &
t_on_exit "kill $!"
t_wait_for "test -S '$T_TMP/notify.sock'" 5

t_idmapd_conf
sed -i '/^Domain = /d' "$IDMAPD_CONF"
printf '[Idmapd]\nSocket = %s\n' "$IDMAPD_SOCK" >"$T_TMP/client.conf"
export NOTIFY_SOCKET="$T_TMP/notify.sock"
check "daemon starts under a notify socket" t_idmapd_start
unset NOTIFY_SOCKET
check_eq "and told it READY=1" "READY=1 STATUS=running" "$(head -n 1 "$T_TMP/notify.log")"
out=$("$IDMAPD_LOAD" --socket "$IDMAPD_SOCK" --clients 1 --requests 200 --keys 200 --check 2>&1)
check_contains "200 names cached ($out)" "wrong=0 failed=0" "$out"
gen0=$(NK idmapd ping | sed 's/.*generation \([0-9]*\).*/\1/')

# 1. A slow reload does not stall cached answers.
conf 2002
q0=$(dns_queries)
out=$(RPC during-reload user7@example.test alice@example.test user150@example.test)
diag "$(echo "$out" | tr '\n' ' ')"
check_eq "the slow reload succeeds" 0 "$(val reload_status "$out")"
check_eq "it asked the name server for the domain (once)" 1 "$(($(dns_queries) - q0))"
# (one lookup at a time, each counted only when its answer came before the reload's: a
# reload run on the event loop would let at most the first through.  No time is
# asserted; the reload's length and the worst lookup are in the diag above.)
n=$(val lookups_during "$out")
check "cached lookups from another client answered during it, one after another ($n)" \
	test "$n" -ge 2
check_eq "every answer during it is right" "10007 10150" \
	"$(val answers_user7 "$out") $(val answers_user150 "$out")"
a=$(val answers_alice "$out")
case "$a" in 2001 | 2001,2002) ok "alice: old answers, then new, never back ($a)" ;;
*) not_ok "alice: old answers, then new, never back ($a)" ;; esac
check_eq "the reload's generation" "$((gen0 + 1))" "$(val generation "$out")"
check_contains "the new mapping applies at once (cache flushed)" "2002	" \
	"$(NK idmapd lookup name-to-uid alice@example.test)"
check_contains "the new [Static] lines answer" "$((50000 + BIG - 1))	" \
	"$(NK idmapd lookup name-to-uid "big$((BIG - 1))@example.test")"

# 2. Broken configurations: the caller learns what is wrong, the old one stays.
cp "$IDMAPD_CONF" "$T_TMP/good.conf"
n_big=0; conf 2009 '[Idmapd]' 'Cache-Size = huge'; n_big=$BIG
out=$(NK idmapd reload 2>&1)
check_eq "a bad setting fails the reload (exit 1)" 1 $?
check_contains "and the error names it ($out)" "[Idmapd] Cache-Size" "$out"
n_big=0; conf 2009 'this line is not INI'; n_big=$BIG
line=$(grep -n '^this line is not INI' "$IDMAPD_CONF" | cut -d: -f1)
out=$(NK idmapd reload 2>&1)
check_contains "a syntax error is located in the error ($out)" "nfskeys.conf:$line: expected" \
	"$out"
check_contains "the running configuration is kept (generation)" "generation $((gen0 + 1)) " \
	"$(NK idmapd ping)"
check_contains "and still answers (alice = 2002)" "2002	" \
	"$(NK idmapd lookup name-to-uid alice@example.test)"
check_contains "the failures are logged" "keeping the running configuration" \
	"$(cat "$T_TMP/idmapd.log")"
cp "$T_TMP/good.conf" "$IDMAPD_CONF"

# 3. Back to back: a RELOAD and two SIGHUPs during a running reload, after the file
# changed again, make one more reload; both RELOAD callers are answered, each when its
# reload is done, and the second change is in effect.
r0=$(stat reloads_total)
conf 2003
out=$(RPC reloads 2 "sed -i 's/^alice@example.test = .*/alice@example.test = 2004/' '$IDMAPD_CONF' && kill -HUP $IDMAPD_PID && kill -HUP $IDMAPD_PID")
diag "$(echo "$out" | tr '\n' ' ')"
check_eq "the first reload was still running when the others came" True "$(val first_running "$out")"
check_eq "both reloads succeed" "0 0" "$(val status0 "$out") $(val status1 "$out")"
check_eq "each caller gets its own reload's generation" "$((gen0 + 2)) $((gen0 + 3))" \
	"$(val generation0 "$out") $(val generation1 "$out")"
check_contains "the second change took effect" "2004	" \
	"$(NK idmapd lookup name-to-uid alice@example.test)"
check_eq "the RELOAD and the two SIGHUPs made one more reload" 2 \
	"$(($(stat reloads_total) - r0))"

# 4. systemd was told RELOADING (with the time) and READY around every reload.
n_rel=$(grep -c '^RELOADING=1 MONOTONIC_USEC=[0-9]' "$T_TMP/notify.log")
n_ready=$(grep -c '^READY=1' "$T_TMP/notify.log")
check_eq "sd_notify RELOADING=1 MONOTONIC_USEC=... per reload" "$(stat reloads_total)" "$n_rel"
check_eq "and READY=1 after each (and at start)" "$((n_rel + 1))" "$n_ready"

# 5. SIGTERM during a reload: the reload thread is joined, the daemon stops cleanly.
conf 2005
kill -HUP "$IDMAPD_PID"
sleep 0.2
t_idmapd_stop
check_eq "SIGTERM during a reload stops it cleanly (exit 0)" 0 $?
check_contains "after STOPPING=1" "STOPPING=1" "$(tail -n 2 "$T_TMP/notify.log")"
