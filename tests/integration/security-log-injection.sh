#!/bin/sh
# doc/security/FINDINGS.md D11: text a user chooses (lookup keys, directory names) reaches
# the daemons' logs escaped: a newline in it cannot forge a log line.  nfskeys-idmapd --debug logs
# every lookup's key; nfskeys-attrd logs every set with the directory.  (nfskeys-upcall
# logs to syslog only, through the same helper: tests/unit/test-hostile-input.c.)
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/attrd.sh"

plan 4
FDPASS="python3 $top_srcdir/tests/harness/fd-pass.py"
xstr() {
	python3 -c 'import struct,sys; b=sys.argv[1].encode().decode("unicode_escape").encode(); print((struct.pack(">I",len(b))+b+b"\0"*(-len(b)%4)).hex())' "$1"
}

t_idmapd_conf
t_idmapd_start --debug || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
$FDPASS "$IDMAPD_SOCK" 0x20004e01 2 /dev/null none \
	0000000100000001$(xstr 'evil\nnfskeys-idmapd: FORGED cache flushed by uid 0') >/dev/null
t_wait_for "grep -q FORGED '$T_TMP/idmapd.log'" 5
check_eq "idmapd: no forged line in the log" "" \
	"$(grep '^nfskeys-idmapd: FORGED' "$T_TMP/idmapd.log")"
check_contains "... the key is there, escaped" 'evil\x0anfskeys-idmapd: FORGED' \
	"$(cat "$T_TMP/idmapd.log")"
t_idmapd_stop

printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n' "$T_TMP/attr.db" "$T_TMP/attrd.sock" \
	>>"$IDMAPD_CONF"
$T_DAEMON_WRAPPER "$ATTRD" -f -c "$IDMAPD_CONF" -v -v >>"$T_TMP/attrd.log" 2>&1 &
ATTRD_PID=$!
t_on_exit "kill $ATTRD_PID"
# the daemon itself must answer ("nfsattr stats" exits 0 with none: it reads the store)
t_wait_for "t_attrd_alive $ATTRD_PID '$IDMAPD_CONF'" $T_DAEMON_WAIT ||
	{ sed 's/^/# /' "$T_TMP/attrd.log"; fail_all "attrd: no answer over $T_TMP/attrd.sock"; }
DIR="$T_TMP/d
FORGED uid 0 removed 9 attribute(s)"
mkdir "$DIR"
# straight to the daemon (as nfsattr does when it goes through it), the directory as an
# O_PATH descriptor
$FDPASS "$T_TMP/attrd.sock" 0x20004e02 2 "$DIR" pathdir 00000001$(xstr cache)$(xstr none) \
	>"$T_TMP/set.out" 2>&1
sed "s/^/# /" "$T_TMP/set.out"
t_wait_for "grep -q 'attribute(s) on' '$T_TMP/attrd.log'" 3
check_eq "attrd: no forged line in the log" "" "$(grep '^FORGED' "$T_TMP/attrd.log")"
if grep -q 'attribute(s) on' "$T_TMP/attrd.log"; then
	check_contains "... the directory is there, escaped" 'd\x0aFORGED' "$(cat "$T_TMP/attrd.log")"
else
	skip "attrd logged no line for the set (its set log did not reach -v -v output here)"
fi
