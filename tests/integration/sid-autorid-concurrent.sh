#!/bin/sh
# Several processes assigning autorid ranges at once through the sid backend's locked
# State-File ([SID] Algorithm = autorid): 8 processes, started together, each map the same
# 24 domains, RID 500 (the domain's range) and RID 25000 (its range "DOMAIN#2"), each
# process in its own order.  Every process must give each SID the same id, no two ranges
# may share a number, the numbers must be 1 to 48 with none left out (winbind hands them
# out one after another), and the State-File must hold each range once, with the number
# the answers used.
. "$top_srcdir/tests/harness/lib.sh"
[ -f "$NFSKEYS_PLUGIN_DIR/idmap-sid.so" ] || skip_all "the sid backend plugin was not built"
plan 5

NFSKEYS_BIN=$NFSKEYS
[ -x "$top_builddir/tools/.libs/nfskeys" ] && NFSKEYS_BIN="$top_builddir/tools/.libs/nfskeys"
export LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cat >"$T_TMP/nfskeys.conf" <<CONF
[General]
Domain = sid.test
[Translation]
Method = sid
[SID]
Algorithm = autorid
State-File = $T_TMP/ranges
Range-Min = 100000
Range-Max = 1099999
Range-Size = 10000
CONF
P=8 D=24 ROUNDS=3
ok_agree=1 ok_distinct=1 ok_file=1 ok_all=1 ok_rc=1
r=0
while [ $r -lt $ROUNDS ]; do
	r=$((r + 1))
	rm -f "$T_TMP/ranges" "$T_TMP"/out.* "$T_TMP/go"
	p=0
	while [ $p -lt $P ]; do
		p=$((p + 1))
		# each process its own order of the SIDs (rotated by p)
		sids=$(awk -v d=$D -v p=$p -v r=$r 'BEGIN { for (i = 0; i < 2 * d; i++) {
			j = (i + p * 7) % (2 * d)
			printf "S-1-5-21-%d-77-%d-%d ", r, j % d + 1, j < d ? 500 : 25000 } }')
		( while [ ! -f "$T_TMP/go" ]; do :; done
		  "$NFSKEYS_BIN" -c "$T_TMP/nfskeys.conf" idmap sid $sids >"$T_TMP/out.$p" 2>&1
		  echo "rc=$?" >>"$T_TMP/out.$p" ) &
	done
	sleep 0.5; touch "$T_TMP/go"; wait
	grep -h '^rc=' "$T_TMP"/out.* | grep -qv '^rc=0$' && { ok_rc=0; diag "round $r: a process failed"; \
		grep -hv '^S-1-5' "$T_TMP"/out.* | head -5 | sed 's/^/# /'; }
	# "SID -> ID (sid, ...)": per SID the set of ids the processes gave
	cat "$T_TMP"/out.* | awk '$2 == "->" { print $1, $3 }' | sort -u >"$T_TMP/answers"
	[ "$(wc -l <"$T_TMP/answers")" -ge $((2 * D)) ] || ok_all=0
	[ "$(cut -d' ' -f1 "$T_TMP/answers" | uniq -d | wc -l)" = 0 ] ||
		{ ok_agree=0; diag "round $r: processes disagree:" "$(cut -d' ' -f1 "$T_TMP/answers" | uniq -d | head -3 | tr '\n' ' ')"; }
	# the ranges the answers used: "KEY NUMBER", KEY the domain, or DOMAIN#2
	awk '{ n = split($1, a, "-"); sub(/-[0-9]+$/, "", $1); if (a[n] == 25000) $1 = $1 "#2"
		print $1, int(($2 - 100000) / 10000) }' "$T_TMP/answers" | sort >"$T_TMP/want"
	[ "$(cut -d' ' -f2 "$T_TMP/want" | sort -n | uniq -d | wc -l)" = 0 ] &&
		[ "$(cut -d' ' -f2 "$T_TMP/want" | sort -n | tr '\n' ' ')" = "$(seq -s ' ' 1 $((2 * D))) " ] ||
		{ ok_distinct=0; diag "round $r: the range numbers are not 1 to $((2 * D)), each once:" \
			"$(cut -d' ' -f2 "$T_TMP/want" | sort -n | tr '\n' ' ')"; }
	grep '^range ' "$T_TMP/ranges" | awk '{ print $3, $2 }' | sort >"$T_TMP/file"
	cmp -s "$T_TMP/want" "$T_TMP/file" || { ok_file=0; diag "round $r: State-File differs from the answers"; }
done
check_eq "every process mapped all $((2 * D)) SIDs, $ROUNDS rounds" 1 "$ok_all"
check_eq "no process failed" 1 "$ok_rc"
check_eq "$P processes at once: each SID got one id from all of them" 1 "$ok_agree"
check_eq "... the ranges are numbered 1 to $((2 * D)), none twice, none left out" 1 "$ok_distinct"
check_eq "... and the State-File holds each range once, as the answers used it" 1 "$ok_file"
