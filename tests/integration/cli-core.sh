#!/bin/sh
# The nfskeys CLI: help, version, exit codes, config errors and keys list (no payloads).
. "$top_srcdir/tests/harness/lib.sh"
plan 30

out=$("$NFSKEYS" --help); check_contains "--help lists the keys command" "keys" "$out"
out=$("$NFSKEYS" --version); check_eq "--version" "nfskeys $(sed -n 's/^AC_INIT(\[nfskeys\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")" "$out"
"$NFSKEYS" frobnicate >/dev/null 2>&1; check_eq "unknown command exits 2" 2 $?
"$NFSKEYS" >/dev/null 2>&1; check_eq "no command exits 2" 2 $?

printf '[General]\nbroken line\n' >"$T_TMP/bad.conf"
err=$("$NFSKEYS" -c "$T_TMP/bad.conf" keys 2>&1); rc=$?
check_eq "malformed config exits 3" 3 "$rc"
check_contains "malformed config names file and line" "$T_TMP/bad.conf:2:" "$err"

printf '[General]\nDomian = typo\n' >"$T_TMP/typo.conf"
err=$("$NFSKEYS" -c "$T_TMP/typo.conf" keys list 2>&1 >/dev/null); rc=$?
check_eq "unknown key is not fatal" 0 "$rc"
check_contains "unknown key is warned about by default" "typo.conf:2: unknown key 'Domian'" "$err"
err=$("$NFSKEYS" -c "$T_TMP/none.conf" keys 2>&1); rc=$?
check_eq "missing explicit config exits 3" 3 "$rc"
"$NFSKEYS" -c "$T_TMP/typo.conf" keys list extra >/dev/null 2>&1
check_eq "keys list with an extra argument exits 2" 2 $?

printf '[General]\n' >"$T_TMP/ok.conf"
export NFSKEYS_CONF="$T_TMP/ok.conf"
secret="pw-$$-never-shown"
printf 'tester:%s\0' "$secret" | keyctl padd logon "cifs:a:192.0.2.77" @s >/dev/null
keyctl add user "nfskeys-unrelated" x @s >/dev/null
out=$("$NFSKEYS" keys list)
check_contains "keys list shows the cifs logon key" "cifs:a:192.0.2.77" "$out"
case "$out" in *"$secret"*|*nfskeys-unrelated*) not_ok "keys list hides payloads and unrelated keys" ;;
*) ok "keys list hides payloads and unrelated keys" ;; esac
keyctl add user "$(printf 'cifs:x\033[2Jevil')" x @s >/dev/null
printf 'u:p\0' | keyctl padd logon "$(printf 'cifs:d:EVIL\033[2J')" @s >/dev/null
out=$("$NFSKEYS" keys list)
check_contains "control bytes in descriptions are escaped" 'cifs:d:EVIL\x1b[2J' "$out"
case "$out" in *"$(printf '\033')"*) not_ok "no raw escape byte reaches the terminal" ;;
*) ok "no raw escape byte reaches the terminal" ;; esac
out=$("$NFSKEYS" keys list --all)
check_contains "keys list --all shows other keys" "nfskeys-unrelated" "$out"
printf 'u:p\0' | keyctl padd logon "$(printf 'cifs:d:caf\303\251-\377\300\257')" @s >/dev/null
out=$("$NFSKEYS" keys list --json)
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert any(k["description"]=="cifs:d:caf\u00e9-\u00ff\u00c0\u00af" for k in d)' 2>/dev/null
check_eq "keys list --json keeps UTF-8 and escapes invalid bytes" 0 $?
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert any(k["description"]=="cifs:a:192.0.2.77" and k["type"]=="logon" for k in d)' 2>/dev/null
check_eq "keys list --json is valid JSON with the key" 0 $?

# a bad [General] Verbosity: one error, with its line and the schema's list, exit 3
printf '[General]\nVerbosity = loud\n' >"$T_TMP/loud.conf"
err=$("$NFSKEYS" -c "$T_TMP/loud.conf" keys list 2>&1 >/dev/null); rc=$?
check_eq "Verbosity = loud: exit 3" 3 "$rc"
check_eq "... one message, with the line and the schema's values" \
	"nfskeys: error: $T_TMP/loud.conf:2: bad value: [General] Verbosity = loud: expected one of err|warning|notice|info|debug|error|warn|emerg|alert|crit|0|1|2|3|4|5|6|7" \
	"$err"
# the library's messages carry the name of the program that printed them
err=$("$top_builddir/tools/nfsattr/nfsattr" -c "$T_TMP/loud.conf" status 2>&1 >/dev/null)
check_eq "nfsattr names itself in the library's error" "nfsattr: error: " "$(printf '%s' "$err" | cut -c1-16)"
# a damaged policy store: nfskeys-mount names it once, under its own name, and goes on
head -c 4096 /dev/zero | tr '\0' 'x' >"$T_TMP/damaged.db"
printf '[Attr]\nStore = %s/damaged.db\n' "$T_TMP" >"$T_TMP/store.conf"
err=$("$top_builddir/tools/nfsattr/nfskeys-mount" -c "$T_TMP/store.conf" -n srv:/x /mnt 2>&1 >/dev/null)
check_eq "nfskeys-mount: a damaged store is one error and one warning" \
	"nfskeys-mount: error: attr store $T_TMP/damaged.db: PRAGMA user_version: file is not a database
nfskeys-mount: warning: mounting without policy options" "$err"
# ... and nfsattr says it once too (the library's line names the file and the cause)
mkdir -p "$T_TMP/dir"
err=$("$top_builddir/tools/nfsattr/nfsattr" -c "$T_TMP/store.conf" list 2>&1 >/dev/null); rc=$?
check_eq "nfsattr list: a damaged store is one error, exit 1" \
	"1 nfsattr: error: attr store $T_TMP/damaged.db: PRAGMA user_version: file is not a database" \
	"$rc $err"
# getopt's complaints name the program in every subcommand
for sub in doctor keys "wb status"; do
	# shellcheck disable=SC2086
	err=$("$NFSKEYS" $sub --bogus 2>&1 >/dev/null)
	check_contains "$sub --bogus: named nfskeys" "nfskeys: unrecognized option '--bogus'" "$err"
done
# getopt's complaints name the program, not the subcommand
err=$("$NFSKEYS" status --bogus 2>&1 >/dev/null); rc=$?
check_eq "status --bogus: exit 2" 2 "$rc"
check_contains "... named nfskeys" "nfskeys: unrecognized option '--bogus'" "$err"
# -p is --principal wherever it exists: afs --print has no -p
"$NFSKEYS" afs login -p example.org >/dev/null 2>&1
check_eq "afs login -p is a usage error (--print has no -p)" 2 $?
out=$("$NFSKEYS" cifs list --json)
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert any(k["description"]=="cifs:a:192.0.2.77" and k["type"]=="logon" for k in d)' 2>/dev/null
check_eq "cifs list --json is valid JSON with the key" 0 $?
"$NFSKEYS" cifs clearall --json >/dev/null 2>&1
check_eq "cifs clearall --json is a usage error" 2 $?
