#!/bin/sh
# nfskeys cifs: the command line over the real session keyring (run-test gives this
# script its own): add/update/clear/clearall/list, exit codes and the error messages.
. "$top_srcdir/tests/harness/lib.sh"
plan 22

# run EXPECTED_RC DESCRIPTION PASSWORD ARGS...: run nfskeys cifs with PASSWORD on stdin;
# output in $out.
run() {
	want=$1; d=$2; pw=$3; shift 3
	out=$(printf '%s\n' "$pw" | "$NFSKEYS" cifs "$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ]; then ok "$d"; else not_ok "$d (rc $rc, want $want)"; diag "$out"; fi
}

out=$("$NFSKEYS" cifs --help); check_contains "--help shows the usage" "clearall" "$out"
run 0 "add a host" 'pw one' add -u alice 127.0.0.1
run 1 "add again refuses to overwrite" 'pw' add -u alice 127.0.0.1
check_contains "... and says to use update" "use 'nfskeys cifs update'" "$out"
run 0 "update it" 'pw two' update -u alice 127.0.0.1
run 1 "update a missing one fails" 'pw' update -u alice ::1
run 0 "add a domain with a timeout" 'pw' add -u alice --domain CORP -t 600
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
run 0 "clearall removes the rest" '' clearall
run 1 "clearall with nothing left fails" '' clearall

# The user's default session keyring (no pam_keyinit) is shared: say so.
err=$(printf 'pw\n' | keyctl session "_uid_ses.$(id -u)" "$NFSKEYS" cifs add -u alice --domain "NFSKEYS-WARN-$$" 2>&1)
check_contains "warns when the session keyring is the user's default one" "shared by all your sessions" "$err"
keyctl session "_uid_ses.$(id -u)" "$NFSKEYS" cifs clear --domain "NFSKEYS-WARN-$$" >/dev/null 2>&1
err=$(printf 'pw\n' | "$NFSKEYS" cifs add -u alice --domain "NFSKEYS-NOWARN-$$" 2>&1)
case "$err" in *shared*) not_ok "no warning with a private session keyring"; diag "$err" ;;
*) ok "no warning with a private session keyring" ;; esac
