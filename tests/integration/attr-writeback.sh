#!/bin/sh
# nfsattr writeback: the writeback mode and dirty limit in effect at a directory and where
# each comes from (an ancestor's attributes, [Writeback] Dirty-Limit, the built-in
# default), in text and JSON; a dirty_limit under the throttler's minimum shown raised;
# a [Writeback] Dirty-Limit out of range is an error naming the setting, value and bounds.
. "$top_srcdir/tests/harness/lib.sh"

plan 11
NFSATTR="$top_builddir/tools/nfsattr/nfsattr"
CONF="$T_TMP/nfskeys.conf"
write_conf() {
	printf '[Attr]\nStore = %s/attr.db\n[Attrd]\nSocket = %s/attrd.sock\n' "$T_TMP" "$T_TMP" >"$CONF"
	[ -n "$1" ] && printf '[Writeback]\nDirty-Limit = %s\n' "$1" >>"$CONF"
	return 0
}
na() { "$NFSATTR" -c "$CONF" "$@"; }
write_conf 128M
cat >"$T_TMP/p.json" <<'EOF'
{"policies":[
 {"domain":"nfs://srv","path":"/export/a","attributes":{"writeback":"throttled","dirty_limit":"64M"}},
 {"domain":"nfs://srv","path":"/export/a/b","attributes":{"writeback":"sync"}},
 {"domain":"nfs://srv","path":"/export/c","attributes":{"dirty_limit":"64K"}}]}
EOF
if ! na import "$T_TMP/p.json" >/dev/null 2>"$T_TMP/err"; then
	skip_all "cannot write a store here: $(cat "$T_TMP/err")"
fi

out=$(na writeback nfs://srv/export/a/b/deep)
check_contains "mode from the nearest directory" \
	"writeback    sync         from nfs://srv/export/a/b" "$out"
check_contains "limit inherited from further up" \
	"dirty_limit  67108864     from nfs://srv/export/a" "$out"
check_contains "what writers do" "sync: writes are stable on return" "$out"
json=$(na writeback --json nfs://srv/export/a/x)
check_eq "--json" '{"directory":"nfs://srv/export/a/x","mode":"throttled","mode_source":"nfs://srv/export/a","throttled":true,"dirty_limit":67108864,"dirty_limit_source":"nfs://srv/export/a","dirty_limit_raised":false}' "$json"
check_contains "under the minimum: raised to 1M" \
	"dirty_limit  1048576      from nfs://srv/export/c (65536 raised to the throttler's minimum, 1M)" \
	"$(na writeback nfs://srv/export/c/d)"
out=$(na writeback nfs://srv/elsewhere)
check_contains "nothing in effect: default mode" "writeback    default      (none in effect)" "$out"
check_contains "... and the configured limit" "dirty_limit  134217728    [Writeback] Dirty-Limit" "$out"
write_conf ""
check_contains "no configured limit: the built-in one" "268435456    built-in default" \
	"$(na writeback nfs://srv/elsewhere)"

# a configured limit above 1T (or under 1M): an error naming key, value and bounds
write_conf 2T
na writeback nfs://srv/elsewhere >"$T_TMP/out" 2>"$T_TMP/err"
check_eq "Dirty-Limit above 1T: exit 1" 1 $?
check_contains "... naming key, value and bounds" \
	"[Writeback] Dirty-Limit = 2T: not a size from 1M to 1T" "$(cat "$T_TMP/err")"
write_conf 512K
check_contains "Dirty-Limit under 1M: the same" \
	"[Writeback] Dirty-Limit = 512K: not a size from 1M to 1T (below 1M)" \
	"$(na writeback nfs://srv/elsewhere 2>&1)"
