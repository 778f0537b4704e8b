#!/bin/sh
# nfskeys-idmapd's kernel paths without a kernel NFS: knfsd's nfs4.idtoname/nametoid cache
# channels and an NFS client's rpc_pipefs idmap pipe, played by tests/harness/fake-kernel.py
# on pseudo-terminals (one line per read, as the kernel's channels).  The expected lines are
# the kernel's formats (doc/KERNEL-INTERFACES.md §1-2); the real kernel's run is in tests/kernel/.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
plan 61

RPC="$T_TMP/rpc"
PIPEFS="$T_TMP/pipefs"
mkdir -p "$RPC" "$PIPEFS"
t_idmapd_conf '[Idmap]' 'Positive-TTL = 900' '[Kernel]' 'Server-Channels = yes' \
	'Client-Pipe = yes' "Channel-Dir = $RPC" "Pipefs-Directory = $PIPEFS" 'Negative-TTL = 45'

cat >"$T_TMP/script" <<'S'
# 1-2: name and id through the server channels
chan idtoname * user 2001\n
chan nametoid * user alice@example.test\n
# 3: a group, with a GSS authname echoed back
chan nametoid gss/krb5 group staff@example.test\n
# 4-5: unknown: negative; 6-7: a tab (\011), a stray backslash: negative at once; 8: no answer
chan nametoid * user nosuch@example.test\n
chan idtoname * group 3999999\n
chan nametoid * user a\\011b@example.test\n
chan nametoid * user a\\x41\n
chanraw idtoname * owner 1\n
chan idtoname * user 10007\n
# 9: an authname with a space comes back escaped as it was sent
chan nametoid a\\040b user user3@example.test\n
flush
# client pipe made after the daemon started
pipe 0
msg 0 user name2id alice@example.test 0
msg 0 group id2name - 3001
msg 0 user name2id nosuch@example.test 0
msg 0 user id2name - 3999999
rawmsg 0 0001
msgint 0 9 0 a 0
msg 0 user name2id user5@example.test 0
rmpipe 0
pipe 1
msg 1 user id2name - 2001
S

python3 "$top_srcdir/tests/harness/fake-kernel.py" "$RPC" "$PIPEFS" "$T_TMP/script" \
	>"$T_TMP/out" 2>"$T_TMP/fk.err" &
FK=$!
t_on_exit "kill $FK"
t_wait_for "test -e '$RPC/ready'" 10 || { diag "fake kernel did not start"; cat "$T_TMP/fk.err"; }
check "daemon starts serving the fake channels and pipefs" t_idmapd_start
check_contains "start-up line names both kernel paths" \
	"kernel: knfsd idmap channels in $RPC, NFS client idmap pipes in $PIPEFS" \
	"$(cat "$T_TMP/idmapd.log")"
# the daemon writes its answers between now and now_end (whole seconds, this host's clock)
now=$(date +%s)
touch "$RPC/go"
wait $FK
now_end=$(date +%s)
sed 's/^/# /' "$T_TMP/out"

line() { awk -v n="$1" '$1 == n { sub(/^[0-9]+ /, ""); print; exit }' "$T_TMP/out"; }
# in_window EXP TTL: EXP is TTL after some moment between now and now_end
in_window() { [ -n "$1" ] && [ "$1" -ge $((now + $2)) ] && [ "$1" -le $((now_end + $2)) ]; }
# exp_ok N FIELD TTL: the expiry in FIELD of answer N is TTL after it was written
exp_ok() {
	in_window "$(line "$1" | awk -v f="$2" '{ sub(/[^0-9].*$/, "", $f); print $f }')" "$3"
}
strip_exp() { line "$1" | awk -v f="$2" '{ sub(/^[0-9]+/, "EXP", $f); print }'; }
# what the daemon wrote unasked to the other channel after command $1 (Prime-Reverse)
primed() { awk -v n="P$1" '$1 == n { sub(/^P[0-9]+ [a-z]+ /, ""); print; exit }' "$T_TMP/out" |
	awk '{ sub(/^[0-9]+/, "EXP", $4); print }'; }
primed_exp_ok() {
	in_window "$(primed_raw "$1" | awk '{ sub(/[^0-9].*$/, "", $4); print $4 }')" "$2"
}
primed_raw() { awk -v n="P$1" '$1 == n { sub(/^P[0-9]+ [a-z]+ /, ""); print; exit }' "$T_TMP/out"; }

check_eq "idtoname: uid 2001 -> alice@example.test" "'* user 2001 EXP alice@example.test\n'" "$(strip_exp 2 4)"
check "idtoname: absolute expiry = now + Positive-TTL (900 s)" exp_ok 2 4 900
check_eq "nametoid: alice@example.test -> 2001" "'* user alice@example.test EXP 2001\n'" "$(strip_exp 3 4)"
check_eq "Prime-Reverse: with alice's id, knfsd's idtoname cache got uid 2001's name unasked" \
	"'* user 2001 EXP alice@example.test\n'" "$(primed 3)"
check "... with the positive expiry (Positive-TTL, 900 s)" primed_exp_ok 3 900
check_eq "nametoid group, gss/krb5 authname echoed" \
	"'gss/krb5 group staff@example.test EXP 3001\n'" "$(strip_exp 5 4)"
check_eq "Prime-Reverse: a group, same authname, into the idtoname cache as a group" \
	"'gss/krb5 group 3001 EXP staff@example.test\n'" "$(primed 5)"
check_eq "unknown name: negative entry (no id field)" "'* user nosuch@example.test EXP\n'" \
	"$(strip_exp 7 4)"
check_eq "Prime-Reverse: nothing written for a negative answer, nor for idtoname requests" \
	"" "$(primed 7)$(primed 2)$(primed 8)$(primed 12)"
check "negative entry expires after [Kernel] Negative-TTL (45 s)" exp_ok 7 4 45
check_eq "unknown gid: negative entry (nfsd then sends the number)" "'* group 3999999 EXP\n'" \
	"$(strip_exp 8 4)"
check_eq "a tab in an owner (\\011): answered negative, the name echoed as the kernel sent it" \
	"'* user a\\\\011b@example.test EXP\n'" "$(strip_exp 9 4)"
check "... with the Negative-TTL (45 s)" exp_ok 9 4 45
check_eq "a stray backslash: negative, sent back as \\134 (qword_get reads it as itself)" \
	"'* user a\\\\134x41 EXP\n'" "$(strip_exp 10 4)"
check_eq "unknown type: no answer" "noreply" "$(line 11)"
check_eq "daemon goes on after malformed lines" "'* user 10007 EXP user7@example.test\n'" "$(strip_exp 12 4)"
log=$(cat "$T_TMP/idmapd.log")
check_contains "the refused line logged with its reason" \
	"nametoid/channel: refused request, answered negative (control byte in field): *\\040user\\040a\\134011b@example.test\\012" \
	"$log"
check_eq "... once: the second refused request on the channel is not logged (rate limit)" 1 \
	"$(grep -c 'nametoid/channel: refused' "$T_TMP/idmapd.log")"
check_eq "authname with a space echoed escaped" "'a\\\\040b user user3@example.test EXP 10003\n'" \
	"$(strip_exp 14 4)"
check_eq "Prime-Reverse: the escaped authname primes the same key" \
	"'a\\\\040b user 10003 EXP user3@example.test\n'" "$(primed 14)"
fl=$(line 15)
check "both flush files written at start (wall-clock seconds)" \
	sh -c "set -- $fl; [ \$# -eq 2 ] && [ \$1 -ge $((now - 30)) ] && [ \$2 -ge $((now - 30)) ]"
check_eq "pipe name->id" "type=0 conv=1 name=alice@example.test id=2001 status=0x8" "$(line 18)"
check_eq "pipe gid->name" "type=1 conv=0 name=staff@example.test id=3001 status=0x8" "$(line 19)"
nobody_uid=$(getent passwd nobody | cut -d: -f3)
check_eq "pipe unknown name -> the nobody uid, success (as rpc.idmapd)" \
	"type=0 conv=1 name=nosuch@example.test id=$nobody_uid status=0x8" "$(line 20)"
check_eq "pipe unknown uid -> a failure (the kernel sends the number)" \
	"type=0 conv=0 name= id=3999999 status=0x4" "$(line 21)"
check_contains "short message: no answer" "noreply" "$(line 22)"
check_eq "bad im_type: answered INVALIDMSG at once" \
	"type=9 conv=0 name=a id=0 status=0x1" "$(line 23)"
check_eq "pipe goes on after malformed messages" \
	"type=0 conv=1 name=user5@example.test id=10005 status=0x8" "$(line 24)"
check_eq "a new client's pipe (clnt1) is found and served" \
	"type=0 conv=0 name=alice@example.test id=2001 status=0x8" "$(line 27)"
check_contains "malformed message logged" "malformed message (im_type" "$log"
stats=$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats --prometheus 2>&1)
printf '%s\n' "$stats" | grep '^nfskeys_idmapd_kernel_[a-z_]*total' | sed 's/^/# /'
kst() { printf '%s\n' "$stats" | awk -v m="nfskeys_idmapd_kernel_$1_total{path=\"$2\"}" '$1 == m { print $2 }'; }
got=""
for p in nfsd_idtoname nfsd_nametoid client_pipe; do
	got="$got $p:$(kst requests $p)/$(kst malformed $p)/$(kst answers $p)/$(kst negative $p)"
done
# what the script sent: requests/malformed/answers/negative per path
check_eq "per-path stats count what the script sent" \
	" nfsd_idtoname:4/1/2/1 nfsd_nametoid:6/2/3/3 client_pipe:8/2/5/1" "$got"
check_eq "and the idtoname entries primed (alice, staff, user3)" "3" "$(kst primed nfsd_idtoname)"
check "daemon still answers its socket" "$NFSKEYS" -c "$IDMAPD_CONF" idmapd ping

# which path asked: the daemon's record of its recent answers (root only), and explain
"$NFSKEYS" -c "$IDMAPD_CONF" idmapd lookup name-to-uid alice@example.test >/dev/null 2>&1
"$NFSKEYS" -c "$IDMAPD_CONF" idmapd recent --json >"$T_TMP/recent.json" 2>&1
rj() { python3 -c "
import json; d = json.load(open('$T_TMP/recent.json'))
print(' '.join(sorted('%s=%s' % (e['path'], e['answer']) for e in d if e['key'] == '$1' and e['kind'] == '$2')))" 2>&1; }
check_eq "recent: alice@example.test asked on knfsd's channel, the pipe and the socket" \
	"client-pipe=2001 nfsd-nametoid=2001 socket=2001" "$(rj alice@example.test name-to-uid)"
check_eq "recent: uid 2001 asked on nfsd-idtoname, the second client's pipe, primed, and prefetched with alice" \
	"client-pipe=alice@example.test nfsd-idtoname=alice@example.test nfsd-prime=alice@example.test prefetch=alice@example.test" \
	"$(rj 2001 uid-to-name)"
check_eq "recent: a negative answer is recorded as such" "nfsd-nametoid=" \
	"$(rj nosuch@example.test name-to-uid | tr ' ' '\n' | grep nfsd)"
out=$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd recent name-to-uid alice@example.test 2>&1)
check_contains "recent KIND KEY: the socket caller is named by pid and uid" "socket        (pid " "$out"
# the daemon's own pipes are no other network namespace's: netns null, no net:[...] shown
# (a container's pipe names its namespace: tests/kernel/)
check_eq "recent --json: every record has netns, null for the daemon's own pipe and the rest" \
	"ok" "$(python3 -c "
import json; d = json.load(open('$T_TMP/recent.json'))
print('ok' if d and all('netns' in e and e['netns'] is None for e in d) else d)" 2>&1)"
check_contains "recent: the daemon's own client pipe with no namespace named" \
	"client-pipe   name-to-uid alice@example.test -> 2001" "$out"
out=$("$NFSKEYS" -c "$IDMAPD_CONF" idmap explain alice@example.test 2>&1)
check_contains "explain says which kernel path asked" "nfsd-nametoid name-to-uid alice@example.test -> 2001" "$out"
t_ou_load
chmod 755 "$T_TMP" && chmod 644 "$IDMAPD_CONF" && chmod 777 "$IDMAPD_SOCK"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups $T_OU_ENV "$(t_ou nfskeys)" \
	-c "$IDMAPD_CONF" idmapd recent 2>&1); rc=$?
check_eq "recent is refused to other users (exit 1)" 1 "$rc"
check_contains "... saying it is for root" "permission denied (root only)" "$out"
check "daemon stops cleanly (exit 0)" t_idmapd_stop

# Prime-Reverse = no: the nametoid answer alone, nothing written to the idtoname channel
RPC2="$T_TMP/rpc2"
mkdir -p "$RPC2" "$T_TMP/pipefs2"
t_idmapd_conf '[Kernel]' 'Server-Channels = yes' 'Client-Pipe = no' "Channel-Dir = $RPC2" \
	'Prime-Reverse = no'
# fk_run N SCRIPT-LINE...: the daemon (configured on channels in $T_TMP/rpcN) answers a fake
# kernel playing the lines; what the kernel got is in $T_TMP/outN
fk_run() {
	_n=$1; shift
	printf '%s\n' "$@" >"$T_TMP/script$_n"
	python3 "$top_srcdir/tests/harness/fake-kernel.py" "$T_TMP/rpc$_n" "$T_TMP/pipefs2" \
		"$T_TMP/script$_n" >"$T_TMP/out$_n" 2>"$T_TMP/fk$_n.err" &
	FK=$!
	t_wait_for "test -e '$T_TMP/rpc$_n/ready'" 10 ||
		diag "fake kernel did not start: $(cat "$T_TMP/fk$_n.err")"
	t_idmapd_start
	touch "$T_TMP/rpc$_n/go"
	wait $FK
	sed 's/^/# /' "$T_TMP/out$_n"
}
fk_run 2 'chan nametoid * user alice@example.test\n'
check_eq "Prime-Reverse = no: the nametoid answer as before" \
	"1 '* user alice@example.test EXP 2001\\n'" \
	"$(awk '$1 == 1 { sub(/^[0-9]+/, "EXP", $5); print }' "$T_TMP/out2")"
check_eq "... and nothing written to the idtoname channel" "" "$(grep '^P' "$T_TMP/out2")"
t_idmapd_stop

# the workers' path (Inline-Lookups = no): the job that maps the name fetches the id's name
# too, so the prime is answered from the cache, not by a second trip through a worker
RPC3="$T_TMP/rpc3"
mkdir -p "$RPC3"
t_idmapd_conf '[Idmapd]' 'Inline-Lookups = no' '[Kernel]' 'Server-Channels = yes' \
	'Client-Pipe = no' "Channel-Dir = $RPC3"
fk_run 3 'chan nametoid * user alice@example.test\n' 'chan nametoid * group staff@example.test\n'
stats=$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd stats --prometheus 2>&1)
st() { printf '%s\n' "$stats" | awk -v m="nfskeys_idmapd_$1" '$1 == m { print $2 }'; }
check_eq "workers' path: alice and staff primed into idtoname as before" \
	"'* user 2001 EXP alice@example.test\n' '* group 3001 EXP staff@example.test\n'" \
	"$(awk '$1 ~ /^P/ { sub(/^P[0-9]+ [a-z]+ /, ""); $4 = "EXP"; printf "%s%s", sep, $0; sep = " " }' "$T_TMP/out3")"
check_eq "... the reverse fetched in the name's job (2), the primes answered from the cache (2 hits, 2 misses)" \
	"2 2 2" "$(st reverse_prefetched_total) $(st 'lookups_total{result="hit"}') $(st 'lookups_total{result="miss"}')"
t_idmapd_stop

# A lookup that failed (the directory down) is kept by knfsd only as long as the daemon
# keeps the failure (Stale-TTL, 7 s here), not for [Kernel] Negative-TTL (45 s): nfsd asks
# again when the daemon tries again, instead of refusing the owner (BADOWNER) for a minute.
# The directory: LDAP on a port nobody listens on, so every search fails at once.
RPC4="$T_TMP/rpc4"
mkdir -p "$RPC4"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
cat >"$IDMAPD_CONF" <<CONF
[General]
Domain = example.test
[Translation]
Method = static,ldap
[LDAP]
URI = ldap://127.0.0.1:$port
Base = dc=example,dc=test
[Idmapd]
Socket = $IDMAPD_SOCK
Kernel-Keyrings = nfskeys-test-none-$$
Stale-TTL = 7
[Static]
alice@example.test = 2001
[Kernel]
Server-Channels = yes
Client-Pipe = no
Channel-Dir = $RPC4
Negative-TTL = 45
CONF
now=$(date +%s)
fk_run 4 'chan nametoid * user bob@example.test\n' 'chan idtoname * group 4242\n' \
	'chan nametoid * user alice@example.test\n'
now_end=$(date +%s)
# f4 N: answer N with its expiry as EXP; e4 N: that expiry
f4() {
	awk -v n="$1" '$1 == n { sub(/^[0-9]+ /, ""); sub(/^[0-9]+/, "EXP", $4); print }' \
		"$T_TMP/out4"
}
e4() { awk -v n="$1" '$1 == n { sub(/[^0-9].*$/, "", $5); print $5 }' "$T_TMP/out4"; }
check_eq "directory down: nametoid answered negative" "'* user bob@example.test EXP\n'" "$(f4 1)"
check "... kept for the daemon's Stale-TTL (7 s), not Negative-TTL (45 s)" in_window "$(e4 1)" 7
check_eq "directory down: idtoname answered negative (nfsd sends the number)" \
	"'* group 4242 EXP\n'" "$(f4 2)"
check "... kept for the daemon's Stale-TTL (7 s) too" in_window "$(e4 2)" 7
check_eq "a name the static map knows is answered as ever" \
	"'* user alice@example.test EXP 2001\n'" "$(f4 3)"
t_idmapd_stop

# a bad [Kernel] value is refused at start, naming key and value
printf '[Kernel]\nServer-Channels = maybe\n' >"$T_TMP/bad.conf"
"$IDMAPD" --foreground --config "$T_TMP/bad.conf" >"$T_TMP/bad.log" 2>&1
check_eq "[Kernel] Server-Channels = maybe: the daemon does not start (exit 3)" 3 $?
check_contains "... and says why" "[Kernel] Server-Channels = maybe: expected yes, no or auto" \
	"$(cat "$T_TMP/bad.log")"

# rpc.idmapd beside us: -S serves only knfsd's channels, so the client's pipes are ours to
# serve (found by bench/kernel-idmap.ktest: an rpc.idmapd -S made Client-Pipe = yes refuse
# to start); without -S it serves both, and we refuse rather than fight over the pipes.
# A stand-in: a shell that names itself rpc.idmapd (comm) with rpc.idmapd's options.
fake_rpc_idmapd() {
	sh -c 'printf rpc.idmapd >/proc/$$/comm; while :; do sleep 1; done' rpc.idmapd "$@" &
	FAKE=$!
	t_wait_for "grep -qx rpc.idmapd /proc/$FAKE/comm" 5
}
t_idmapd_conf '[Kernel]' 'Server-Channels = no' 'Client-Pipe = yes' \
	"Pipefs-Directory = $PIPEFS"
fake_rpc_idmapd -f -S -p /run/rpc_pipefs
check "rpc.idmapd -S runs: Client-Pipe = yes starts (the pipes are not rpc.idmapd's)" \
	t_idmapd_start
t_idmapd_stop
t_idmapd_conf '[Kernel]' 'Server-Channels = yes' 'Client-Pipe = no' "Channel-Dir = $RPC"
"$IDMAPD" --foreground --config "$IDMAPD_CONF" >"$T_TMP/busy.log" 2>&1
check_eq "rpc.idmapd -S runs: Server-Channels = yes refuses to start (exit 3)" 3 $?
check_contains "... naming rpc.idmapd and the channels" \
	"rpc.idmapd (pid $FAKE) already serves knfsd's idmap channels" "$(cat "$T_TMP/busy.log")"
kill $FAKE
fake_rpc_idmapd -vf
t_idmapd_conf '[Kernel]' 'Server-Channels = no' 'Client-Pipe = yes' \
	"Pipefs-Directory = $PIPEFS"
"$IDMAPD" --foreground --config "$IDMAPD_CONF" >"$T_TMP/busy.log" 2>&1
check_eq "rpc.idmapd without -S/-C runs: Client-Pipe = yes refuses to start (exit 3)" 3 $?
check_contains "... naming rpc.idmapd and the pipes" \
	"rpc.idmapd (pid $FAKE) already serves the NFS client's idmap pipes" "$(cat "$T_TMP/busy.log")"
kill $FAKE
