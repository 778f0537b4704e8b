#!/bin/sh
# nfskeys cifs: the command line over the real session keyring (run-test gives this
# script its own): add/update/clear/clearall/list, exit codes and the error messages.
. "$top_srcdir/tests/harness/lib.sh"
plan 29

# run EXPECTED_RC DESCRIPTION PASSWORD ARGS...: run nfskeys cifs with PASSWORD on stdin;
# output in $out.
run() {
	want=$1; d=$2; pw=$3; shift 3
	out=$(printf '%s\n' "$pw" | "$NFSKEYS" cifs "$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ]; then ok "$d"; else not_ok "$d (rc $rc, want $want)"; diag "$out"; fi
}

# Exit codes alone prove nothing: what changed in the session keyring is checked too.
# has_key DESC: a logon key DESC in the session keyring; serial DESC: its serial
has_key() { keyctl search @s logon "$1" >/dev/null 2>&1; }
serial() { keyctl search @s logon "$1" 2>/dev/null; }
hexs() { printf "$1" | od -An -v -tx1 | tr -d ' \n'; }
SHIM="$top_builddir/tests/shim/.libs/keyshim.so"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

out=$("$NFSKEYS" cifs --help); check_contains "--help shows the usage" "clearall" "$out"
run 0 "add a host" 'pw one' add -u alice 127.0.0.1
run 1 "add again refuses to overwrite" 'pw' add -u alice 127.0.0.1
check_contains "... and says to use update" "use 'nfskeys cifs update'" "$out"
s1=$(serial cifs:a:127.0.0.1)
: >"$T_TMP/shim.log"
export KEYSHIM_LOG="$T_TMP/shim.log" LD_PRELOAD="$SHIM"
run 0 "update it" 'pw two' update -u alice 127.0.0.1
unset KEYSHIM_LOG LD_PRELOAD
check_contains "... the kernel is handed the new payload alice:pw two\\0" "$(hexs 'alice:pw two\0')" \
	"$(cat "$T_TMP/shim.log")"
check_eq "... the same key, updated in place" "$s1" "$(serial cifs:a:127.0.0.1)"
run 1 "update a missing one fails" 'pw' update -u alice ::1
run 0 "add a domain with a timeout" 'pw' add -u alice --domain CORP -t 600
d=$(serial cifs:d:CORP)
exp=$(awk -v s="$(printf %08x "${d:-0}")" '$1 == s { print $4 }' /proc/keys)
case "$exp" in 9m | 10m) ok "... its timeout is 600 s ($exp)" ;;
*) not_ok "... its timeout is 600 s (got '$exp')" ;; esac
out=$("$NFSKEYS" cifs list)
check_contains "list shows the host key" "cifs:a:127.0.0.1" "$out"
check_contains "list shows the domain key" "cifs:d:CORP" "$out"
run 1 "user name with ':' is refused" 'pw' add -u 'a:b' ::1
check_contains "... naming the problem" "contains ':'" "$out"
run 1 "empty user is refused" 'pw' add -u '' ::1
long=$(printf '%0257d' 0)
run 1 "user over 256 bytes is refused" 'pw' add -u "$long" ::1
longpw=$(printf '%0513d' 0)
run 1 "password over 512 bytes is refused" "$longpw" add -u bob ::1
run 1 "unresolvable host is refused" 'pw' add -u bob host.invalid
check_contains "... naming the host" "cannot resolve host 'host.invalid'" "$out"
run 2 "bad timeout is a usage error" 'pw' add -u bob ::1 -t soon
run 0 "clear the host" '' clear 127.0.0.1
check_eq "... the host key is gone, the domain key stays" "gone kept" \
	"$(has_key cifs:a:127.0.0.1 && echo kept || echo gone) $(has_key cifs:d:CORP && echo kept || echo gone)"
run 0 "clearall removes the rest" '' clearall
check_eq "... no cifs key left" "" "$(for k in $(keyctl rlist @s); do keyctl rdescribe "$k"; done | grep ';cifs:')"
run 1 "clearall with nothing left fails" '' clearall

# The user's default session keyring (no pam_keyinit) is shared: say so.
err=$(printf 'pw\n' | keyctl session "_uid_ses.$(id -u)" "$NFSKEYS" cifs add -u alice --domain "NFSKEYS-WARN-$$" 2>&1)
check_contains "warns when the session keyring is the user's default one" "shared by all your sessions" "$err"
keyctl session "_uid_ses.$(id -u)" "$NFSKEYS" cifs clear --domain "NFSKEYS-WARN-$$" >/dev/null 2>&1
err=$(printf 'pw\n' | "$NFSKEYS" cifs add -u alice --domain "NFSKEYS-NOWARN-$$" 2>&1)
case "$err" in *shared*) not_ok "no warning with a private session keyring"; diag "$err" ;;
*) ok "no warning with a private session keyring" ;; esac

# A CIFS access before the user had a key leaves the kernel's negative key (request-key
# finds no line for logon keys); add must replace it with the real one, not say "already
# exist" (the real kernel's run: tests/kernel/cifs-multiuser.ktest).  request2 from user
# space leaves the same negative key.
out=$(printf 'pw\n' | keyctl session - sh -c '
	keyctl request2 logon cifs:a:127.0.0.1 x @s >/dev/null 2>&1
	keyctl search @s logon cifs:a:127.0.0.1 >/dev/null 2>&1 && echo "not negative"
	"$0" cifs add -u alice 127.0.0.1 >/dev/null 2>&1; echo "add $?"
	keyctl search @s logon cifs:a:127.0.0.1 >/dev/null 2>&1 && echo found || echo missing
	keyctl rlist @s | wc -w' "$NFSKEYS" 2>/dev/null)
check_eq "a negative cifs:a: key left by a refused access: add replaces it" \
	"add 0 found" "$(echo $out | cut -d' ' -f1-3)"
check_eq "... one key in the keyring, not two" "1" "$(echo $out | cut -d' ' -f4)"
