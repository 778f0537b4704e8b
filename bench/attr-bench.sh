#!/bin/sh
# Directory-policy benchmarks (bench/attr-bench.c): lookups in-process and through
# nfskeys-attrd at 1k, 100k and 1M policies, index memory, durable set latency; then the
# memory floor under the large-index rows (bench/attr-memlat.c).
set -e
: "${top_builddir:?run through make bench}"
"$top_builddir/bench/attr-bench" -d "$top_builddir/attrd/nfskeys-attrd" "$@"
"$top_builddir/bench/attr-memlat" 128 1
