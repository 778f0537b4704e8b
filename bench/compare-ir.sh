#!/bin/sh
# Instruction counts (callgrind Ir) of the same work in two build trees, side by side: the
# way to show a restructuring costs no speed on a machine too busy for timed runs.
#
#   sh bench/compare-ir.sh OLD_BUILDDIR NEW_BUILDDIR
#
# Rows (each the same program and input in both trees):
#   attr     bench/attr-index-ir 100000 100000: puts, then lookups by fingerprint, by walk,
#            with sources (the whole program)
#   idmapd   nfskeys-idmapd answering bench/idmapd-load (1 client, 100 keys, cached):
#            difference of a 40 000- and a 20 000-lookup run: Ir per lookup in the daemon
#   idmap    the library's cached nfskeys_idmap_name_to_uid(): NEW's bench/idmap-hit-ir
#            (public API only) on each tree's libnfskeys.so, 40 000- minus 20 000-call run
#            (skipped when NEW has no bench/idmap-hit-ir)
# A tree must have been built with `make` and `make bench/attr-index-ir bench/idmapd-load`
# (NEW also `make bench/idmap-hit-ir`).
set -eu
OLD=$(cd "${1:?OLD_BUILDDIR}" && pwd)
NEW=$(cd "${2:?NEW_BUILDDIR}" && pwd)
command -v valgrind >/dev/null || { echo "SKIP: valgrind not installed"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/nfskeys-ir.XXXXXX")
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT

ir() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$1" | head -1; } # total Ir of a callgrind file

cg() { # OUT PROGRAM ARGS...: run under callgrind
	out=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1
}

# the daemon's Ir for N cached lookups from one client
daemon_ir() { # BUILDDIR N
	B=$1
	n=$2
	d=$T/d-$(basename "$(dirname "$(dirname "$B")")")-$n
	mkdir -p "$d"
	{
		printf '[General]\nDomain = example.test\n[Translation]\nMethod = static\n'
		printf '[Idmapd]\nSocket = %s/s.sock\nWorkers = 2\nKernel-Keyrings = none\n[Static]\n' "$d"
		i=0
		while [ $i -lt 100 ]; do
			printf 'user%d@example.test = %d\n' $i $((10000 + i))
			i=$((i + 1))
		done
	} >"$d/c.conf"
	bin=$B/idmapd/.libs/nfskeys-idmapd
	[ -x "$bin" ] || bin=$B/idmapd/nfskeys-idmapd # no libtool wrapper
	LD_LIBRARY_PATH="$B/libnfskeys/.libs" NFSKEYS_PLUGIN_DIR="$B/plugins/.libs" \
		valgrind --tool=callgrind --callgrind-out-file="$d/cg" \
		"$bin" -f -c "$d/c.conf" >"$d/log" 2>&1 &
	PID=$!
	i=0
	until [ -S "$d/s.sock" ] || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done
	# warm the cache, then the measured lookups
	"$B/bench/idmapd-load" --socket "$d/s.sock" --clients 1 --requests 100 --keys 100 >/dev/null
	"$B/bench/idmapd-load" --socket "$d/s.sock" --clients 1 --requests "$n" --keys 100 \
		--check >/dev/null
	kill "$PID"
	wait "$PID" 2>/dev/null || true
	PID=
	ir "$d/cg"
}

row() { # NAME OLD_IR NEW_IR UNIT
	awk -v n="$1" -v o="$2" -v w="$3" -v u="$4" \
		'BEGIN { printf "%-8s %16.0f %16.0f   %.3f   %s\n", n, o, w, w / o, u }'
}

echo "# callgrind instructions (Ir), old = $OLD, new = $NEW"
printf '%-8s %16s %16s   %s\n' row old new "new/old"

cg "$T/attr-old" "$OLD/bench/attr-index-ir" 100000 100000
cg "$T/attr-new" "$NEW/bench/attr-index-ir" 100000 100000
row attr "$(ir "$T/attr-old")" "$(ir "$T/attr-new")" "whole program"

o1=$(daemon_ir "$OLD" 20000) o2=$(daemon_ir "$OLD" 40000)
n1=$(daemon_ir "$NEW" 20000) n2=$(daemon_ir "$NEW" 40000)
row idmapd $(((o2 - o1) / 20000)) $(((n2 - n1) / 20000)) "per cached lookup, in the daemon"

# the library's Ir for N cached lookups: the same binary on each tree's library
lib_ir() { # BUILDDIR N
	d=$T/l-$(basename "$(dirname "$(dirname "$1")")")-$2
	mkdir -p "$d"
	{
		printf '[General]\nDomain = example.test\n[Translation]\nMethod = static\n[Static]\n'
		i=0
		while [ $i -lt 100 ]; do
			printf 'user%d@example.test = %d\n' $i $((10000 + i))
			i=$((i + 1))
		done
	} >"$d/c.conf"
	LD_LIBRARY_PATH="$1/libnfskeys/.libs" NFSKEYS_PLUGIN_DIR="$1/plugins/.libs" \
		valgrind --tool=callgrind --callgrind-out-file="$d/cg" "$HIT" "$d/c.conf" "$2" \
		>/dev/null 2>&1
	ir "$d/cg"
}
HIT=$NEW/bench/.libs/idmap-hit-ir
[ -x "$HIT" ] || HIT=$NEW/bench/idmap-hit-ir
if [ -x "$HIT" ]; then
	o1=$(lib_ir "$OLD" 20000) o2=$(lib_ir "$OLD" 40000)
	n1=$(lib_ir "$NEW" 20000) n2=$(lib_ir "$NEW" 40000)
	row idmap $(((o2 - o1) / 20000)) $(((n2 - n1) / 20000)) "per cached lookup, in the library"
fi
