#!/bin/sh
# pam_nfskeys through pamtester with a test PAM stack (/etc/pam.d/nfskeys-test-PID, removed
# at exit): after open_session the user (nobody) has a TGT in KEYRING:persistent:65534 and
# CIFS logon keys for the listed server and domain, owned by the user, in the session
# keyring pam_keyinit made; an AFS cell whose key type this kernel lacks is logged and does
# not fail the login; after close_session (Drop-On-Close) they are gone; the password is
# in no log, no error output and no process environment.  A password change (the password
# phase) makes the TGT again with the new password.  Under a set-user-ID-root caller (the
# real uid the user's or another's, the effective uid 0, as in passwd or su) the module still
# becomes the user: the keys and the cache are the user's, never root's.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/kdc.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (/etc/pam.d, other uids)"
command -v pamtester >/dev/null 2>&1 || skip_all "pamtester missing (apt-get install pamtester)"
[ -d /etc/pam.d ] && [ -w /etc/pam.d ] || skip_all "/etc/pam.d not writable"
# the module's session child becomes the user, so it (and the library and plugins it
# loads) must be within that user's reach: the installed copy, not the build tree
t_ou_load
MOD=$(find "$T_OU_ROOT" -name pam_nfskeys.so | head -n1)
[ -f "$MOD" ] || fail_all "pam_nfskeys.so not built (or not installed under $T_OU_ROOT)"
plan 27
# A sanitizer build's module needs its runtime first in pamtester (not instrumented).
PRE=
if t_is_asan; then
	for l in libasan.so libubsan.so; do
		f=$(${CC:-gcc} -print-file-name=$l 2>/dev/null)
		[ -f "$f" ] && PRE="$PRE $f"
	done
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:verify_asan_link_order=0"
fi
pamtester() { $T_OU_ENV LD_PRELOAD="$PRE" pamtester "$@"; }

U=65534
USER_NAME=$(getent passwd $U | cut -d: -f1)
[ -n "$USER_NAME" ] || skip_all "no user with uid $U"
PW="Pam-Secret-$$-x7"
kdc_start NFSKEYS.TEST
kdc_addprinc "$USER_NAME" "$PW"

W=$(mktemp -d /tmp/nfskeys-pam.XXXXXX) && chmod 755 "$W" || fail_all "temp dir"
t_on_exit "rm -rf '$W'"
cp "$KRB5_CONFIG" "$W/krb5.conf" && chmod 644 "$W/krb5.conf"
export KRB5_CONFIG="$W/krb5.conf"
cat >"$W/nfskeys.conf" <<EOC
[PAM]
Kerberos = yes
CIFS-Servers = 127.0.0.1
CIFS-Domains = NFSKEYS
AFS-Cells = nfskeys.test
Drop-On-Close = yes
EOC
# what the session holds at each step, seen from inside the PAM process (pam_exec)
cat >"$W/snap.sh" <<EOS
#!/bin/sh
keyctl show @s >"$W/keys.\$PAM_TYPE" 2>&1
setpriv --reuid=$U --regid=$U --clear-groups env KRB5_CONFIG=$W/krb5.conf klist -c KEYRING:persistent:$U >"$W/klist.\$PAM_TYPE" 2>&1
tr '\0' '\n' </proc/\$PPID/environ >"$W/env.\$PAM_TYPE"
# the keys under the user's persistent keyring (the Kerberos cache), seen by root
keyctl session - sh -c 'keyctl get_persistent @s $U >/dev/null && keyctl show @s' >"$W/pkeys.\$PAM_TYPE" 2>&1
EOS
chmod 755 "$W/snap.sh"
SVC="nfskeys-test-$$"
cat >"/etc/pam.d/$SVC" <<EOP
auth     required  pam_permit.so
auth     optional  $MOD config=$W/nfskeys.conf
session  optional  pam_keyinit.so force
session  optional  $MOD config=$W/nfskeys.conf
session  optional  pam_exec.so seteuid $W/snap.sh
EOP
t_on_exit "rm -f '/etc/pam.d/$SVC'"
t_on_exit "setpriv --reuid=$U --regid=$U --clear-groups keyctl session - kdestroy -A -c KEYRING:persistent:$U >/dev/null 2>&1"

printf '%s\n' "$PW" | pamtester -v "$SVC" "$USER_NAME" authenticate open_session close_session \
	>"$W/pamtester.out" 2>&1
rc=$?
check_eq "pamtester: authenticate, open_session, close_session succeed" 0 $rc
[ $rc = 0 ] || diag "$(cat "$W/pamtester.out")"
check_contains "after open: a TGT in KEYRING:persistent:$U" "krbtgt/NFSKEYS.TEST@NFSKEYS.TEST" "$(cat "$W/klist.open_session")"
check_contains "... for $USER_NAME@NFSKEYS.TEST" "Default principal: $USER_NAME@NFSKEYS.TEST" "$(cat "$W/klist.open_session")"
keys=$(cat "$W/keys.open_session")
check_contains "after open: the CIFS logon key for the server" "logon: cifs:a:127.0.0.1" "$keys"
check_contains "after open: the CIFS logon key for the domain" "logon: cifs:d:NFSKEYS" "$keys"
# keyctl show: SERIAL PERM UID GID TYPE: DESCRIPTION
check_eq "the keys are the user's (owner uid $U)" "$U $U" \
	"$(echo "$keys" | awk '/logon: cifs:/ { print $3 }' | sort -u | tr '\n' ' ')$U"
check_contains "an AFS cell that fails (no rxrpc key type) is logged" "AFS token for nfskeys.test" "$(cat "$W/pamtester.out")"
check_eq "... and no AFS key was made" "" "$(grep rxrpc "$W/keys.open_session")"
check_eq "after close: no CIFS logon key left" "" "$(grep 'cifs:' "$W/keys.close_session")"
check_contains "after close: the Kerberos cache is gone" "not found" "$(cat "$W/klist.close_session")"
check_eq "the password is in no output of the login" "" "$(grep -F "$PW" "$W/pamtester.out")"
check_eq "... nor in the process environment (open)" "" "$(grep -F "$PW" "$W/env.open_session")"
check_eq "... nor in the process environment (close)" "" "$(grep -F "$PW" "$W/env.close_session")"

# a wrong password: no TGT, the login itself goes on (Fail-Login is off)
printf '%s\n' "wrong-$PW" | pamtester -v "$SVC" "$USER_NAME" authenticate open_session \
	>"$W/pamtester.out" 2>&1
check_eq "a wrong Kerberos password does not fail the login" 0 $?
check_contains "... but is logged" "Kerberos TGT for KEYRING:persistent:$U" "$(cat "$W/pamtester.out")"
check_eq "... without the password" "" "$(grep -F "wrong-$PW" "$W/pamtester.out")"

# --- a password change: another module changed the Kerberos password (here kadmin, as
# pam_krb5 would); pam_stress (Linux-PAM's test module: it changes nothing) puts the new
# password in PAM_AUTHTOK (with PAM_SILENT: without it, pam_stress stores the answer to its
# "Changing STRESS password" notice instead), and pam_nfskeys' password phase gets a TGT
NEW="Pam-New-$$-y9"
kdc_kadmin "cpw -pw $NEW $USER_NAME" || diag "kadmin cpw failed: $(cat "$KDC_DIR/kadmin.out")"
setpriv --reuid=$U --regid=$U --clear-groups keyctl session - kdestroy -A -c KEYRING:persistent:$U >/dev/null 2>&1
cat >"/etc/pam.d/$SVC-pw" <<EOP
password required  pam_stress.so
password optional  $MOD config=$W/nfskeys.conf
password optional  pam_exec.so $W/snap.sh
EOP
t_on_exit "rm -f '/etc/pam.d/$SVC-pw'"
printf '%s\n%s\n' "$NEW" "$NEW" | keyctl session - sh -c '
	pamtester() { '"$T_OU_ENV"' LD_PRELOAD="'"$PRE"'" pamtester "$@"; }
	pamtester -v "$1" "$2" "chauthtok(PAM_SILENT)"' sh "$SVC-pw" "$USER_NAME" >"$W/pamtester.out" 2>&1
rc=$?
check_eq "pamtester chauthtok (pam_stress, then pam_nfskeys) succeeds" 0 $rc
[ $rc = 0 ] || diag "$(cat "$W/pamtester.out")"
check_contains "after the change: a TGT in KEYRING:persistent:$U, got with the new password" \
	"krbtgt/NFSKEYS.TEST@NFSKEYS.TEST" "$(cat "$W/klist.password" 2>&1)"
check_eq "the new password is in no output of the change" "" "$(grep -F "$NEW" "$W/pamtester.out")"
check_eq "... nor in the process environment" "" "$(grep -F "$NEW" "$W/env.password")"

# --- a set-user-ID-root caller: su and passwd run with the real uid of whoever started them
# and the effective (and saved) uid 0.  tests/harness-free way to get there for real: a
# root process starts PAM, then setresuid(RUID, 0, 0), exactly the ids a set-user-ID-root
# program has (a setuid copy of pamtester would run in glibc's secure mode, which ignores
# the LD_LIBRARY_PATH the module's uninstalled library needs).  The password comes on
# standard input (the one the change above set), the conversation answers PAM's prompt
# with it.
cat >"$W/setuid-pam.py" <<'EOPY'
import ctypes, os, sys
svc, user, ruid = sys.argv[1], sys.argv[2], int(sys.argv[3])
password = sys.stdin.readline().rstrip("\n").encode()
pam = ctypes.CDLL("libpam.so.0")
# the process's own malloc (a sanitizer's, when preloaded), the one libpam frees with
libc = ctypes.CDLL(None)
libc.calloc.restype = ctypes.c_void_p
libc.strdup.restype = ctypes.c_void_p
class Msg(ctypes.Structure):
    _fields_ = [("style", ctypes.c_int), ("msg", ctypes.c_char_p)]
class Resp(ctypes.Structure):
    _fields_ = [("resp", ctypes.c_void_p), ("retcode", ctypes.c_int)]
CONV = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.POINTER(Msg)),
                        ctypes.POINTER(ctypes.POINTER(Resp)), ctypes.c_void_p)
def conv(n, msgs, resp, data):
    arr = ctypes.cast(libc.calloc(n, ctypes.sizeof(Resp)), ctypes.POINTER(Resp))
    for i in range(n):
        m = msgs[i].contents
        if m.style in (1, 2):  # PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON
            arr[i].resp = libc.strdup(ctypes.c_char_p(password))
        else:
            sys.stderr.write((m.msg or b"").decode(errors="replace") + "\n")
    resp[0] = arr
    return 0
class Conv(ctypes.Structure):
    _fields_ = [("conv", CONV), ("data", ctypes.c_void_p)]
c = Conv(CONV(conv), None)
h = ctypes.c_void_p()
if pam.pam_start(svc.encode(), user.encode(), ctypes.byref(c), ctypes.byref(h)) != 0:
    sys.exit("pam_start failed")
# the ids of a set-user-ID-root program started by RUID
pw = __import__("pwd").getpwuid(ruid)
os.setgroups([])
os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
os.setresuid(ruid, 0, 0)
print("ids: real %d effective %d saved %d" % os.getresuid(), flush=True)
rc = 0
for step in ("pam_authenticate", "pam_open_session", "pam_close_session"):
    r = getattr(pam, step)(h, 0)
    print("%s: %d" % (step, r), flush=True)
    rc = rc or r
pam.pam_end(h, 0)
sys.exit(1 if rc else 0)
EOPY
setuid_login() { # setuid_login RUID: the whole login as that caller, output in $W/setuid.out
	setpriv --reuid=$U --regid=$U --clear-groups keyctl session - \
		kdestroy -A -c KEYRING:persistent:$U >/dev/null 2>&1
	rm -f "$W"/keys.* "$W"/klist.* "$W"/pkeys.*
	printf '%s\n' "$NEW" | keyctl session - $T_OU_ENV LD_PRELOAD="$PRE" \
		python3 "$W/setuid-pam.py" "$SVC" "$USER_NAME" "$1" >"$W/setuid.out" 2>&1
}
if ! command -v python3 >/dev/null 2>&1; then
	for i in 1 2 3 4 5 6 7; do skip "set-user-ID caller: python3 missing (for the PAM driver)"; done
else
	# passwd's case: the user runs it (real uid the user's, effective 0)
	setuid_login $U
	rc=$?
	check_eq "as a set-user-ID-root program run by $USER_NAME (real $U, effective 0): the login succeeds" \
		"0|ids: real $U effective 0 saved 0" "$rc|$(grep '^ids:' "$W/setuid.out")"
	[ $rc = 0 ] || diag "$(cat "$W/setuid.out")"
	keys=$(cat "$W/keys.open_session" 2>&1)
	check_eq "... the CIFS logon keys are $USER_NAME's (uid $U), not root's" "$U" \
		"$(echo "$keys" | awk '/logon: cifs:/ { print $3 }' | sort -u | xargs)"
	check_contains "... the user reads the TGT in KEYRING:persistent:$U" \
		"Default principal: $USER_NAME@NFSKEYS.TEST" "$(cat "$W/klist.open_session" 2>&1)"
	grep -q 'Default principal' "$W/klist.open_session" 2>/dev/null || diag "$(cat "$W/setuid.out")"
	# the cache's keys inside the persistent keyring: the user's too (root's are what the
	# missing drop made)
	# (keyctl show: SERIAL PERM UID GID TYPE: DESCRIPTION; the anonymous session keyring
	# _ses is root's, then the persistent keyring and what is in it)
	owners=$(awk '$3 ~ /^[0-9]+$/ && $NF != "_ses" { print $3 }' "$W/pkeys.open_session" 2>&1 |
		sort -u | xargs)
	check_eq "... every key of the Kerberos cache is $USER_NAME's" "$U" "$owners"
	[ "$owners" = "$U" ] || diag "$(cat "$W/pkeys.open_session" 2>&1)"
	check_eq "... and the password is in no output" "" "$(grep -F "$NEW" "$W/setuid.out")"
	# su's case: another user (daemon, uid 1) asks for $USER_NAME's session
	OTHER=$(getent passwd 1 | cut -d: -f1)
	setuid_login 1
	rc=$?
	check_eq "as a set-user-ID-root program run by ${OTHER:-uid 1} for $USER_NAME (su): the login succeeds" \
		"0|ids: real 1 effective 0 saved 0" "$rc|$(grep '^ids:' "$W/setuid.out")"
	[ $rc = 0 ] || diag "$(cat "$W/setuid.out")"
	check_eq "... the keys are made, and are $USER_NAME's (uid $U)" "$U" \
		"$(awk '/logon: cifs:/ { print $3 }' "$W/keys.open_session" 2>&1 | sort -u | xargs)"
fi
