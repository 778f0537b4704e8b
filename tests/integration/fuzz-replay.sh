#!/bin/sh
# Every fuzz target replays its whole seed corpus (tests/fuzz/corpus/NAME) in this tree,
# without libFuzzer (tests/fuzz/replay-main.c): no crash, no failed invariant, and every
# file of the corpus was run.
. "$top_srcdir/tests/harness/lib.sh"
TARGETS="ini keydesc config sid upcall idmapd-rpc attr mountinfo attrd-rpc attr-index upcall-reply spnego-desc attrd-fd"
plan $(echo $TARGETS | wc -w)
for t in $TARGETS; do
	corpus="$top_srcdir/tests/fuzz/corpus/$t"
	want=$(find "$corpus" -maxdepth 1 -type f ! -name '.*' | wc -l)
	out=$("$top_builddir/tests/fuzz/replay-$t" "$corpus" 2>&1); rc=$?
	if [ "$rc" = 0 ] && [ "$out" = "$want inputs replayed" ] && [ "$want" -gt 0 ]; then
		ok "fuzz-$t: its $want seeds replay cleanly"
	else
		not_ok "fuzz-$t: its $want seeds replay cleanly (exit $rc)"
		printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
	fi
done
