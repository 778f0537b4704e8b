#!/bin/sh
# CIFS interop: cifscreds (cifs-utils) and nfskeys, given the same inputs, must make
# byte-identical add_key(2) calls (type, description, payload, keyring) and set the same
# permissions.  An LD_PRELOAD shim (tests/shim/keyshim.c) records the calls.
. "$top_srcdir/tests/harness/lib.sh"

SHIM="$top_builddir/tests/shim/.libs/keyshim.so"
command -v cifscreds >/dev/null 2>&1 || skip_all "cifscreds (cifs-utils) not installed"
command -v setsid >/dev/null 2>&1 || skip_all "setsid not available"
[ -f "$SHIM" ] || skip_all "shim not built ($SHIM)"
# The ASan runtime must come first in the library list; the shim is built without
# sanitizers, so tell ASan not to insist on that order.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
plan 15

# run_tool LOG PASSWORD CMD...: run CMD in a new session keyring, without a controlling
# terminal (so both tools read the password from standard input), recording key calls;
# afterwards append the session keyring's keys (type;uid;gid;perm;description).
run_tool() {
	log=$1; pw=$2; shift 2
	: >"$log"
	printf '%s\n' "$pw" | KEYSHIM_LOG="$log" setsid -w keyctl session - sh -c '
		LD_PRELOAD="$0" "$@" >/dev/null 2>&1 </dev/stdin; rc=$?
		for k in $(keyctl rlist @s); do keyctl rdescribe "$k"; done | sort
		exit $rc' "$SHIM" "$@" >"$log.keys"
}

# compare NAME PASSWORD ARGS...: same arguments to "cifscreds add" and "nfskeys cifs add"
compare() {
	name=$1; pw=$2; shift 2
	run_tool "$T_TMP/ref.log" "$pw" cifscreds add "$@"; rc_ref=$?
	run_tool "$T_TMP/our.log" "$pw" "$NFSKEYS" cifs add "$@"; rc_our=$?
	if [ "$rc_ref" -ne 0 ] || [ ! -s "$T_TMP/ref.log" ]; then
		not_ok "$name: cifscreds made no key (rc $rc_ref)"; return
	fi
	# nfskeys makes a new key in the thread keyring (-1) and moves it into the session
	# keyring with KEYCTL_MOVE_EXCL, so that it never displaces a key another "add"
	# made meanwhile (cred-cifs-race.sh); cifscreds adds to the session keyring (-3)
	# directly.  Type, description, payload and permissions must be the same, and the
	# keys that end up in the session keyring are compared below.
	sed -i 's/^\(add_key .*\) -1$/\1 -3/' "$T_TMP/our.log"
	if [ "$rc_our" -eq 0 ] && cmp -s "$T_TMP/ref.log" "$T_TMP/our.log"; then
		ok "$name: identical add_key/keyctl calls"
	else
		not_ok "$name: identical add_key/keyctl calls (rc $rc_our)"
		diag "cifscreds:" "$(cat "$T_TMP/ref.log")" "nfskeys:" "$(cat "$T_TMP/our.log")"
	fi
	# serials differ between runs; compare type;uid;gid;perm;description (two empty
	# listings are not "the same keys": both tools must have left a logon key)
	if ! grep -q '^logon;' "$T_TMP/ref.log.keys"; then
		not_ok "$name: same keys and permissions in the session keyring (cifscreds left no key)"
	else
		check_eq "$name: same keys and permissions in the session keyring" \
			"$(cat "$T_TMP/ref.log.keys")" "$(cat "$T_TMP/our.log.keys")"
	fi
}

compare "IPv4 address" 'Secr3t pass' -u alice 127.0.0.1
compare "IPv6 loopback" 'x' -u bob ::1
compare "IPv6 uncompressed literal" 'p:a;ss w0rd' -u carol 2001:0db8:0000:0000:0000:0000:0000:0001
compare "host name" 'hostpw' -u dave localhost
compare "IPv6 link-local with scope" 'scoped' -u gina fe80::1%lo
compare "domain, case kept" 'dompw' -u erin -d Example.COM

# The recorded call itself, decoded: logon, cifs:a:2001:db8::1, "carol:p:a;ss w0rd\0", -1
# (staged in the thread keyring, then moved into the session keyring: see compare).
run_tool "$T_TMP/our.log" 'p:a;ss w0rd' "$NFSKEYS" cifs add -u carol 2001:db8:0::1
line=$(grep '^add_key' "$T_TMP/our.log")
want="add_key $(printf 'logon' | od -An -tx1 | tr -d ' \n') $(printf 'cifs:a:2001:db8::1' | od -An -tx1 | tr -d ' \n') $(printf 'carol:p:a;ss w0rd\0' | od -An -tx1 | tr -d ' \n') -1"
check_eq "payload is user:password plus NUL, description compressed, staged in the thread keyring" "$want" "$line"
check_contains "permissions possessor+user view/write/search (0x0d0d0000)" "keyctl 5 K d0d0000" "$(cat "$T_TMP/our.log")"

# update: the same add_key call over an existing key, and nothing else
cat >"$T_TMP/upd.sh" <<'EOS'
shim=$1; log=$2; shift 2
printf 'old\n' | "$@" add -u frank 127.0.0.1 >/dev/null 2>&1 || exit 1
printf 'newpw\n' | KEYSHIM_LOG="$log" LD_PRELOAD="$shim" "$@" update -u frank 127.0.0.1 >/dev/null 2>&1
EOS
: >"$T_TMP/ref-upd.log"; : >"$T_TMP/our-upd.log"
setsid -w keyctl session - sh "$T_TMP/upd.sh" "$SHIM" "$T_TMP/ref-upd.log" cifscreds >/dev/null 2>&1
setsid -w keyctl session - sh "$T_TMP/upd.sh" "$SHIM" "$T_TMP/our-upd.log" "$NFSKEYS" cifs >/dev/null 2>&1
if [ -s "$T_TMP/ref-upd.log" ] && cmp -s "$T_TMP/ref-upd.log" "$T_TMP/our-upd.log"; then
	ok "update: identical calls"
else
	not_ok "update: identical calls"
	diag "cifscreds:" "$(cat "$T_TMP/ref-upd.log")" "nfskeys:" "$(cat "$T_TMP/our-upd.log")"
fi
