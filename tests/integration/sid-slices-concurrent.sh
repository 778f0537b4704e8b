#!/bin/sh
# Several processes assigning SID slices at once through the sid backend's locked
# State-File: 8 processes, started together, each map the same 48 domains (RID 500, in
# the primary slice; in its own order) into 64 slices, so most domains collide in the
# hash and are probed onward.  Every process must give each domain the same id, no two
# domains may share a slice, and the State-File must hold each domain once, in the slice
# the processes used (tests/harness/sid-concurrent.sh).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/sid-concurrent.sh"
D=48

# each process its own order of the domains (rotated by p)
sc_sids() {
	awk -v d=$D -v p="$1" -v r="$2" 'BEGIN { for (i = 0; i < d; i++) {
		j = (i + p * 7) % d; printf "S-1-5-21-%d-77-%d-500 ", r, j + 1 } }'
}

# no two domains share an id (a slice)
sc_distinct() {
	[ "$(cut -d' ' -f2 "$T_TMP/answers" | sort | uniq -d | wc -l)" = 0 ]
}

# each domain once, in the slice the answers used
sc_state_want() {
	awk '{ sub(/-500$/, "", $1); print $1, int(($2 - 100000) / 1000) }' "$T_TMP/answers" |
		sort
}

sc_state_got() {
	grep -v '^#' "$SC_STATE" | sort
}

SETTINGS="Range-Min = 100000
Range-Max = 164000
Range-Size = 1000"
t_sid_concurrent "$SETTINGS" 8 3 $D "no two domains share a slice" \
	"holds each domain once, in the slice used"
