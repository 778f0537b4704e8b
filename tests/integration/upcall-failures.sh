#!/bin/sh
# nfskeys-upcall's own failure paths, as root, through real request-key upcalls: a
# configuration that cannot be loaded (missing, malformed), a key that cannot be
# described, a description that is not the key's, a description whose prefix the key
# type does not allow, and nfskeys-idmapd replies that are malformed or cut short (a fake
# daemon, tests/harness/fake-idmapd.py): the helper rejects with the documented error,
# timeout and exit status, or resolves in-process; it never instantiates what a broken
# reply says and never dies of a signal.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"
. "$top_srcdir/tests/harness/keyttl.sh"

HELPER="$top_builddir/tools/upcall/nfskeys-upcall"
t_route_upcalls /bin/false || skip_all "needs root, keyctl and a writable /etc/request-key.d"
plan 35

good_conf() { # FILE [SOCKET]
	cat >"$1" <<CONF
[General]
Domain = example.test
[Translation]
Method = static,sid
[Mapping]
Nobody-TTL = 30
[Static]
alice@example.test = 2001
[SID]
State-File = $T_TMP/sid-slices
[Idmapd]
Socket = ${2:-$T_TMP/no-idmapd.sock}
Helper-Timeout = 2000
CONF
}
good_conf "$T_TMP/good.conf"

# route NAME DESC-ARG HELPER-ARGS...: user keys with our callout go to a wrapper running
# the helper with HELPER-ARGS, then %k and DESC-ARG (%d unless given); the wrapper keeps
# the helper's exit status in $T_TMP/NAME.rc ("signal" when it died of one) and the bounds
# of the timeout the key got in $T_TMP/NAME.ttl (tests/harness/keyttl.sh: from the key's
# expiry and the times before and after the helper ran, so a slow machine cannot move them)
route() {
	n=$1 d=$2; shift 2
	cat >"$T_TMP/$n.sh" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
LD_LIBRARY_PATH='$top_builddir/libnfskeys/.libs'; export LD_LIBRARY_PATH
start=\$(date +%s)
'$HELPER' $* "\$@" 2>>'$T_TMP/helper.err'
rc=\$?
. '$top_srcdir/tests/harness/keyttl.sh'
t_key_ttl_bounds "\$1" "\$start" >'$T_TMP/$n.ttl' 2>&1
[ \$rc -gt 128 ] && rc=signal
echo \$rc >'$T_TMP/$n.rc'
exit 0
SH
	chmod +x "$T_TMP/$n.sh"
	printf 'create\tuser\t*\t%s\t%s %%k %s\n' "$T_CALLOUT" "$T_TMP/$n.sh" "$d" >"$T_ROUTE"
}
rc_of() { cat "$T_TMP/$1.rc" 2>/dev/null || echo none; }
# rejected DESC NAME DESCRIPTION TTL ERROR RC: the request fails with that error, its
# negative key was given TTL seconds (within the bounds the wrapper measured), and the
# helper exited RC
rejected() {
	rm -f "$T_TMP/$2.ttl"
	got=$(t_upcall_rejected "$3") || got="accepted"
	got=${got#* } # (the timeout column: the wrapper's bounds are what count)
	ttl=$(cat "$T_TMP/$2.ttl" 2>/dev/null || echo "none: the wrapper did not run")
	if [ "$got" = "$5" ] && t_key_ttl_check "$4" "$ttl"; then
		ok "$1: rejected ($got) for $4 s (between $(echo "$ttl" | sed 's/ / and /') s)"
	else
		not_ok "$1: rejected with '$5' for $4 s"
		diag "got '$got', a timeout between $ttl s"
	fi
	check_eq "$1: helper exit status" "$6" "$(rc_of "$2")"
}

# --- configuration that cannot be loaded: rejected (EKEYREJECTED) for the default 60 s
route nocfg %d -c "$T_TMP/no-such.conf"
rejected "missing config" nocfg "uid:alice@example.test" 60 "Key was rejected by service" 3
printf '[General\nDomain example.test\n' >"$T_TMP/bad.conf"
route badcfg %d -c "$T_TMP/bad.conf"
rejected "malformed config" badcfg "uid:bob@example.test" 60 "Key was rejected by service" 3

# --- a key that cannot be described (no such key): nothing to reject either, exit 4
NFSKEYS_PLUGIN_DIR="$NFSKEYS_PLUGIN_DIR" LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs" \
	"$HELPER" -c "$T_TMP/good.conf" 2147483000 uid:alice@example.test 2>"$T_TMP/byhand.err"
check_eq "key that cannot be described: exit 4 (cannot reject either)" 4 "$?"
# run by hand, the helper says why on stderr under its own name (the full helper it execs
# answers to nfskeys-upcall)
check_eq "... and says so on stderr as nfskeys-upcall" \
	"nfskeys-upcall: cannot describe key 2147483000: Required key not available" \
	"$(head -1 "$T_TMP/byhand.err")"
out=$(NFSKEYS_PLUGIN_DIR="$NFSKEYS_PLUGIN_DIR" LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs" \
	"$HELPER" --bogus 1 uid:x@y 2>&1 | head -1)
check_eq "an unknown option is named by nfskeys-upcall, not the helper it execs" \
	"nfskeys-upcall: unrecognized option '--bogus'" "$out"
# -t is seconds, as every nfskeys --timeout, and takes a unit: parsed (then the key,
# which does not exist, cannot be described: exit 4, not a usage error)
NFSKEYS_PLUGIN_DIR="$NFSKEYS_PLUGIN_DIR" LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs" \
	"$HELPER" -t 10m -c "$T_TMP/good.conf" 2147483000 uid:alice@example.test 2>/dev/null
check_eq "-t 10m is accepted (exit 4 for the key, not 2)" 4 "$?"

# --- the description passed is not the key's: rejected before anything is resolved
route mismatch uid:someone-else@example.test -c "$T_TMP/good.conf"
rejected "description not the key's" mismatch "uid:alice@example.test" 60 \
	"Key was rejected by service" 1

# --- a prefix the key type does not allow: rejected with EINVAL for Nobody-TTL
route idres %d -T id_resolver -c "$T_TMP/good.conf"
rejected "os: on an id_resolver key" idres "os:S-1-5-21-1-2-3-1000" 30 "Invalid argument" 1
route cifs %d -T cifs.idmap -c "$T_TMP/good.conf"
rejected "uid: on a cifs.idmap key" cifs "uid:alice@example.test" 30 "Invalid argument" 1

# --- malformed or truncated daemon replies: the right answer, resolved in-process
FAKE_SOCK="$T_TMP/fake.sock"
good_conf "$T_TMP/fake.conf" "$FAKE_SOCK"
# uid -> SID needs the domain's slice assigned first (as a SID -> uid lookup does)
"$NFSKEYS" -c "$T_TMP/good.conf" idmap sid S-1-5-21-1-2-3-1000 >/dev/null 2>&1
sid_hex=$(python3 -c 'import struct; s=bytes([1,5,0,0,0,0,0,5])+struct.pack("<5I",21,1,2,3,1000); print((s+bytes(68-len(s))).hex())')
for m in garbage:uid:alice@example.test:$(t_hex 2001)00 \
	truncated:uid:alice@example.test:$(t_hex 2001)00 \
	short:uid:alice@example.test:$(t_hex 2001)00 \
	wrong-kind:uid:alice@example.test:$(t_hex 2001)00 \
	huge-len:uid:alice@example.test:$(t_hex 2001)00 \
	empty-name:user:2001:$(t_hex alice@example.test) \
	bad-sid:oi:686201000:$sid_hex; do
	mode=${m%%:*} rest=${m#*:}
	want=${rest##*:} desc=${rest%:*}
	rm -f "$FAKE_SOCK" "$FAKE_SOCK.ready" "$T_TMP/fake.log"
	python3 "$top_srcdir/tests/harness/fake-idmapd.py" "$FAKE_SOCK" "$mode" "$T_TMP/fake.log" &
	fpid=$!
	t_wait_for "test -f '$FAKE_SOCK.ready'" 10
	route "r-$mode" %d -c "$T_TMP/fake.conf"
	got=$(t_upcall "$desc" | head -n1)
	check_eq "daemon reply '$mode': $desc gets the in-process answer" "$want" "$got"
	check_eq "... the daemon was asked" yes "$(grep -q . "$T_TMP/fake.log" 2>/dev/null && echo yes || echo no)"
	check_eq "... the helper exits 0 (no crash)" 0 "$(rc_of "r-$mode")"
	kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
done

if [ -s "$T_TMP/helper.err" ]; then diag "helper stderr:"; sed 's/^/#   /' "$T_TMP/helper.err"; fi
