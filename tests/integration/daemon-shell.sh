#!/bin/sh
# The one daemon shell (common/daemon.[ch]) as both daemons use it: detaching only once the
# socket listens (else the child's exit status), the pid file, the runtime directory
# created and named while no other directory is, the exit codes of the man pages,
# malformed limits refused with key and value, and a reload that builds the whole new
# state before it swaps (attrd keeps its Admin-Group when the new store cannot open).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/attrd.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (runs a client with another uid and group)"

plan 38

NOWHERE="/nonexistent-nfskeys-$$"
chmod 755 "$T_TMP"
t_on_exit "rm -rf '$NOWHERE'"

# ---- nfskeys-idmapd: a missing directory other than the runtime one is an error
t_idmapd_conf "[General]" "Runtime-Dir = $T_TMP/run" "[Idmapd]" "Socket = $T_TMP/run/idmapd.sock"
timeout 120 "$IDMAPD" -f -c "$IDMAPD_CONF" -s "$NOWHERE/x.sock" >"$T_TMP/out" 2>&1
check_eq "idmapd -s $NOWHERE/x.sock: exit 4" 4 "$?"
check_eq "... and $NOWHERE is not created" "absent" "$([ -e "$NOWHERE" ] && echo present || echo absent)"
check_contains "... the message names the directory" "directory $NOWHERE does not exist" \
	"$(cat "$T_TMP/out")"

# ---- detached: the parent returns once the daemon listens
RUN="$T_TMP/run"
# (timeout, 120 s, a hang guard as for every start here: a daemon that does not detach
# fails here instead of hanging the test)
timeout 120 "$IDMAPD" -c "$IDMAPD_CONF" >"$T_TMP/out" 2>&1
check_eq "idmapd without -f: the starting process exits 0" 0 "$?"
check "... and the daemon already answers (no wait)" "$NFSKEYS" -c "$IDMAPD_CONF" idmapd ping
pid=$(cat "$RUN/idmapd.pid" 2>/dev/null)
t_on_exit "[ -n '$pid' ] && kill -9 $pid"
check_contains "... its pid is in RUNTIME-DIR/idmapd.pid" "pid $pid " \
	"$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd ping 2>&1)"
check_eq "... the runtime directory was created with mode 755" 755 "$(stat -c %a "$RUN")"
check_contains "... and the daemon said so, naming it" "created the runtime directory $RUN" \
	"$(cat "$T_TMP/out")"
check_eq "... it is detached (its own session)" "${pid:-none}" \
	"$(ps -o sid= -p "$pid" | tr -d ' ')"
kill -TERM "$pid"
t_wait_for "! kill -0 $pid" 10
check_eq "SIGTERM stops it and removes the pid file" "gone" \
	"$([ -e "$RUN/idmapd.pid" ] && echo present || echo gone)"

printf 'this is garbage\n' >"$T_TMP/bad.conf"
timeout 120 "$IDMAPD" -c "$T_TMP/bad.conf" >"$T_TMP/out" 2>&1
check_eq "detached start with a broken configuration: the parent exits 3" 3 "$?"
check_contains "... with the daemon's message on its stderr" "bad.conf:1:" "$(cat "$T_TMP/out")"
check_eq "... in one line (no second 'cannot load' line)" 1 \
	"$(grep -c 'bad.conf' "$T_TMP/out")"
timeout 120 "$IDMAPD" -c "$IDMAPD_CONF" -s "$NOWHERE/x.sock" >"$T_TMP/out" 2>&1
check_eq "detached start on a socket it cannot create: the parent exits 4" 4 "$?"

# ---- nfskeys-attrd on the same shell
ACONF="$T_TMP/attr.conf"
# what uid 65534 runs is the installed copy (the build tree may be out of its reach)
t_ou_load
NFSATTR_OU=$(t_ou nfsattr)
ASOCK="$RUN/attrd.sock"
rm -rf "$RUN"
printf '[General]\nRuntime-Dir = %s\n[Attr]\nStore = %s\n[Attrd]\nAdmin-Group = 4242\n' \
	"$RUN" "$T_TMP/attr.db" >"$ACONF"
timeout 120 "$ATTRD" -c "$ACONF" >"$T_TMP/out" 2>&1
check_eq "attrd without -f: the starting process exits 0" 0 "$?"
apid=$(cat "$RUN/attrd.pid" 2>/dev/null)
t_on_exit "[ -n '$apid' ] && kill -9 $apid"
# (its pid runs and it answers over the socket: "nfsattr stats" exits 0 with no daemon)
check "... and the daemon already answers (pid ${apid:-none})" t_attrd_alive "$apid" "$ACONF"
check_eq "... the socket is in the created runtime directory" yes \
	"$([ -S "$ASOCK" ] && echo yes || echo no)"
check_contains "... which it named" "created the runtime directory $RUN" "$(cat "$T_TMP/out")"
kill -TERM "$apid"
t_wait_for "! kill -0 $apid" 10
check_eq "SIGTERM stops attrd and removes its pid file" "gone" \
	"$([ -e "$RUN/attrd.pid" ] && echo present || echo gone)"

timeout 120 "$ATTRD" -f -c "$ACONF" -s "$NOWHERE/a.sock" >"$T_TMP/out" 2>&1
check_eq "attrd -s $NOWHERE/a.sock: exit 4" 4 "$?"
check_eq "... and $NOWHERE is not created" "absent" "$([ -e "$NOWHERE" ] && echo present || echo absent)"

for kv in "Idle-Timeout = forever" "Max-Clients = lots"; do
	printf '%s\n' "$kv" >>"$ACONF"
	timeout 120 "$ATTRD" -f -c "$ACONF" >"$T_TMP/out" 2>&1
	check_eq "attrd with '$kv': exit 3" 3 "$?"
	check_contains "... naming key and value" "$kv" "$(cat "$T_TMP/out")"
	sed -i '$d' "$ACONF"
done

# ---- reload: all or nothing (the Admin-Group waits for the store)
printf '[General]\nRuntime-Dir = %s\n[Attr]\nStore = %s\n[Attrd]\nSocket = %s\nAdmin-Group = 4242\n' \
	"$RUN" "$T_TMP/attr.db" "$ASOCK" >"$ACONF"
"$ATTRD" -f -c "$ACONF" >"$T_TMP/attrd.log" 2>&1 &
apid=$!
t_on_exit "kill -9 $apid"
t_wait_for "t_attrd_alive $apid '$ACONF'" 10
D="$T_TMP/rootdir"
mkdir -p "$D"
check "a member of Admin-Group 4242 may set on root's directory" \
	setpriv --reuid=65534 --regid=65534 --groups=4242 $T_OU_ENV "$NFSATTR_OU" -c "$ACONF" set "$D" cto=on
sed -i "s|^Store = .*|Store = $NOWHERE/attr.db|; s|^Admin-Group = .*|Admin-Group = 4343|" "$ACONF"
kill -HUP "$apid"
t_wait_for "grep -q 'reload failed' '$T_TMP/attrd.log'" 10
check_contains "a reload whose store cannot open fails, and says so" \
	"reload failed, keeping the running configuration: cannot open store $NOWHERE/attr.db" \
	"$(cat "$T_TMP/attrd.log")"
check "... the old Admin-Group (4242) still applies" \
	setpriv --reuid=65534 --regid=65534 --groups=4242 $T_OU_ENV "$NFSATTR_OU" -c "$ACONF" set "$D" cto=off
setpriv --reuid=65534 --regid=65534 --groups=4343 $T_OU_ENV "$NFSATTR_OU" -c "$ACONF" set "$D" cto=on \
	>"$T_TMP/out" 2>&1
check_eq "... the new one (4343) does not: exit 4" 4 "$?"
sed -i "s|^Store = .*|Store = $T_TMP/attr.db|" "$ACONF"
kill -HUP "$apid"
t_wait_for "grep -q 'reloaded:' '$T_TMP/attrd.log'" 10
check_contains "a good reload logs a line with the generation" "reloaded: configuration $ACONF loaded (generation 2)" \
	"$(cat "$T_TMP/attrd.log")"
check "... and the new Admin-Group (4343) applies" \
	setpriv --reuid=65534 --regid=65534 --groups=4343 $T_OU_ENV "$NFSATTR_OU" -c "$ACONF" set "$D" cto=on
kill -TERM "$apid"
wait "$apid"
check_eq "attrd stops cleanly (exit 0)" 0 "$?"

# ---- one shell: the same options, exit codes and log format
for d in "$IDMAPD" "$ATTRD"; do
	n=$(basename "$d")
	help=$("$d" --help)
	check_contains "$n --help: the shell's options" "--foreground" "$help"
	check_contains "$n --help: the exit codes" "0 stopped, 1 failure, 2 usage, 3 configuration, 4 socket" "$help"
done
for p in nfskeys-idmapd.8 nfskeys-attrd.8; do
	codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH/p' "$top_srcdir/man/$p.in" | sed -n '/^\.B [0-9]$/s/^\.B //p' | tr '\n' ' ')
	check_eq "$p lists the exit codes 0-4" "0 1 2 3 4 " "$codes"
done
