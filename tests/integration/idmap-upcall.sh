#!/bin/sh
# Real request-key upcalls to nfskeys-upcall: user keys carrying id_resolver and
# cifs.idmap descriptions are routed to the helper; payload bytes, rejections of bad
# descriptions and the timeouts set on the keys are checked.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"
. "$top_srcdir/tests/harness/keyttl.sh"

# The timeouts the keys must get, from this test's own configuration.  Positive-TTL and
# the -t below are a whole number of minutes and 5 s: no default (600 s, an hour) is
# near, and /proc/keys, which shows minutes, changes its figure 6 s after the key is made,
# which pins the second (tests/harness/keyttl.sh).
NOBODY_TTL=30
POSITIVE_TTL=1805
CAP_TTL=305

cat >"$T_TMP/nfskeys.conf" <<CONF
[General]
Domain = Example.Test
[Translation]
Method = static,nsswitch,sid
[Mapping]
Nobody-TTL = $NOBODY_TTL
[Idmap]
Positive-TTL = $POSITIVE_TTL
[Static]
statuser@example.test = 4242
group:staticgrp@example.test = 4343
[SID]
State-File = $T_TMP/sid-slices
[Idmapd]
# in-process resolution: never a system nfskeys-idmapd that may be running
Socket = $T_TMP/no-idmapd.sock
CONF
# wrapper NAME HELPER-ARGS...: runs the helper with HELPER-ARGS, then the kernel's %k %d,
# and writes the bounds of the timeout the key got to $T_TMP/key.ttl: from the key's own
# /proc/keys line and the times before and after the helper ran, so a slow machine cannot
# move them (tests/harness/keyttl.sh).  It reads a figure in minutes for up to
# $T_TMP/ttl.wait seconds (0 when absent: one read, as only some checks need the second).
wrapper() {
	n=$1; shift
	cat >"$T_TMP/$n" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
start=\$(date +%s)
'$top_builddir/tools/upcall/nfskeys-upcall' $* "\$@" 2>>'$T_TMP/helper.err'
rc=\$?
. '$top_srcdir/tests/harness/keyttl.sh'
t_key_ttl_bounds "\$1" "\$start" "\$(cat '$T_TMP/ttl.wait' 2>/dev/null || echo 0)" \\
	>'$T_TMP/key.ttl' 2>&1
exit \$rc
SH
	chmod +x "$T_TMP/$n"
}
wrapper helper.sh -c "$T_TMP/nfskeys.conf"
wrapper helper-t.sh -t $CAP_TTL -c "$T_TMP/nfskeys.conf"
t_route_like_enable_upcalls "$T_TMP/helper.sh" ||
	skip_all "needs root, keyctl and a writable /etc/request-key.d"

root_uid_hex=$(t_hex 0)00
nobody=$(id -u nobody 2>/dev/null || echo 65534)

# the bounds the wrapper wrote for the last request ("none: ..." when it did not run)
key_ttl() { cat "$T_TMP/key.ttl" 2>/dev/null || echo "none: the wrapper did not run"; }
expect_payload() { # DESC DESCRIPTION EXPECTED_HEX
	rm -f "$T_TMP/key.ttl"
	out=$(t_upcall "$2") || { not_ok "$1: request failed"; return; }
	check_eq "$1" "$3" "$(printf '%s\n' "$out" | head -n1)"
}
# expect_ttl DESC SECONDS: the last request's key was given a timeout of SECONDS
expect_ttl() {
	if t_key_ttl_check "$2" "$(key_ttl)"; then
		ok "$1: $2 s (between $(key_ttl | sed 's/ / and /') s)"
	else
		not_ok "$1: $2 s"; diag "got a timeout between $(key_ttl) s"
	fi
}
# DESC DESCRIPTION ERROR: the helper rejected it with ERROR (keyctl's wording), and the
# negative key times out after Nobody-TTL: neither the kernel's own 60 s negative key
# (helper crashed) nor the catch-all route's 47 s one (which the wrapper does not see).
expect_reject() {
	rm -f "$T_TMP/key.ttl"
	if ! got=$(t_upcall_rejected "$2"); then not_ok "$1: was accepted"; return; fi
	got=${got#* } # (the timeout column: the wrapper's bounds are what count)
	if [ "$got" = "$3" ] && t_key_ttl_check $NOBODY_TTL "$(key_ttl)"; then
		ok "$1 ($3, negative key for $NOBODY_TTL s:" \
			"between $(key_ttl | sed 's/ / and /') s)"
	else
		not_ok "$1: expected '$3' (the helper's error) for $NOBODY_TTL s (Nobody-TTL)"
		diag "got '$got', a timeout between $(key_ttl) s"
	fi
}

# id_resolver descriptions
expect_payload "uid:root@domain -> \"0\\0\"" "uid:root@example.test" "$root_uid_hex"
expect_payload "domain compared case-insensitively" "uid:root@EXAMPLE.TEST" "$root_uid_hex"
expect_payload "gid:root@domain -> \"0\\0\"" "gid:root@example.test" "$root_uid_hex"
expect_payload "[Static] user -> 4242\\0" "uid:statuser@example.test" "$(t_hex 4242)00"
expect_payload "[Static] group -> 4343\\0" "gid:staticgrp@example.test" "$(t_hex 4343)00"
# (a figure in minutes changes once a minute: up to 65 s of reads pin its second)
echo 65 >"$T_TMP/ttl.wait"
expect_payload "positive answer carries Positive-TTL" "uid:root@example.test" "$root_uid_hex"
expect_ttl "positive key timeout is Positive-TTL" $POSITIVE_TTL
expect_payload "unknown user -> nobody" "uid:no-such-user-$$@example.test" "$(t_hex "$nobody")00"
expect_ttl "nobody key timeout is the short Nobody-TTL" $NOBODY_TTL
rm -f "$T_TMP/ttl.wait"
expect_payload "foreign domain -> nobody" "uid:root@other.example" "$(t_hex "$nobody")00"
expect_payload "bare name (no @domain) -> nobody, as nfsidmap" "uid:root" "$(t_hex "$nobody")00"
expect_payload "user:0 -> root@Example.Test, no NUL" "user:0" "$(t_hex root@Example.Test)"
expect_payload "group:0 -> root@Example.Test, no NUL" "group:0" "$(t_hex root@Example.Test)"
expect_payload "user:4242 -> the [Static] name" "user:4242" "$(t_hex statuser@example.test)"
expect_reject "unknown uid is rejected" "user:3999999999" "Required key not available"

# cifs.idmap descriptions (sid backend).  The ids are SSSD's for these SIDs at its
# defaults, computed with libsss_idmap (sss_idmap_calculate_range,
# sss_idmap_add_auto_domain_ex, sss_idmap_sid_to_unix), not by this project's engine:
#   S-1-5-21-1-2-3-1000 -> 686201000, S-1-5-21-1-2-3-513 -> 686200513
u32() { python3 -c 'import struct,sys; sys.stdout.write(struct.pack("=I", int(sys.argv[1])).hex())' "$1"; }
expect_payload "os:SID -> its uid, 4 bytes (libsss_idmap's figure)" "os:S-1-5-21-1-2-3-1000" \
	"$(u32 686201000)"
check_eq "... exactly 4 bytes" 8 "$(printf %s "$(t_upcall os:S-1-5-21-1-2-3-1000 | head -n1)" | wc -c)"
expect_payload "oi:UID -> 68-byte binary SID" "oi:686201000" \
	"$(python3 -c 'import struct; s=bytes([1,5,0,0,0,0,0,5])+struct.pack("<5I",21,1,2,3,1000); print((s+bytes(68-len(s))).hex())')"
expect_payload "gs:SID -> its gid, 4 bytes (libsss_idmap's figure)" "gs:S-1-5-21-1-2-3-513" \
	"$(u32 686200513)"
# a SID no backend maps (BUILTIN: not the sssd algorithm's) is rejected, no nobody id: the
# kernel shows the mount's uid=/gid=, as with cifs.idmap, whose plugins fail it
expect_reject "os:SID no backend maps is rejected (not nobody)" "os:S-1-5-32-544" \
	"Required key not available"
expect_reject "gs:SID no backend maps is rejected (not nobody)" "gs:S-1-5-32-544" \
	"Required key not available"

# bad descriptions
expect_payload "no user part -> nobody, as nfsidmap" "uid:@example.test" "$(t_hex "$nobody")00"
expect_reject "empty domain part is rejected" "gid:root@" "Invalid argument"
expect_reject "overlong name is rejected" "uid:$(printf 'a%.0s' $(seq 1 200))@example.test" "Invalid argument"
expect_reject "bad SID text is rejected" "os:S-1-x-21" "Invalid argument"
expect_reject "SID with too many parts is rejected" "os:S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16" "Invalid argument"
expect_reject "non-numeric id is rejected" "user:abc" "Invalid argument"
expect_reject "negative id is rejected" "oi:-1" "Invalid argument"
# an unknown prefix routed to the helper (enable-upcalls routes none: only this test's
# line sends it there), which must reject it itself
printf 'create\tuser\tfoo:*\t%s\t%s %%k %%d\n' "$T_CALLOUT" "$T_TMP/helper.sh" >>"$T_ROUTE"
expect_reject "unknown prefix is rejected by the helper" "foo:bar" "Invalid argument"

# -t replaces good answers' TTL; a nobody answer keeps its shorter one
t_route_like_enable_upcalls "$T_TMP/helper-t.sh"
echo 65 >"$T_TMP/ttl.wait"
expect_payload "-t $CAP_TTL: payload unchanged" "uid:root@example.test" "$root_uid_hex"
expect_ttl "-t $CAP_TTL: key timeout" $CAP_TTL
expect_payload "-t $CAP_TTL: nobody keeps the short TTL" "uid:no-such-$$@example.test" \
	"$(t_hex "$nobody")00"
expect_ttl "-t $CAP_TTL: nobody timeout is Nobody-TTL" $NOBODY_TTL
rm -f "$T_TMP/ttl.wait"

if [ -s "$T_TMP/helper.err" ]; then diag "helper stderr:"; sed 's/^/#   /' "$T_TMP/helper.err"; fi
