#!/bin/sh
# Real request-key upcalls to nfskeys-upcall: user keys carrying id_resolver and
# cifs.idmap descriptions are routed to the helper; payload bytes, rejections of bad
# descriptions and the timeouts set on the keys are checked.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"

cat >"$T_TMP/nfskeys.conf" <<CONF
[General]
Domain = Example.Test
[Translation]
Method = static,nsswitch,sid
[Mapping]
Nobody-TTL = 30
[Idmap]
Positive-TTL = 1830
[Static]
statuser@example.test = 4242
group:staticgrp@example.test = 4343
[SID]
State-File = $T_TMP/sid-slices
[Idmapd]
# in-process resolution: never a system nfskeys-idmapd that may be running
Socket = $T_TMP/no-idmapd.sock
CONF
cat >"$T_TMP/helper.sh" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
exec '$top_builddir/tools/nfskeys-upcall' -c '$T_TMP/nfskeys.conf' "\$@" 2>>'$T_TMP/helper.err'
SH
cat >"$T_TMP/helper-t.sh" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
exec '$top_builddir/tools/nfskeys-upcall' -t 330 -c '$T_TMP/nfskeys.conf' "\$@" 2>>'$T_TMP/helper.err'
SH
chmod +x "$T_TMP/helper.sh" "$T_TMP/helper-t.sh"
t_route_like_enable_upcalls "$T_TMP/helper.sh" ||
	skip_all "needs root, keyctl and a writable /etc/request-key.d"

root_uid_hex=$(t_hex 0)00
nobody=$(id -u nobody 2>/dev/null || echo 65534)

expect_payload() { # DESC EXPECTED_HEX
	out=$(t_upcall "$2") || { not_ok "$1: request failed"; return; }
	check_eq "$1" "$3" "$(printf '%s\n' "$out" | head -n1)"
	LAST_EXPIRY=$(printf '%s\n' "$out" | sed -n 's/^expiry=//p')
}
# DESC DESCRIPTION ERROR: the helper rejected it with ERROR (keyctl's wording), and the
# negative key times out after Nobody-TTL (30 s; 28-30 s left when read): neither the
# kernel's own 60 s negative key (helper crashed) nor the catch-all route's 47 s one.
expect_reject() {
	if ! got=$(t_upcall_rejected "$2"); then not_ok "$1: was accepted"; return; fi
	case "$got" in "28s $3" | "29s $3" | "30s $3") ok "$1 ($3, negative key for ${got%% *})" ;;
	*) not_ok "$1: expected '30s $3' (Nobody-TTL, the helper's error), got '$got'" ;; esac
}

# id_resolver descriptions
expect_payload "uid:root@domain -> \"0\\0\"" "uid:root@example.test" "$root_uid_hex"
expect_payload "domain compared case-insensitively" "uid:root@EXAMPLE.TEST" "$root_uid_hex"
expect_payload "gid:root@domain -> \"0\\0\"" "gid:root@example.test" "$root_uid_hex"
expect_payload "[Static] user -> 4242\\0" "uid:statuser@example.test" "$(t_hex 4242)00"
expect_payload "[Static] group -> 4343\\0" "gid:staticgrp@example.test" "$(t_hex 4343)00"
expect_payload "positive answer carries Positive-TTL" "uid:root@example.test" "$root_uid_hex"
# /proc/keys rounds down to whole minutes: 1830 s shows as "30m" for the next 30 s, and no
# other TTL near it (the 600 s default, an hour) does.
check_eq "positive key timeout 1830 s" 30m "$LAST_EXPIRY"
expect_payload "unknown user -> nobody" "uid:no-such-user-$$@example.test" "$(t_hex "$nobody")00"
case "$LAST_EXPIRY" in 28s | 29s | 30s) ok "nobody key timeout is the short Nobody-TTL ($LAST_EXPIRY)" ;;
*) not_ok "nobody key timeout is the short Nobody-TTL (got $LAST_EXPIRY)" ;; esac
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

# -t caps good answers
t_route_like_enable_upcalls "$T_TMP/helper-t.sh"
expect_payload "-t 330: payload unchanged" "uid:root@example.test" "$root_uid_hex"
check_eq "-t 330: key timeout (5m: 300-359 s left)" 5m "$LAST_EXPIRY"
expect_payload "-t 330: nobody keeps the short TTL" "uid:no-such-$$@example.test" "$(t_hex "$nobody")00"
case "$LAST_EXPIRY" in 28s | 29s | 30s) ok "-t 330: nobody timeout short ($LAST_EXPIRY)" ;;
*) not_ok "-t 330: nobody timeout short (got $LAST_EXPIRY)" ;; esac

if [ -s "$T_TMP/helper.err" ]; then diag "helper stderr:"; sed 's/^/#   /' "$T_TMP/helper.err"; fi
