#!/bin/sh
# Password entry on a real terminal (FINDINGS.md K5): the prompting commands (`nfskeys cifs
# add`, `cifs update`, `nfs login`: every caller of nfskeys_secret_read_password in tools/)
# run on a pseudo-terminal driven by tests/harness/tty-password.py, which reads the
# terminal's own settings while the prompt waits.  Echo must be off while the password is
# typed and the terminal exactly as before afterwards: after Return, after ^C (the command
# dies by SIGINT, adds nothing), after SIGTERM, and after ^D at the prompt (a clear error,
# nothing added).  The typed secret never appears on the terminal.  Keys go to the session
# keyring run-test gives this script.
. "$top_srcdir/tests/harness/lib.sh"

command -v python3 >/dev/null || skip_all "python3 not installed"
python3 -c 'import os; os.close(os.openpty()[0])' 2>/dev/null ||
	skip_all "no pseudo-terminals here (/dev/ptmx)"
plan 42

DRV="$top_srcdir/tests/harness/tty-password.py"
SECRET="s3cr3t-tty-$$"
HOST=127.0.0.3
has_key() { keyctl search @s logon "cifs:a:$HOST" >/dev/null 2>&1; }
keylen() { awk -v d="cifs:a:$HOST:" '$8 == "logon" && $9 == d { print $10 }' /proc/keys; }
# drive MODE COMMAND...: the driver's report in $T_TMP/rep; r KEY: one of its values
drive() {
	mode=$1; shift
	python3 "$DRV" "$mode" "$SECRET" -- "$@" >"$T_TMP/rep" 2>&1
	grep -v '^output ' "$T_TMP/rep" | sed 's/^/# /'
}
r() { awk -v k="$1" '$1 == k { sub(/^[^ ]+ /, ""); print; exit }' "$T_TMP/rep"; }
# common KIND: the terminal checks every case makes
common() {
	check_eq "$1: the prompt shows" yes "$(r prompt)"
	check_eq "$1: echo off while the password is typed" off "$(r echo_during)"
	check_eq "$1: the terminal is exactly as before afterwards (echo $(r echo_after))" \
		yes "$(r restored)"
	check_eq "$1: the secret never appears on the terminal" no "$(r secret_shown)"
}

drive intr "$NFSKEYS" cifs add -u alice $HOST
common "cifs add, ^C"
check_eq "cifs add, ^C: the command dies by SIGINT" "signal 2" "$(r status)"
check "cifs add, ^C: no key added" sh -c "! keyctl search @s logon cifs:a:$HOST"

drive term "$NFSKEYS" cifs add -u alice $HOST
common "cifs add, SIGTERM"
check_eq "cifs add, SIGTERM: the command dies by SIGTERM" "signal 15" "$(r status)"
check "cifs add, SIGTERM: no key added" sh -c "! keyctl search @s logon cifs:a:$HOST"

drive eof "$NFSKEYS" cifs add -u alice $HOST
common "cifs add, ^D"
check_eq "cifs add, ^D: exit 1" "exit 1" "$(r status)"
check_contains "cifs add, ^D: says no password was given" "no password given" "$(r output)"
check "cifs add, ^D: no key added" sh -c "! keyctl search @s logon cifs:a:$HOST"

drive enter "$NFSKEYS" cifs add -u alice $HOST
common "cifs add, Return"
check_eq "cifs add, Return: exit 0" "exit 0" "$(r status)"
check_eq "cifs add, Return: the key holds alice:SECRET and its NUL" \
	"$(printf 'alice:%s' "$SECRET" | wc -c | awk '{ print $1 + 1 }')" "$(keylen)"

drive intr "$NFSKEYS" cifs update -u alice $HOST
common "cifs update, ^C"
check_eq "cifs update, ^C: the command dies by SIGINT" "signal 2" "$(r status)"
check "cifs update, ^C: the key is still there" has_key

# nfs login reads the password before it talks to any KDC: no realm is needed for the
# prompt itself (a Return would then fail to find a KDC; only ^C and ^D are driven here)
export KRB5_CONFIG="$T_TMP/krb5.conf"
: >"$KRB5_CONFIG"
drive intr "$NFSKEYS" nfs login -p alice@TTY.TEST -c "FILE:$T_TMP/cc"
common "nfs login, ^C"
check_eq "nfs login, ^C: the command dies by SIGINT" "signal 2" "$(r status)"
drive eof "$NFSKEYS" nfs login -p alice@TTY.TEST -c "FILE:$T_TMP/cc"
common "nfs login, ^D"
check_eq "nfs login, ^D: exit 1 saying no password was given" "exit 1 yes" \
	"$(r status) $(r output | grep -q 'no password given' && echo yes)"
check "nfs login, ^D: no credential cache written" test ! -e "$T_TMP/cc"

"$NFSKEYS" cifs clear $HOST >/dev/null 2>&1
