#!/bin/sh
# Several processes assigning SID slices at once through the sid backend's locked
# State-File: 8 processes, started together, each map the same 48 domains (RID 500, in
# the primary slice; in its own
# order) into 64 slices, so most domains collide in the hash and are probed onward.
# Every process must give each domain the same id, no two domains may share a slice,
# and the State-File must hold each domain once, in the slice the processes used.
. "$top_srcdir/tests/harness/lib.sh"
[ -f "$NFSKEYS_PLUGIN_DIR/idmap-sid.so" ] || skip_all "the sid backend plugin was not built"
plan 5

NFSKEYS_BIN=$NFSKEYS
[ -x "$top_builddir/tools/nfskeys/.libs/nfskeys" ] && NFSKEYS_BIN="$top_builddir/tools/nfskeys/.libs/nfskeys"
export LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cat >"$T_TMP/nfskeys.conf" <<CONF
[General]
Domain = sid.test
[Translation]
Method = sid
[SID]
State-File = $T_TMP/slices
Range-Min = 100000
Range-Max = 164000
Range-Size = 1000
CONF
P=8 D=48 ROUNDS=3
ok_agree=1 ok_distinct=1 ok_file=1 ok_all=1 ok_rc=1
r=0
while [ $r -lt $ROUNDS ]; do
	r=$((r + 1))
	rm -f "$T_TMP/slices" "$T_TMP"/out.* "$T_TMP/go"
	p=0
	while [ $p -lt $P ]; do
		p=$((p + 1))
		# each process its own order of the domains (rotated by p)
		sids=$(awk -v d=$D -v p=$p -v r=$r 'BEGIN { for (i = 0; i < d; i++) {
			j = (i + p * 7) % d; printf "S-1-5-21-%d-77-%d-500 ", r, j + 1 } }')
		( while [ ! -f "$T_TMP/go" ]; do :; done
		  "$NFSKEYS_BIN" -c "$T_TMP/nfskeys.conf" idmap sid $sids >"$T_TMP/out.$p" 2>&1
		  echo "rc=$?" >>"$T_TMP/out.$p" ) &
	done
	sleep 0.5; touch "$T_TMP/go"; wait
	grep -h '^rc=' "$T_TMP"/out.* | grep -qv '^rc=0$' && { ok_rc=0; diag "round $r: a process failed"; \
		grep -hv '^S-1-5' "$T_TMP"/out.* | head -5 | sed 's/^/# /'; }
	# "SID -> ID (sid, ...)": per domain the set of ids the processes gave
	cat "$T_TMP"/out.* | awk '$2 == "->" { print $1, $3 }' | sort -u >"$T_TMP/answers"
	[ "$(wc -l <"$T_TMP/answers")" -ge "$D" ] || ok_all=0
	[ "$(cut -d' ' -f1 "$T_TMP/answers" | uniq -d | wc -l)" = 0 ] ||
		{ ok_agree=0; diag "round $r: processes disagree:" "$(cut -d' ' -f1 "$T_TMP/answers" | uniq -d | head -3)"; }
	[ "$(cut -d' ' -f2 "$T_TMP/answers" | sort | uniq -d | wc -l)" = 0 ] ||
		{ ok_distinct=0; diag "round $r: two domains share an id (a slice)"; }
	# the State-File: each domain once, no slice twice, and the slice the answers used
	grep -v '^#' "$T_TMP/slices" | sort >"$T_TMP/file"
	want=$(awk '{ sub(/-500$/, "", $1); print $1, int(($2 - 100000) / 1000) }' "$T_TMP/answers" | sort)
	[ "$want" = "$(cat "$T_TMP/file")" ] || { ok_file=0; diag "round $r: State-File differs from the answers"; }
done
check_eq "every process mapped all $D domains, $ROUNDS rounds" 1 "$ok_all"
check_eq "no process failed" 1 "$ok_rc"
check_eq "$P processes at once: each domain got one id from all of them" 1 "$ok_agree"
check_eq "... no two domains share a slice" 1 "$ok_distinct"
check_eq "... and the State-File holds each domain once, in the slice used" 1 "$ok_file"
