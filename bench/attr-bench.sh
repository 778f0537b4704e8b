#!/bin/sh
# Directory-policy benchmarks (bench/attr-bench.c): lookups in-process and through
# nfskeys-attrd at 1k, 100k and 1M policies, index memory, durable set latency.
set -e
: "${top_builddir:?run through make bench}"
exec "$top_builddir/bench/attr-bench" -d "$top_builddir/attrd/nfskeys-attrd" "$@"
