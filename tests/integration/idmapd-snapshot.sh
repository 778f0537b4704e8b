#!/bin/sh
# nfskeys-idmapd's answer cache across a restart ([Idmapd] Cache-Snapshot): a clean stop
# writes the fresh answers to a private file; the next start takes back those still fresh
# and answers them with no backend lookup.  Never a wrong answer: a snapshot made with
# another ID-mapping configuration, a cut file, a file others may read, or answers past
# their time are not taken back; Cache-Snapshot = none writes nothing.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"

plan 17

SNAP=$T_TMP/state/cache.snap
mkdir -p "$T_TMP/state"
chmod 0700 "$T_TMP/state"
conf() { t_idmapd_conf "[Idmapd]" "Cache-Snapshot = $SNAP" "$@"; }
# the first two mappings of the harness's [Static] (alice 2001) and one more
conf
NK() { "$NFSKEYS" -c "$IDMAPD_CONF" "$@"; }
stat_of() { NK idmapd stats | awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }'; }
uid_of() { NK idmapd lookup name-to-uid "$1" | cut -f1; }

t_idmapd_start || { not_ok "idmapd starts"; exit 1; }
check_eq "before: alice is 2001" 2001 "$(uid_of alice@example.test)"
check_eq "... and user7 10007" 10007 "$(uid_of user7@example.test)"
t_idmapd_stop
check "a clean stop writes the snapshot" test -f "$SNAP"
check_eq "... private to root (0600)" 600 "$(stat -c %a "$SNAP")"
check_contains "... and logs how many answers" "answers saved to $SNAP" "$(cat "$T_TMP/idmapd.log")"

# --- the next start answers from it
t_idmapd_start || { not_ok "idmapd starts again"; exit 1; }
check "the next start takes the answers back (cache_snapshot_restored >= 2)" \
	[ "$(stat_of cache_snapshot_restored)" -ge 2 ]
check_eq "alice is 2001" 2001 "$(uid_of alice@example.test)"
check_eq "... answered from the cache: no backend lookup" \
	"0 1" "$(stat_of 'backend_requests_total{backend="static"}') $(stat_of 'lookups_total{result="hit"}')"
t_idmapd_stop

# --- another configuration: alice is 2002 now; the old answer must not come back
sed -i 's/^alice@example.test = 2001$/alice@example.test = 2002/' "$IDMAPD_CONF"
t_idmapd_start || { not_ok "idmapd starts with the changed configuration"; exit 1; }
check_eq "a changed configuration: the snapshot is not taken back (0 restored)" 0 \
	"$(stat_of cache_snapshot_restored)"
check_eq "... alice is 2002, not the snapshot's 2001" 2002 "$(uid_of alice@example.test)"
check_contains "... and the log says why" "made with another ID-mapping configuration" \
	"$(cat "$T_TMP/idmapd.log")"
t_idmapd_stop

# --- a cut file: nothing taken back, the daemon starts
head -c 100 "$SNAP" >"$SNAP.cut" && mv "$SNAP.cut" "$SNAP" && chmod 600 "$SNAP"
t_idmapd_start || { not_ok "idmapd starts with a cut snapshot"; exit 1; }
check_eq "a cut snapshot: nothing taken back" 0 "$(stat_of cache_snapshot_restored)"
check_contains "... said in the log" "cut short or malformed: starting cold" \
	"$(cat "$T_TMP/idmapd.log")"
t_idmapd_stop

# --- a file others may read is not read
chmod 644 "$SNAP"
t_idmapd_start || { not_ok "idmapd starts"; exit 1; }
check_eq "a snapshot others may read: not read" 0 "$(stat_of cache_snapshot_restored)"
t_idmapd_stop

# --- answers past their time stay out: a 1 s TTL, a 3 s pause
rm -f "$SNAP"
conf "[Idmap]" "Positive-TTL = 1"
t_idmapd_start && uid_of alice@example.test >/dev/null
t_idmapd_stop
sleep 3
t_idmapd_start || { not_ok "idmapd starts"; exit 1; }
check_eq "answers past their time are not taken back" 0 "$(stat_of cache_snapshot_restored)"
t_idmapd_stop

# --- none: nothing written
rm -f "$SNAP"
t_idmapd_conf "[Idmapd]" "Cache-Snapshot = none"
t_idmapd_start && uid_of alice@example.test >/dev/null
t_idmapd_stop
check "Cache-Snapshot = none: no file" test ! -e "$SNAP"
t_idmapd_conf "[Idmapd]" "Cache-Snapshot = relative/path"
out=$(timeout 20 "$IDMAPD" --foreground --config "$IDMAPD_CONF" 2>&1)
check_contains "a relative Cache-Snapshot is refused, named" \
	"Cache-Snapshot = relative/path: expected an absolute path or none" "$out"
