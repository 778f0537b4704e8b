#!/bin/sh
# Reload failures through both daemons: the configuration file missing, unreadable (a
# directory in its place), malformed, naming a backend that cannot be loaded
# (nfskeys-idmapd) or a group that does not exist (nfskeys-attrd); each by the reload
# command and by SIGHUP.  Every time: the reload is refused with its cause, the failure
# is logged with its cause, the old configuration keeps serving (same generation,
# same answers), and the daemon stops cleanly at the end.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/attrd.sh"

plan 65

# break_conf CASE FILE: put CASE's broken configuration in FILE's place; sets CAUSE, the
# text the refusal and the log must carry
break_conf() {
	rm -rf "$2"
	case "$1" in
	missing) CAUSE="No such file or directory" ;;
	unreadable) mkdir "$2"; CAUSE="not a regular file" ;;
	malformed) printf '[General\nDomain = x\n' >"$2"; CAUSE=":1: section header without closing ']'" ;;
	backend) sed 's/^Method = .*/Method = static,no-such-backend/' "$T_TMP/idmapd-good.conf" >"$2"
		CAUSE="no-such-backend" ;;
	group) sed 's/^Admin-Group = .*/Admin-Group = no-such-group-nfskeys/' "$T_TMP/attrd-good.conf" >"$2"
		CAUSE="no-such-group-nfskeys" ;;
	esac
}
# wait_log FILE N: until FILE has more than N lines (t_wait_for uses $n: not ours)
wait_log() { t_wait_for "[ \$(wc -l <'$1') -gt $2 ]" 10; sleep 0.2; }

# --- nfskeys-idmapd
t_idmapd_conf
cp "$IDMAPD_CONF" "$T_TMP/idmapd-good.conf"
t_idmapd_start || { not_ok "idmapd starts"; sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
NKG() { "$NFSKEYS" -c "$T_TMP/idmapd-good.conf" "$@"; }
stat_good() { NKG idmapd stats | awk -v n="$1" '$1 == n { print $2 }'; }
gen0=$(stat_good config_generation)
for c in missing unreadable malformed backend; do
	for how in command SIGHUP; do
		break_conf $c "$IDMAPD_CONF"
		ln=$(wc -l <"$T_TMP/idmapd.log")
		if [ $how = command ]; then
			out=$(NKG idmapd reload 2>&1); rc=$?
			check_eq "idmapd, config $c, reload command: refused (exit 1)" 1 "$rc"
			check_contains "... with its cause" "$CAUSE" "$out"
		else
			kill -HUP "$IDMAPD_PID"
			wait_log "$T_TMP/idmapd.log" "$ln"
		fi
		check_contains "idmapd, config $c, $how: failure logged with its cause" "$CAUSE" \
			"$(tail -n +$((ln + 1)) "$T_TMP/idmapd.log")"
		check_eq "... the old configuration serves (alice 2001, generation $gen0)" "2001 $gen0" \
			"$(NKG idmapd lookup name-to-uid alice@example.test | cut -f1) $(stat_good config_generation)"
	done
	rm -rf "$IDMAPD_CONF"; cp "$T_TMP/idmapd-good.conf" "$IDMAPD_CONF"
done
check_contains "idmapd: a good reload still works afterwards" "generation" "$(NKG idmapd reload 2>&1)"

# --- the idmapd client needs no valid configuration of its own: it finds the socket in
# what of the file parses (or takes the default) and says which
{ cat "$T_TMP/idmapd-good.conf"; printf '[Broken\n'; } >"$T_TMP/client-malformed.conf"
sed 's/^\[General\]$/[General]\nVerbosity = loud/' "$T_TMP/idmapd-good.conf" >"$T_TMP/client-loud.conf"
for b in malformed loud; do
	out=$("$NFSKEYS" -c "$T_TMP/client-$b.conf" idmapd ping 2>&1); rc=$?
	check_eq "client config $b: idmapd ping reaches the daemon (exit 0)" 0 "$rc"
	check_contains "... saying where the socket came from" \
		"going on without the configuration: socket $IDMAPD_SOCK ([Idmapd] Socket in $T_TMP/client-$b.conf)" "$out"
done
gen=$(stat_good config_generation)
out=$("$NFSKEYS" -c "$T_TMP/client-malformed.conf" idmapd reload 2>&1); rc=$?
check_eq "client config malformed: idmapd reload works (exit 0, new generation)" "0 $((gen + 1))" \
	"$rc $(stat_good config_generation)"
printf '[General\n' >"$T_TMP/client-nosocket.conf"
out=$("$NFSKEYS" -c "$T_TMP/client-nosocket.conf" idmapd --socket "$IDMAPD_SOCK" ping 2>&1); rc=$?
check_eq "client config malformed, --socket given: ping works" 0 "$rc"
out=$("$NFSKEYS" -c "$T_TMP/client-nosocket.conf" idmapd ping 2>&1)
check_contains "no socket before the error: the default, said so" \
	"socket /run/nfskeys/idmapd.sock (the default, none in $T_TMP/client-nosocket.conf)" "$out"

# --- idmapd lookup --json, recent of a key with no mapping, --timeout in seconds
out=$(NKG idmapd lookup --json name-to-uid alice@example.test)
check_eq "idmapd lookup --json is one JSON object" "2001 static False" \
	"$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["id"], d["backend"], d["nobody"])' 2>&1)"
NKG idmapd lookup name-to-uid nosuch@example.test >/dev/null 2>&1
out=$(NKG idmapd recent name-to-uid nosuch@example.test)
check_contains "recent shows a key with no mapping as such" "name-to-uid nosuch@example.test -> no mapping" "$out"
case "$out" in *"No such file"*) not_ok "... not as 'No such file or directory'" ;;
*) ok "... not as 'No such file or directory'" ;; esac
NKG idmapd --timeout 3 ping >/dev/null 2>&1; check_eq "idmapd --timeout 3 (seconds) works" 0 $?
out=$(NKG idmapd --timeout 2000 ping 2>&1); rc=$?
check_eq "idmapd --timeout 2000: a bare number is seconds, over 600 refused (exit 2)" 2 "$rc"
check_contains "... saying so" "bad timeout '2000' (seconds, up to 600" "$out"
t_idmapd_stop; rc=$?
check_eq "idmapd stops cleanly (exit 0)" 0 "$rc"

# --- nfskeys-attrd
mkdir -p "$T_TMP/tree"
ATTRD_CONF="$T_TMP/attrd.conf"
printf '[Attr]\nStore = %s/attr.db\n[Attrd]\nSocket = %s/attrd.sock\nAdmin-Group = users\n' \
	"$T_TMP" "$T_TMP" >"$ATTRD_CONF"
cp "$ATTRD_CONF" "$T_TMP/attrd-good.conf"
t_attrd_start -v || { not_ok "attrd starts"; sed 's/^/# /' "$ATTRD_LOG"; exit 1; }
NAG() { "$NFSATTR" -c "$T_TMP/attrd-good.conf" "$@"; }
# attrd_reload: ATTRD_RELOAD over the socket; prints "STATUS MESSAGE"
attrd_reload() {
	python3 - "$T_TMP/attrd.sock" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(10); s.connect(sys.argv[1])
msg = struct.pack(">IIIIII", 0x4242, 0, 2, 0x20004e02, 1, 6) + struct.pack(">IIII", 0, 0, 0, 0)
s.sendall(struct.pack(">I", 0x80000000 | len(msg)) + msg)
def rd(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: raise SystemExit("connection closed")
        b += c
    return b
n = struct.unpack(">I", rd(4))[0] & 0x7fffffff
r = rd(n)
status = struct.unpack(">i", r[24:28])[0]
ml = struct.unpack(">I", r[28:32])[0]
print(status, r[32:32 + ml].decode(errors="replace"))
PY
}
i=0
for c in missing unreadable malformed group; do
	for how in command SIGHUP; do
		break_conf $c "$ATTRD_CONF"
		ln=$(wc -l <"$ATTRD_LOG")
		if [ $how = command ]; then
			out=$(attrd_reload 2>&1)
			check "attrd, config $c, reload command: refused (status < 0: $out)" test "${out%% *}" -lt 0
			check_contains "... with its cause" "$CAUSE" "$out"
		else
			kill -HUP "$ATTRD_PID"
			wait_log "$ATTRD_LOG" "$ln"
		fi
		check_contains "attrd, config $c, $how: failure logged with its cause" "$CAUSE" \
			"$(tail -n +$((ln + 1)) "$ATTRD_LOG")"
		i=$((i + 1))
		check "... the old configuration serves (daemon alive, a set through it works)" \
			sh -c "kill -0 $ATTRD_PID && '$NFSATTR' -c '$T_TMP/attrd-good.conf' set '$T_TMP/tree' actimeo=$i"
	done
	rm -rf "$ATTRD_CONF"; cp "$T_TMP/attrd-good.conf" "$ATTRD_CONF"
done
check_contains "attrd: a good reload still works afterwards" "0 configuration $T_TMP/attrd.conf loaded (generation 2)" "$(attrd_reload 2>&1)"
t_attrd_stop; rc=$?
check_eq "attrd stops cleanly (exit 0)" 0 "$rc"
