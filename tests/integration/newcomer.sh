#!/bin/sh
# What a new admin hit trying the installed programs, each as it was
# found: a misspelt [Translation] Method taken by a reload, one broken conf.d drop-in
# stopping every client, typos and bad values said nothing about, Helper-Timeout = abc
# taken, two value syntaxes, explain's advice and exit status, `nfsattr get -s SOCK`
# reading another store, and help that names commands which are not there or misses ones
# that are.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (request-key routes, daemons)"

plan 51

nk() { "$NFSKEYS" -c "$IDMAPD_CONF" "$@"; }

# ---- a misspelt backend is a bad value: the reload is refused, the old chain answers
t_idmapd_conf
t_idmapd_start || { sed 's/^/# /' "$T_TMP/idmapd.log"; exit 1; }
gen0=$(t_idmapd_stat config_generation)
sed -i 's/^Method = static,nsswitch$/Method = static,nsswich/' "$IDMAPD_CONF"
out=$(nk idmapd reload 2>&1); rc=$?
check_eq "reload with Method = static,nsswich: exit 1" 1 "$rc"
check_contains "... naming the unknown backend" "unknown backend 'nsswich'" "$out"
check_contains "... and what is installed" "installed: " "$out"
check_eq "... the running configuration is kept (generation)" "$gen0" \
	"$(t_idmapd_stat config_generation)"
check_contains "... and still maps root through nsswitch" "0	" \
	"$(nk idmapd lookup name-to-uid root@example.test 2>&1)"
out=$(nk idmap explain root@example.test 2>/dev/null)
check_contains "explain names the typo" "'nsswich' is not an installed backend" "$out"
case "$out" in *"bring its server back"*) not_ok "... without the advice for an outage" ;;
*) ok "... without the advice for an outage" ;; esac
check_contains "... and the line to correct" "correct the name in [Translation] Method = static,nsswich" "$out"
sed -i 's/^Method = static,nsswich$/Method = static,nsswitch/' "$IDMAPD_CONF"
check "the corrected configuration reloads" nk idmapd reload

# ---- Helper-Timeout = abc and the one duration syntax
printf '[Idmapd]\nHelper-Timeout = abc\n' >>"$IDMAPD_CONF"
out=$(nk idmapd reload 2>&1); rc=$?
check_eq "Helper-Timeout = abc: the reload fails (exit 1)" 1 "$rc"
check_contains "... naming key and value" "[Idmapd] Helper-Timeout = abc" "$out"
sed -i 's/^Helper-Timeout = abc$/Helper-Timeout = 300ms/' "$IDMAPD_CONF"
printf 'Stale-Limit = 1h\nStale-Wait = 1s\nIdle-Timeout = 2m\nMax-Request = 8K\n' >>"$IDMAPD_CONF"
check "Stale-Limit = 1h, Stale-Wait = 1s, Idle-Timeout = 2m, Max-Request = 8K, Helper-Timeout = 300ms reload" \
	nk idmapd reload
printf '[Idmap]\nPositive-TTL = 2h\n' >>"$IDMAPD_CONF"
check_contains "[Idmap] Positive-TTL = 2h: 7200 s" "ttl 7200s" \
	"$(nk idmap lookup --local alice@example.test 2>&1)"
check "nfskeys idmapd --timeout 2s ping" nk idmapd --timeout 2s ping

# ---- unknown keys are said at start and on a reload
sed -i '/^\[Idmap\]$/d; /^Positive-TTL = 2h$/d' "$IDMAPD_CONF"
printf '[Idmapd]\nStale-Limt = 10\n' >>"$IDMAPD_CONF"
check "a configuration with an unknown key reloads" nk idmapd reload
check_contains "... and the daemon warns about the key, with file and line" \
	"unknown key 'Stale-Limt' in [Idmapd]" "$(cat "$T_TMP/idmapd.log")"

# ---- explain: sid in Method, and an exit status for scripts
out=$(nk idmap explain S-1-5-21-1-2-3-1000); rc=$?
check_contains "explain of an unmapped SID names 'sid' in Method" \
	"[Translation] Method = static,nsswitch,sid" "$out"
case "$out" in *"[Static] S-1-"*) not_ok "... and no [Static] SID line (static maps no SIDs)" ;;
*) ok "... and no [Static] SID line (static maps no SIDs)" ;; esac
check_eq "... exit 1 (nobody)" 1 "$rc"
check_contains "... the result says why in words" "no backend knows it" "$out"
nk idmap explain root@example.test >/dev/null; rc=$?
check_eq "explain of a mapped name: exit 0" 0 "$rc"

# ---- one malformed drop-in: the daemon keeps running; clients go on
CONFD="$(dirname "$IDMAPD_CONF")/conf.d"
mkdir -p "$CONFD"
chmod 755 "$CONFD"
printf 'this is garbage\n' >"$CONFD/50-bad.conf"
t_on_exit "rm -rf '$CONFD'"
out=$(nk idmapd ping 2>&1); rc=$?
check_eq "with a broken drop-in: nfskeys idmapd ping exits 0" 0 "$rc"
check_contains "... and names the broken file" "50-bad.conf:1:" "$out"
check "... nfskeys --help" nk --help
check "... nfskeys --version" nk --version
check "... nfskeys idmapd --help" nk idmapd --help
check "... nfskeys idmap --help" nk idmap --help
out=$(nk idmapd reload 2>&1); rc=$?
check_eq "... a reload is refused (exit 1)" 1 "$rc"
check_contains "... saying where" "50-bad.conf:1:" "$out"
check_contains "... the daemon still answers" "2001	" \
	"$(nk idmapd lookup name-to-uid alice@example.test 2>&1)"
cat >"$T_TMP/helper.sh" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
LD_LIBRARY_PATH='$top_builddir/libnfskeys/.libs'; export LD_LIBRARY_PATH
exec '$top_builddir/tools/upcall/nfskeys-upcall' -c '$IDMAPD_CONF' "\$@" 2>>'$T_TMP/helper.err'
SH
chmod +x "$T_TMP/helper.sh"
if t_route_upcalls "$T_TMP/helper.sh"; then
	check_eq "... an upcall for uid:alice goes through the daemon (2001)" "$(t_hex 2001)00" \
		"$(t_upcall uid:alice@example.test | head -n1)"
	check_eq "... and one for user:2001 too" "$(t_hex alice@example.test)" \
		"$(t_upcall user:2001 | head -n1)"
else
	skip "needs a writable /etc/request-key.d"
	skip "needs a writable /etc/request-key.d"
fi
rm -f "$CONFD/50-bad.conf"
t_idmapd_stop
check_eq "idmapd stops cleanly" 0 "$?"

# ---- nfsattr get -s SOCK: that daemon's store, not the configured one
ATTRD="$top_builddir/attrd/nfskeys-attrd"
NFSATTR="$top_builddir/tools/nfsattr/nfsattr"
ACONF="$T_TMP/attr.conf"
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\nIdle-Timout = 5\n' "$T_TMP/other.db" \
	"$T_TMP/unused.sock" >"$ACONF"
chmod 755 "$T_TMP"
"$ATTRD" -f -c "$ACONF" -S "$T_TMP/daemon.db" -s "$T_TMP/a.sock" >"$T_TMP/attrd.log" 2>&1 &
apid=$!
t_on_exit "kill -9 $apid"
t_wait_for "[ -S '$T_TMP/a.sock' ]" 10
D="$T_TMP/dir"
mkdir -p "$D"
check "set through -s SOCK" "$NFSATTR" -c "$ACONF" -s "$T_TMP/a.sock" set "$D" cache=none
check_contains "nfsattr get -s SOCK reads that daemon's store" "cache        none" \
	"$("$NFSATTR" -c "$ACONF" -s "$T_TMP/a.sock" get "$D" 2>&1)"
case "$("$NFSATTR" -c "$ACONF" get "$D" 2>&1)" in
*"cache        none"*) not_ok "... while without -s the configured (other) store has nothing" ;;
*) ok "... while without -s the configured (other) store has nothing" ;; esac
check_contains "attrd warns about an unknown key at start, with file and line" \
	"attr.conf:5: unknown key 'Idle-Timout' in [Attrd]" "$(cat "$T_TMP/attrd.log")"
printf 'Admin-Grup = users\n' >>"$ACONF"
kill -HUP "$apid"
t_wait_for "grep -q 'reloaded:' '$T_TMP/attrd.log'" 10
check_contains "attrd warns about an unknown key on SIGHUP, with file and line" \
	"attr.conf:6: unknown key 'Admin-Grup' in [Attrd]" "$(cat "$T_TMP/attrd.log")"
check_contains "... and logs the reload" "reloaded: configuration" "$(cat "$T_TMP/attrd.log")"
kill "$apid"; wait "$apid" 2>/dev/null

# ---- help and documentation name commands that exist
missing=
for cmd in cifs afs nfs idmap idmapd; do
	verbs=$("$NFSKEYS" --help | awk -v c="$cmd" '$1 == c { f = 1 } f && /^  [a-z]/ && $1 != c { f = 0 } f' |
		grep -v "^Run " | sed 's/.*: //; s/([a-z]*)//g' | tr ',' '\n' | sed 's/ //g' | grep -v '^$')
	for v in $verbs; do
		grep -q "\"$v\"" "$top_srcdir"/tools/nfskeys/cmd-*.c || missing="$missing $cmd.$v"
	done
done
check_eq "every subcommand 'nfskeys --help' names is handled by tools/nfskeys/cmd-*.c" "" "$missing"
missing=
for v in $(sed -n 's/.*`nfskeys \([a-z]*\) \([a-z|\\-]*\)`.*/\1 \2/p' "$top_srcdir/README.md" |
	awk '{ n = split($2, a, /\\\|/); for (i = 1; i <= n; i++) print $1 "." a[i] }'); do
	grep -q "\"${v#*.}\"" "$top_srcdir"/tools/nfskeys/cmd-*.c || missing="$missing $v"
done
check_eq "every subcommand README.md names is handled" "" "$missing"
missing=
for v in query domain stats enable-upcalls clearall; do
	"$NFSKEYS" --help | grep -q "$v" || missing="$missing $v"
done
check_eq "nfskeys --help names idmap query, domain, stats, enable-upcalls and afs clearall" "" "$missing"
check_contains "nfsattr --help names smb3 for -t" "smb3" "$("$NFSATTR" --help)"
check_eq "every man page footer shows the same version" 1 \
	"$(sed -n 's/^\.TH [^ ]* [0-9] "[^"]*" "\([^"]*\)".*/\1/p' "$top_builddir"/man/*.[158] | sort -u | wc -l)"

# ---- an empty list says so, as 'nfskeys keys' does (this test has its own session
# keyring): nothing at all read like a failure
out=$("$NFSKEYS" cifs list 2>&1); rc=$?
check_eq "cifs list with no credentials: says so, exit 0" \
	"0|No CIFS credentials in the session keyring." "$rc|$out"
out=$("$NFSKEYS" cifs list --json 2>&1); rc=$?
check_eq "cifs list --json with no credentials: [], exit 0" "0|[]" "$rc|$out"
out=$("$NFSKEYS" afs list 2>&1); rc=$?
check_eq "afs list with no tokens: says so, exit 0" "0|No AFS tokens in the session keyring." \
	"$rc|$out"
out=$("$NFSKEYS" afs list --json 2>&1); rc=$?
check_eq "afs list --json with no tokens: [], exit 0" "0|[]" "$rc|$out"
printf 'Pw-1\n' | "$NFSKEYS" cifs add 127.0.0.1 -u newcomer >/dev/null 2>&1
out=$("$NFSKEYS" cifs list 2>&1)
check_eq "cifs list with a credential: the key, no 'No CIFS credentials'" "1|0" \
	"$(printf '%s\n' "$out" | grep -c 'cifs:a:127.0.0.1')|$(printf '%s\n' "$out" | grep -c '^No ')"
"$NFSKEYS" cifs clearall >/dev/null 2>&1
check_contains "cifs list after clearall: says so again" "No CIFS credentials" \
	"$("$NFSKEYS" cifs list 2>&1)"
# a description chosen by whoever added the key (keyctl here) is shown escaped
printf 'u:pw' | keyctl padd logon "cifs:d:$(printf 'EVIL\033[2J\\')" @s >/dev/null 2>&1
out=$("$NFSKEYS" cifs list 2>&1)
check_eq "cifs list: a description with an escape byte shown escaped, none raw" "1|0" \
	"$(printf '%s\n' "$out" | grep -cF 'cifs:d:EVIL\x1b[2J\\ ')|$(printf '%s' "$out" | grep -c "$(printf '\033')")"
"$NFSKEYS" cifs clearall >/dev/null 2>&1
