#!/bin/sh
# No secret reaches argv, the environment, logs or error output: run the credential
# commands with a known password at debug log level (and through their error paths)
# while a sampler watches every process's /proc/PID/cmdline and environ, then grep
# everything they printed.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/kdc.sh"
plan 7

secret="Pw-$$-never-leak"
control="control-$$-marker"
printf '%s\n%s\n' "$secret" "$control" >"$T_TMP/needles"
chmod 600 "$T_TMP/needles"

kdc_start NFSKEYS.TEST
kdc_addprinc carol "$secret"
kdc_addprinc afs/nfskeys.test
CC="KEYRING:persistent:$(id -u):nfskeys-secrets-$$"
t_on_exit "kdestroy -c $CC"

python3 "$top_srcdir/tests/harness/proc-sampler.py" "$T_TMP/needles" "$T_TMP/stop" "$T_TMP/hits" &
sampler=$!
t_on_exit "touch $T_TMP/stop; kill $sampler"
t_wait_for "test -f $T_TMP/hits.ready" 10 || { not_ok "sampler started"; exit 1; }

# Positive control: a process carrying the control marker in argv and environ.
NFSKEYS_CONTROL="$control" sh -c 'sleep 0.3; true' "$control"

export NFSKEYS_LOG=debug
log="$T_TMP/all-output"
: >"$log"
run_pw() { pw=$1; shift; printf '%s\n' "$pw" | "$NFSKEYS" -vv "$@" >>"$log" 2>&1; }
run_pw "$secret" cifs add -u dave 127.0.0.1
run_pw "$secret" cifs update -u dave 127.0.0.1
run_pw "$secret" cifs add -u 'bad:user' ::1                # validation error
run_pw "$secret$secret$(printf '%0500d' 0)" cifs add -u dave ::1  # password too long
run_pw "$secret" nfs login -p carol -c "$CC"
"$NFSKEYS" -vv nfs status -c "$CC" >>"$log" 2>&1
"$NFSKEYS" -vv nfs renew -c "$CC" >>"$log" 2>&1
kinit_out=$(printf '%s\n' "$secret" | kinit carol 2>&1)
"$NFSKEYS" -vv afs login --print >"$T_TMP/afs.hex" 2>>"$log"
run_pw "wrong-$secret" nfs login -p carol -c "$CC"           # wrong password
run_pw "$secret" nfs login -p nobody -c "$CC"               # unknown principal
"$NFSKEYS" -vv cifs list >>"$log" 2>&1
"$NFSKEYS" -vv nfs logout -c "$CC" >>"$log" 2>&1

touch "$T_TMP/stop"
wait "$sampler"
check_contains "the sampler saw the control marker in argv" "1 " "$(grep ' cmdline$' "$T_TMP/hits")"
check_contains "the sampler saw the control marker in environ" "1 " "$(grep ' environ$' "$T_TMP/hits")"
check_eq "the password never appeared in any /proc/PID/cmdline or environ" "" \
	"$(grep '^0 ' "$T_TMP/hits")"
check_contains "the commands did log at debug level" "debug:" "$(cat "$log")"
check_contains "and went through their error paths" "wrong password" "$(cat "$log")"
if grep -qF "$secret" "$log"; then
	not_ok "the password is in no output, log or error message"
	grep -nF "$secret" "$log" | sed 's/^/# /'
else
	ok "the password is in no output, log or error message"
fi
# The token printed by --print carries a session key by design, never the password.
if grep -qF "$secret" "$T_TMP/afs.hex"; then not_ok "afs --print output has no password"; else ok "afs --print output has no password"; fi
