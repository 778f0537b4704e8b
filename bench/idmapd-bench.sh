#!/bin/sh
# nfskeys-idmapd benchmarks (make bench): cached lookups per second and p50/p99 with 1, 4
# and 16 concurrent clients against the targets (150k/s, p99 100 us); then end-to-end
# kernel upcall latency of nfskeys-upcall (answered by the daemon) side by side with the
# trivial helper /bin/keyctl instantiate, target median <= 1.15x.  IDMAPD_BENCH=load or
# IDMAPD_BENCH=upcall runs one part; UPCALL_N sets the upcalls per helper (300).
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
B=$top_builddir
T=$(mktemp -d "${TMPDIR:-/tmp}/nfskeys-bench.XXXXXX")
PID=
ROUTE=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	[ -n "$ROUTE" ] && rm -f "$ROUTE"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

{
	printf '[General]\nDomain = example.test\n[Translation]\nMethod = static\n'
	printf '[Idmapd]\nSocket = %s/idmapd.sock\nWorkers = 2\n[Static]\n' "$T"
	i=0
	while [ $i -lt 100 ]; do printf 'user%d@example.test = %d\n' $i $((10000 + i)); i=$((i + 1)); done
} >"$T/nfskeys.conf"
NFSKEYS_PLUGIN_DIR="$B/plugins/.libs" "$B/idmapd/nfskeys-idmapd" -f -c "$T/nfskeys.conf" \
	>"$T/idmapd.log" 2>&1 &
PID=$!
n=0
until [ -S "$T/idmapd.sock" ] || [ $n -gt 50 ]; do sleep 0.1; n=$((n + 1)); done

# CPU time (utime + stime, clock ticks) the daemon has used so far.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }
HZ=$(getconf CLK_TCK)

load_bench() {
echo "-- daemon lookups (cached, name-to-uid, 100 keys), target >= 150000/s, p99 <= 100 us"
echo "   (load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs)"
"$B/bench/idmapd-load" --socket "$T/idmapd.sock" --clients 1 --requests 2000 --keys 100 >/dev/null
# One call in flight per client (--pipeline 1: what the upcall helper and the CLI do for
# one name), then pipelined (--pipeline 32: idmapd_client_lookup_many, the batch path);
# a pipelined lookup's latency is that of its whole batch: windows of 16 and 24 with one
# client show what a smaller batch does to that p99 and to the rate.
for pc in 1:1 1:4 1:16 16:1 24:1 32:1 32:4 32:16; do
	p=${pc%:*} c=${pc#*:}
	t0=$(cpu_ticks)
	out=$("$B/bench/idmapd-load" --socket "$T/idmapd.sock" --clients $c --pipeline $p \
		--requests $((200000 / c)) --keys 100 --check)
	t1=$(cpu_ticks)
	rate=$(echo "$out" | sed 's/.*rate=\([0-9]*\).*/\1/')
	p99=$(echo "$out" | sed 's/.*p99_us=\([0-9.]*\).*/\1/')
	# daemon CPU per lookup: what bounds its rate when it has a core to itself
	cpu=$(echo "($t1 - $t0) * 1000000 / $HZ / 200000" | bc -l)
	printf '%s  rate/target=%.2f p99/target=%.2f daemon_cpu_us_per_lookup=%.2f\n' "$out" \
		"$(echo "$rate / 150000" | bc -l)" "$(echo "$p99 / 100" | bc -l)" "$cpu"
	[ $p = 1 ] || continue
	# the physical floor for one call in flight: a bare AF_UNIX echo server, same client
	# threads, messages of a lookup's size; nothing a daemon does can beat it
	floor=$("$B/bench/unix-floor" --clients $c --requests $((200000 / c)) --size 96)
	frate=$(echo "$floor" | sed 's/.*rate=\([0-9]*\).*/\1/')
	fp99=$(echo "$floor" | sed 's/.*p99_us=\([0-9.]*\).*/\1/')
	printf '   floor: %s  daemon/floor rate=%.2f p99=%.2f\n' "$floor" \
		"$(echo "$rate / $frate" | bc -l)" "$(echo "$p99 / $fp99" | bc -l)"
done
floor_rounds
}

# The socket goal: p99 at 4 and 16 clients <= 1.2x the bare AF_UNIX echo floor.
# The daemon is a process of its own, so each round trip crosses two address spaces; the
# fair floor is the echo server in its own process too (unix-floor --process).  The
# in-process floor (a thread of the client) is printed beside it.  One run of each is
# noise on a shared machine: ROUNDS (5) interleaved rounds, the median ratio is the figure.
floor_rounds() {
echo "-- p99 against the echo floor, ${ROUNDS:-5} interleaved rounds (median ratio; goal <= 1.2)"
for c in 4 16; do
	: >"$T/ratios-proc" ; : >"$T/ratios-thread"
	r=0
	while [ $r -lt "${ROUNDS:-5}" ]; do
		n=$((200000 / c))
		d=$("$B/bench/idmapd-load" --socket "$T/idmapd.sock" --clients $c --requests $n \
			--keys 100 --check | sed 's/.*p99_us=\([0-9.]*\).*/\1/')
		fp=$("$B/bench/unix-floor" --process --clients $c --requests $n --size 96 |
			sed 's/.*p99_us=\([0-9.]*\).*/\1/')
		ft=$("$B/bench/unix-floor" --clients $c --requests $n --size 96 |
			sed 's/.*p99_us=\([0-9.]*\).*/\1/')
		printf '   clients=%d round=%d daemon_p99_us=%s floor_process_p99_us=%s floor_thread_p99_us=%s\n' \
			$c $r "$d" "$fp" "$ft"
		echo "$d / $fp" | bc -l >>"$T/ratios-proc"
		echo "$d / $ft" | bc -l >>"$T/ratios-thread"
		r=$((r + 1))
	done
	printf 'clients=%d p99 daemon/floor(process) median=%.2f  daemon/floor(thread) median=%.2f\n' $c \
		"$(sort -n "$T/ratios-proc" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" \
		"$(sort -n "$T/ratios-thread" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
done
}

upcall_bench() {
echo "-- end-to-end upcall latency: nfskeys-upcall (via daemon) vs /bin/keyctl instantiate,"
echo "   target median <= 1.15x (nfskeys-upcall-dynamic: the same helper linked dynamically)"
echo "   (load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs)"
if [ "$(id -u)" != 0 ] || [ ! -w /etc/request-key.d ]; then
	echo "SKIP: needs root and a writable /etc/request-key.d"
	return 0
fi
ROUTE="/etc/request-key.d/nfskeys-bench-$$.conf"
{
	printf 'create\tuser\t*\tnfskeys-bench-k-%s\t/bin/keyctl instantiate %%k 0 %%S\n' $$
	printf 'create\tuser\t*\tnfskeys-bench-s-%s\t%s -c %s %%k %%d\n' $$ \
		"$B/bench/nfskeys-upcall-bench" "$T/nfskeys.conf"
	printf 'create\tuser\t*\tnfskeys-bench-d-%s\t%s -c %s %%k %%d\n' $$ \
		"$B/bench/nfskeys-upcall-dynamic" "$T/nfskeys.conf"
} >"$ROUTE"
keyctl session - "$B/bench/upcall-latency" "uid:user" "@example.test" 100 "${UPCALL_N:-300}" \
	"keyctl=nfskeys-bench-k-$$" "nfskeys-upcall=nfskeys-bench-s-$$" \
	"dynamic=nfskeys-bench-d-$$" 2>&1 | grep -v '^Joined session'
# CPU time of each helper process (task-clock: user + system, the exec included), page
# faults and context switches, from perf stat wrapped around each helper: what the helper
# itself costs, free of the scheduling delay that dominates wall-clock figures on a
# loaded machine.
if command -v perf >/dev/null 2>&1 && perf stat -e task-clock true >/dev/null 2>&1; then
	echo "-- CPU per helper run (perf stat, median of ${UPCALL_CPU_N:-150} upcalls each)"
	P="$(command -v perf) stat -x, -e task-clock,page-faults,context-switches --append -o"
	line='create\tuser\t*\tnfskeys-bench-%s-%s\t%s %s/cpu-%s %s\n'
	{
		printf "$line" pk $$ "$P" "$T" keyctl "/bin/keyctl instantiate %k 0 %S"
		printf "$line" ps $$ "$P" "$T" static \
			"$B/bench/nfskeys-upcall-bench -c $T/nfskeys.conf %k %d"
		printf "$line" pd $$ "$P" "$T" dynamic \
			"$B/bench/nfskeys-upcall-dynamic -c $T/nfskeys.conf %k %d"
	} >"$ROUTE"
	keyctl session - "$B/bench/upcall-latency" "uid:user" "@example.test" 100 \
		"${UPCALL_CPU_N:-150}" "keyctl=nfskeys-bench-pk-$$" "static=nfskeys-bench-ps-$$" \
		"dynamic=nfskeys-bench-pd-$$" >/dev/null 2>&1
	rm -f "$ROUTE"
	med() { # HELPER EVENT: the median
		grep ",$2" "$T/cpu-$1" | cut -d, -f1 | sort -n |
			awk '{ a[NR] = $1 } END { print a[int(NR / 2) + 1] }'
	}
	k=$(med keyctl task-clock)
	for h in keyctl static dynamic; do
		c=$(med $h task-clock)
		printf '%-8s n=%s cpu_ms=%s cpu/keyctl=%.3f page_faults=%s context_switches=%s\n' \
			$h \
			"$(grep -c ',task-clock' "$T/cpu-$h")" "$c" "$(echo "$c / $k" | bc -l)" \
			"$(med $h page-faults)" "$(med $h context-switches)"
	done
fi
ROUTE=
}

# IDMAPD_BENCH=load, =floor or =upcall runs one part only
case "${IDMAPD_BENCH:-all}" in
load) load_bench ;;
floor) floor_rounds ;;
upcall) upcall_bench ;;
*) load_bench; upcall_bench ;;
esac
