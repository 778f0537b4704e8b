#!/bin/sh
# wbsim: usage errors, determinism (same seed -> identical table and CSV, another seed ->
# different series), and a short run of all three policies asserting the targets that
# nfskeys meets (p99 pause on NFS bursts and stalls, fairness and utilization on equal
# writers, overshoot) plus each baseline's own invariants.
. "$top_srcdir/tests/harness/lib.sh"
plan 17

WBSIM="$top_builddir/tools/wbsim"

"$WBSIM" --help >"$T_TMP/help" 2>&1
check_contains "--help shows usage" "Usage: wbsim" "$(cat "$T_TMP/help")"
"$WBSIM" --scenario nosuch >/dev/null 2>"$T_TMP/err"; rc=$?
check_eq "unknown scenario is a usage error (2)" "2" "$rc"
check_contains "unknown scenario named" "unknown scenario 'nosuch'" "$(cat "$T_TMP/err")"
"$WBSIM" --seed 12x >/dev/null 2>"$T_TMP/err"; rc=$?
check_eq "bad seed is a usage error" "2" "$rc"

check_eq "--version" "wbsim $(sed -n 's/^AC_INIT(\[nfskeys\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")" "$("$WBSIM" --version)"
"$WBSIM" --plot png >/dev/null 2>"$T_TMP/err"; rc=$?
check_eq "--plot without --csv is a usage error" "2" "$rc"
"$WBSIM" --policy kara2011,lifo >/dev/null 2>"$T_TMP/err"; rc=$?
check_contains "unknown policy named" "unknown policy 'lifo'" "$(cat "$T_TMP/err")"

# determinism
S="equal-10,nfs-burst,stall"
"$WBSIM" -s "$S" --seed 7 --csv "$T_TMP/a" >"$T_TMP/a.txt" || not_ok "run a"
"$WBSIM" -s "$S" --seed 7 --csv "$T_TMP/b" >"$T_TMP/b.txt" || not_ok "run b"
"$WBSIM" -s "$S" --seed 8 --csv "$T_TMP/c" >"$T_TMP/c.txt" || not_ok "run c"
check "same seed: identical table" cmp "$T_TMP/a.txt" "$T_TMP/b.txt"
check "same seed: identical CSV series" diff -r "$T_TMP/a" "$T_TMP/b"
if cmp -s "$T_TMP/a/nfs-burst-nfskeys.csv" "$T_TMP/c/nfs-burst-nfskeys.csv"; then
	not_ok "another seed: different NFS series"
else
	ok "another seed: different NFS series"
fi
n=$(wc -l <"$T_TMP/a/stall-nfskeys.csv")
check_eq "CSV has a row per 10 ms (12 s + header)" "1202" "$n"

# metric: field N of the row for scenario $1, policy $2 in table $3
field() { awk -v s="$1" -v p="$2" -v f="$3" '$1 == s && $2 == p { print $f }' "$4"; }
# le A B / ge A B: both must be numbers (a missing row gives "", which awk would compare
# as a string and let pass every bound)
num='^-?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$'
le() { awk -v a="$1" -v b="$2" -v n="$num" 'BEGIN { exit !(a ~ n && b ~ n && a + 0 <= b + 0) }'; }
ge() { awk -v a="$1" -v b="$2" -v n="$num" 'BEGIN { exit !(a ~ n && b ~ n && a + 0 >= b + 0) }'; }

"$WBSIM" --quick --check >"$T_TMP/q.txt"; rc=$?
sed 's/^/# /' "$T_TMP/q.txt"
check_eq "quick run: all nfskeys targets met (exit 0)" "0" "$rc"

ok_all=1
for s in nfs-burst stall; do
	k=$(field $s kara2011 4 "$T_TMP/q.txt"); w=$(field $s wu2011 4 "$T_TMP/q.txt")
	n=$(field $s nfskeys 4 "$T_TMP/q.txt")
	best=$(awk -v a="$k" -v b="$w" 'BEGIN { print (a < b ? a : b) / 5 }')
	le "$n" "$best" && le "$n" 50 || { ok_all=0; diag "$s: nfskeys p99 $n, 1/5 best $best"; }
done
check_eq "nfskeys p99 <= 1/5 of the better baseline and <= 50 ms (NFS, stall)" 1 "$ok_all"

ok_all=1
for p in kara2011 wu2011 nfskeys; do
	j=$(field equal-10 $p 7 "$T_TMP/q.txt"); u=$(field equal-10 $p 8 "$T_TMP/q.txt")
	ge "$j" 0.99 && ge "$u" 98 || { ok_all=0; diag "$p: jain $j util $u"; }
done
check_eq "equal writers: Jain >= 0.99 and utilization >= 98% (all policies)" 1 "$ok_all"

ok_all=1
for s in equal-1 equal-10 nfs-burst stall; do
	o=$(field $s nfskeys 9 "$T_TMP/q.txt")
	le "$o" 2 || { ok_all=0; diag "$s: overshoot $o%"; }
done
check_eq "nfskeys overshoot <= 2% of the limit" 1 "$ok_all"

# the baselines' own invariants: wu2011 sleeps at most 200 ms at a time (equal writers
# never loop), kara2011 waits at most one 100 ms period while completions flow
m=$(field equal-10 wu2011 5 "$T_TMP/q.txt")
le "$m" 200 && ok "wu2011 pause <= MAX_PAUSE 200 ms (equal-10: $m)" || not_ok "wu2011 pause cap: $m"
m=$(field nfs-burst kara2011 5 "$T_TMP/q.txt")
le "$m" 100.5 && ok "kara2011 waits <= one 100 ms period (nfs-burst: $m)" || not_ok "kara2011 period: $m"
