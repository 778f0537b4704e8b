#!/bin/sh
# Writeback benchmarks: the completion hook and the throttle call (bench-wb), then a
# short wbsim comparison of the three policies.
set -e
"$top_builddir/bench/bench-wb"
echo
"$top_builddir/tools/wbsim" --quick
