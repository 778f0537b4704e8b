#!/bin/sh
# nfskeys-idmapd's Inline-Lookups: a miss that the engine can answer from memory
# (NFSKEYS_IDMAP_LOOKUP_NOWAIT: the nsswitch backend's index of passwd and group, when
# nsswitch.conf lists files first) is answered in the event loop, counted by
# inline_lookups_total; anything else still goes to the workers.  The index reads a test
# /etc (NFSKEYS_TEST_ETC_DIR) whose passwd and group hold names the real one does not.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
plan 11

ETC="$T_TMP/etc"
mkdir -p "$ETC"
printf 'passwd: files\ngroup: files\n' >"$ETC/nsswitch.conf"
printf 'inl1:x:47011:47011::/:/bin/sh\ninl2:x:47012:47011::/:/bin/sh\n' >"$ETC/passwd"
printf 'inlg:x:47011:\n' >"$ETC/group"
NFSKEYS_TEST_ETC_DIR=$ETC
export NFSKEYS_TEST_ETC_DIR
NK() { "$NFSKEYS" -c "$IDMAPD_CONF" "$@"; }
stat_of() { NK idmapd stats --prometheus | awk -v m="nfskeys_idmapd_$1" '$1 == m { print $2 }'; }
conf() {
	t_idmapd_conf '[Translation]' 'Method = nsswitch' "$@"
}

conf
t_idmapd_start || fail_all "nfskeys-idmapd starts"
# the first lookup of each file builds its index (on a worker: NOWAIT never reads a file)
first="$(NK idmapd lookup name-to-uid inl1@example.test | cut -f1) $(NK idmapd lookup gid-to-group 47011 | cut -f1)"
n0=$(stat_of inline_lookups_total)
out="$(NK idmapd lookup name-to-uid inl2@example.test | cut -f1) $(NK idmapd lookup uid-to-name 47011 | cut -f1) $(NK idmapd lookup group-to-gid inlg@example.test | cut -f1)"
n1=$(stat_of inline_lookups_total)
check_eq "names and ids from the indexed files are right (the first of each on a worker)" \
	"47011 inlg@example.test 47012 inl1@example.test 47011" "$first $out"
check_eq "three misses answered in the loop (inline_lookups_total $n0 -> $n1)" \
	"$((n0 + 3))" "$n1"
check_eq "and cached like any answer (a second ask is a hit, not another inline lookup)" \
	"47012 $n1" "$(NK idmapd lookup name-to-uid inl2@example.test | cut -f1) $(stat_of inline_lookups_total)"
# a name the index does not have: a later NSS source may know it, so a worker asks NSS
w0=$(stat_of 'backend_requests_total{backend="nobody"}')
NK idmapd lookup name-to-uid nosuchinl@example.test >/dev/null 2>&1
check_eq "a name not in the files goes to the workers (inline count unchanged)" "$n1" \
	"$(stat_of inline_lookups_total)"
# no such owner is an answer, not a failure: a miss, then a negative hit; error stays 0 (an
# admin's alert) until a lookup fails: here a uid that is no number
lr() { stat_of "lookups_total{result=\"$1\"}"; }
m0=$(lr miss) h0=$(lr negative_hit)
NK idmapd lookup name-to-uid nosuchinl@example.test >/dev/null 2>&1
NK idmapd lookup uid-to-name 47999 >/dev/null 2>&1
NK idmapd lookup uid-to-name 47999 >/dev/null 2>&1
check_eq "an unknown name and id: misses, then a negative_hit, no error" \
	"$((m0 + 1)) $((h0 + 2)) 0" "$(lr miss) $(lr negative_hit) $(lr error)"
NK idmapd lookup uid-to-name 47x99 >"$T_TMP/bad.out" 2>&1
msg="nfskeys: lookup uid-to-name 47x99: the daemon refused the key as malformed"
check_eq "a malformed uid is an error, and the client names it" \
	"1 $msg for uid-to-name" "$(lr error) $(cat "$T_TMP/bad.out")"
# files changed: NOWAIT sees it by stat() and sends the lookup to a worker, which rebuilds
printf 'inl3:x:47013:47011::/:/bin/sh\n' >>"$ETC/passwd"
touch -d '+2 seconds' "$ETC/passwd"
check_eq "a user added to the file is found at once" "47013" \
	"$(NK idmapd lookup name-to-uid inl3@example.test | cut -f1)"
t_idmapd_stop
check_eq "daemon stops cleanly" 0 $?

# Inline-Lookups = no: the same answers, all from the workers
conf '[Idmapd]' 'Inline-Lookups = no'
t_idmapd_start || fail_all "nfskeys-idmapd starts with Inline-Lookups = no"
out="$(NK idmapd lookup name-to-uid inl2@example.test | cut -f1) $(NK idmapd lookup uid-to-name 47012 | cut -f1)"
check_eq "Inline-Lookups = no: the same answers" "47012 inl2@example.test" "$out"
check_eq "... none of them in the loop" "0" "$(stat_of inline_lookups_total)"
t_idmapd_stop
check_eq "daemon stops cleanly" 0 $?
