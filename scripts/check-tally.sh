# scripts/check's accounting, sourced by it and by tests/integration/check-tally.sh (which
# feeds it made-up logs): the passes, failures and skips of every stage, and the judgement
# of each skip against scripts/expected-skips.
#
# A skip must say why.  automake's TAP driver reports a test whose whole output is a plan
# of "1..0" with no "# SKIP reason" as a plain "SKIP: TEST": that is what a test gives that
# stopped with status 0 before its plan (tests/harness/lib.sh prints the plan at exit), and
# it is a failure here, never a skip: nothing says the test could not run.  A skip with a
# reason ("SKIP: TEST - reason" for a whole test, "SKIP: TEST N # SKIP reason" for one
# check) is judged against scripts/expected-skips: one it does not list fails the run.
#
# Set before sourcing: SKIPS (the file the skips are kept in, "STAGE | TEST | REASON" a
# line), BARE (the same for the skips without a reason, "STAGE | TEST"), EXPECTED_SKIPS
# (the list to judge against).  The counts are in passed, failed and skipped.
passed=0; failed=0; skipped=0

# note_skips STAGE MAKE-OUTPUT: keep the test drivers' SKIP lines of a stage
note_skips() {
	sed -n -E 's/^SKIP: ([^ ]+) (- |[0-9]+ # SKIP:? ?)(.*[^ ].*)$/\1 | \3/p' "$2" |
		sed "s/^/$1 | /" >>"$SKIPS"
	sed -n -E 's/^SKIP: ([^ ]+)( [0-9]+ # SKIP:? *| - *)?$/\1/p' "$2" |
		sed "s/^/$1 | /" >>"$BARE"
}

# skip_expected "STAGE | TEST | REASON": listed in EXPECTED_SKIPS?
skip_expected() {
	_st=${1%% | *}; _r=${1#* | }; _t=${_r%% | *}; _r=${_r#* | }
	while IFS='|' read -r es et er _why; do
		es=$(echo "$es" | sed 's/^ *//; s/ *$//'); et=$(echo "$et" | sed 's/^ *//; s/ *$//')
		er=$(echo "$er" | sed 's/^ *//; s/ *$//')
		case "$es" in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2254
		case "$_st" in $es) ;; *) continue ;; esac
		case "$_t" in $et) ;; *) continue ;; esac
		case "$_r" in $er) return 0 ;; esac
	done <"$EXPECTED_SKIPS"
	return 1
}

# tally LOG: add up the automake summary lines of LOG
tally() {
	p=$(sed -n 's/^# PASS: *\([0-9]*\)/\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	f=$(sed -n 's/^# \(FAIL\|ERROR\|XPASS\): *\([0-9]*\)/\2/p' "$1" | awk '{s+=$1} END {print s+0}')
	s=$(sed -n 's/^# SKIP: *\([0-9]*\)/\1/p' "$1" | awk '{s+=$1} END {print s+0}')
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

# judge_skips: print every skip with its verdict; the bare ones and those EXPECTED_SKIPS
# does not list become failures (a bare one is no longer counted as skipped)
judge_skips() {
	if [ -s "$BARE" ]; then
		echo "==> tests that stopped with a plan of 1..0 and no SKIP reason (STAGE | TEST):"
		sed 's/^/  FAILED:     /' "$BARE"
		_n=$(wc -l <"$BARE")
		echo "==> $_n test(s) ran nothing and gave no reason: counted as failures" \
			"(a test that cannot run prints '1..0 # SKIP reason', skip_all in tests/harness/lib.sh)"
		failed=$((failed + _n)); skipped=$((skipped - _n))
	fi
	_unexpected=0
	if [ -s "$SKIPS" ]; then
		echo "==> skipped checks (STAGE | TEST | REASON):"
		while IFS= read -r l; do
			if skip_expected "$l"; then echo "  expected:   $l"
			else echo "  UNEXPECTED: $l"; _unexpected=$((_unexpected + 1)); fi
		done <"$SKIPS"
	fi
	if [ "$_unexpected" -gt 0 ]; then
		echo "==> $_unexpected unexpected skip(s): tests that should run on this machine did not" \
			"(expected skips: scripts/expected-skips)"
		failed=$((failed + _unexpected))
	fi
}
