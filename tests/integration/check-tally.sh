#!/bin/sh
# scripts/check's accounting (scripts/check-tally.sh), fed made-up make output and
# summaries, and the lines automake's real TAP driver writes: a test that ran nothing and
# gave no reason (a bare "1..0", what a test that stops with status 0 before its plan
# prints) is a failure, never a skip, whatever scripts/expected-skips says; a skip with a
# reason is judged against the list; the totals move the bare ones from skipped to failed.
. "$top_srcdir/tests/harness/lib.sh"
plan 12

DRIVER="$top_srcdir/build-aux/tap-driver.sh"
# account OUT SUMMARY EXPECTED: scripts/check's accounting of one stage ("default build")
# whose make output is OUT and automake summary SUMMARY, judged against the list EXPECTED;
# prints what scripts/check prints, then "totals: PASSED FAILED SKIPPED"
account() {
	(
		SKIPS="$T_TMP/skips.txt" BARE="$T_TMP/bare.txt" EXPECTED_SKIPS="$3"
		: >"$SKIPS"; : >"$BARE"
		. "$top_srcdir/scripts/check-tally.sh"
		note_skips "default build" "$1"
		tally "$2"
		judge_skips
		echo "totals: $passed $failed $skipped"
	)
}

cat >"$T_TMP/out" <<'EOF'
PASS: tests/integration/a.sh 1 - something
SKIP: tests/integration/bare.sh
SKIP: tests/integration/why.sh - needs root
SKIP: tests/integration/one.sh 2 # SKIP no FUSE here
SKIP: tests/integration/noreason.sh 3 # SKIP
EOF
printf '# TOTAL: 5\n# PASS:  1\n# SKIP:  4\n# XFAIL: 0\n# FAIL:  0\n# XPASS: 0\n# ERROR: 0\n' \
	>"$T_TMP/summary"
printf '%s\n' '# STAGE | TEST | REASON | why' \
	'default build | tests/integration/why.sh | needs root | the list says so' >"$T_TMP/expected"
account "$T_TMP/out" "$T_TMP/summary" "$T_TMP/expected" >"$T_TMP/res" 2>&1
sed 's/^/# /' "$T_TMP/res"
res=$(cat "$T_TMP/res")
check_contains "a whole test skipped without a reason (a bare 1..0) is a failure" \
	"FAILED:     default build | tests/integration/bare.sh" "$res"
check_contains "so is one check skipped without a reason" \
	"FAILED:     default build | tests/integration/noreason.sh" "$res"
check_contains "a listed skip with its reason is expected" \
	"expected:   default build | tests/integration/why.sh | needs root" "$res"
check_contains "an unlisted skip with its reason is unexpected" \
	"UNEXPECTED: default build | tests/integration/one.sh | no FUSE here" "$res"
check_eq "totals: 1 passed, 3 failed (2 bare, 1 unexpected), 2 skipped" "totals: 1 3 2" \
	"$(echo "$res" | tail -n1)"

# a list that would excuse anything does not excuse a test that gave no reason
printf '%s\n' '* | * | * | everything' >"$T_TMP/expected-all"
check_eq "a bare 1..0 stays a failure when expected-skips matches everything" "totals: 1 2 2" \
	"$(account "$T_TMP/out" "$T_TMP/summary" "$T_TMP/expected-all" | tail -n1)"

# The real driver's lines: a test that sources the harness and stops with status 0 before
# its plan, one that skips with a reason, one that passes with a check skipped.
cat >"$T_TMP/early.sh" <<EOF
. "$top_srcdir/tests/harness/lib.sh"
[ -e /nonexistent ] || exit 0
plan 1
ok "never reached"
EOF
printf '. "%s/tests/harness/lib.sh"\nskip_all "needs a thing this machine lacks"\n' \
	"$top_srcdir" >"$T_TMP/skipall.sh"
printf '. "%s/tests/harness/lib.sh"\nplan 2\nok "a"\nskip "no such device"\n' "$top_srcdir" \
	>"$T_TMP/part.sh"
: >"$T_TMP/drv.out"
for t in early skipall part; do
	env AM_TAP_AWK="${AWK:-awk}" sh "$DRIVER" --test-name "tests/integration/$t.sh" \
		--log-file "$T_TMP/$t.log" --trs-file "$T_TMP/$t.trs" --color-tests no \
		--enable-hard-errors yes --expect-failure no -- sh "$T_TMP/$t.sh" >>"$T_TMP/drv.out" 2>&1
done
sed 's/^/# driver: /' "$T_TMP/drv.out"
printf '# TOTAL: 4\n# PASS:  1\n# SKIP:  3\n# FAIL:  0\n# ERROR: 0\n' >"$T_TMP/summary2"
printf '%s\n' \
	'default build | tests/integration/skipall.sh | needs a thing this machine lacks | listed' \
	'default build | tests/integration/part.sh | no such device | listed' >"$T_TMP/expected2"
account "$T_TMP/drv.out" "$T_TMP/summary2" "$T_TMP/expected2" >"$T_TMP/res2" 2>&1
sed 's/^/# /' "$T_TMP/res2"
res=$(cat "$T_TMP/res2")
check_eq "the driver reports the early stop as a plain SKIP (what needs catching)" \
	"SKIP: tests/integration/early.sh" "$(grep 'early.sh' "$T_TMP/drv.out")"
check_contains "a harness test stopping with status 0 before its plan is a failure" \
	"FAILED:     default build | tests/integration/early.sh" "$res"
check_contains "skip_all's reason reaches the list" \
	"expected:   default build | tests/integration/skipall.sh | needs a thing this machine lacks" "$res"
check_contains "a skipped check's reason reaches the list" \
	"expected:   default build | tests/integration/part.sh | no such device" "$res"
check_eq "totals: 1 passed, 1 failed (the early stop), 2 skipped" "totals: 1 1 2" \
	"$(echo "$res" | tail -n1)"

# scripts/check itself uses this accounting (and no copy of its own)
check "scripts/check sources scripts/check-tally.sh and calls judge_skips" sh -c \
	"grep -q '^\. \"\$SRCDIR/scripts/check-tally.sh\"' '$top_srcdir/scripts/check' &&
	 grep -q '^judge_skips' '$top_srcdir/scripts/check' &&
	 ! grep -q '^note_skips()' '$top_srcdir/scripts/check'"
