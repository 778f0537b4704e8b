#!/bin/sh
# Several processes assigning autorid ranges at once through the sid backend's locked
# State-File ([SID] Algorithm = autorid): 8 processes, started together, each map the same
# 24 domains, RID 500 (the domain's range) and RID 25000 (its range "DOMAIN#2"), each
# process in its own order.  Every process must give each SID the same id, no two ranges
# may share a number, the numbers must be 1 to 48 with none left out (winbind hands them
# out one after another), and the State-File must hold each range once, with the number
# the answers used (tests/harness/sid-concurrent.sh).
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/sid-concurrent.sh"
D=24

# each process its own order of the SIDs (rotated by p)
sc_sids() {
	awk -v d=$D -v p="$1" -v r="$2" 'BEGIN { for (i = 0; i < 2 * d; i++) {
		j = (i + p * 7) % (2 * d)
		printf "S-1-5-21-%d-77-%d-%d ", r, j % d + 1, j < d ? 500 : 25000 } }'
}

# the ranges the answers used: "KEY NUMBER", KEY the domain, or DOMAIN#2
sc_state_want() {
	awk '{ n = split($1, a, "-"); sub(/-[0-9]+$/, "", $1); if (a[n] == 25000) $1 = $1 "#2"
		print $1, int(($2 - 100000) / 10000) }' "$T_TMP/answers" | sort
}

# the range numbers are 1 to 2D, each once
sc_distinct() {
	_nums=$(sc_state_want | cut -d' ' -f2 | sort -n | tr '\n' ' ')
	[ "$_nums" = "$(seq -s ' ' 1 $((2 * D))) " ] && return 0
	diag "the range numbers: $_nums"
	return 1
}

sc_state_got() {
	grep '^range ' "$SC_STATE" | awk '{ print $3, $2 }' | sort
}

SETTINGS="Algorithm = autorid
Range-Min = 100000
Range-Max = 1099999
Range-Size = 10000"
t_sid_concurrent "$SETTINGS" 8 3 $((2 * D)) \
	"the ranges are numbered 1 to $((2 * D)), none twice, none left out" \
	"holds each range once, as the answers used it"
