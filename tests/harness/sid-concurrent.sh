# Several nfskeys processes assigning the sid backend's slices or ranges at once through
# its locked State-File (source after lib.sh).
#
#   t_sid_concurrent SID-SETTINGS P ROUNDS N DISTINCT FILE
#       plan 5 (or skip_all without the sid plugin).  The configuration: Method = sid,
#       the lines of SID-SETTINGS in [SID], and State-File = $SC_STATE there.  ROUNDS
#       rounds; in each, SC_STATE is removed and P processes, released together, run
#       `nfskeys idmap sid` on the SIDs `sc_sids p r` prints (p 1..P, r the
#       round), each its own order.  Five checks then, over all rounds: every process
#       answered N SIDs at least, none failed, all gave each SID the same id, `sc_distinct`
#       held (described by DISTINCT), and `sc_state_want` (what the State-File should hold,
#       from the answers) printed what `sc_state_got` (what it holds) did (described by
#       FILE).  The test defines these four functions; the answers, "SID ID" lines, one
#       per SID and id given, sorted, are in $T_TMP/answers when they run.

# the nfskeys binary itself rather than libtool's wrapper script, when there is one: the
# wrapper's own start would spread the processes' starts apart
_sid_concurrent_bin() {
	SC_BIN=$NFSKEYS
	[ -x "$top_builddir/tools/nfskeys/.libs/nfskeys" ] &&
		SC_BIN="$top_builddir/tools/nfskeys/.libs/nfskeys"
	export LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

SC_STATE="$T_TMP/state"

t_sid_concurrent() {
	_p=$2 _rounds=$3 _n=$4 _ddesc=$5 _fdesc=$6
	[ -f "$NFSKEYS_PLUGIN_DIR/idmap-sid.so" ] || skip_all "the sid backend plugin was not built"
	plan 5
	_conf="$T_TMP/nfskeys.conf" _state=$SC_STATE
	printf '[General]\nDomain = sid.test\n[Translation]\nMethod = sid\n' >"$_conf"
	printf '[SID]\n%s\nState-File = %s\n' "$1" "$SC_STATE" >>"$_conf"
	_sid_concurrent_bin
	_agree=1 _distinct=1 _file=1 _all=1 _rc=1
	_r=0
	while [ $_r -lt "$_rounds" ]; do
		_r=$((_r + 1))
		rm -f "$_state" "$T_TMP"/out.* "$T_TMP/go"
		_q=0
		while [ $_q -lt "$_p" ]; do
			_q=$((_q + 1))
			_sids=$(sc_sids $_q $_r)
			# shellcheck disable=SC2086
			( while [ ! -f "$T_TMP/go" ]; do :; done
			  "$SC_BIN" -c "$_conf" idmap sid -L $_sids >"$T_TMP/out.$_q" 2>&1
			  echo "rc=$?" >>"$T_TMP/out.$_q" ) &
		done
		sleep 0.5
		touch "$T_TMP/go"
		wait
		if grep -h '^rc=' "$T_TMP"/out.* | grep -qv '^rc=0$'; then
			_rc=0
			diag "round $_r: a process failed"
			grep -hv '^S-1-5' "$T_TMP"/out.* | head -5 | sed 's/^/# /'
		fi
		# "SID -> ID (sid, ...)": per SID the set of ids the processes gave
		cat "$T_TMP"/out.* | awk '$2 == "->" { print $1, $3 }' | sort -u >"$T_TMP/answers"
		[ "$(wc -l <"$T_TMP/answers")" -ge "$_n" ] || _all=0
		_dup=$(cut -d' ' -f1 "$T_TMP/answers" | uniq -d)
		[ -z "$_dup" ] ||
			{ _agree=0; diag "round $_r: processes disagree:" "$(echo "$_dup" | head -3)"; }
		sc_distinct || { _distinct=0; diag "round $_r: not distinct"; }
		[ "$(sc_state_want)" = "$(sc_state_got)" ] ||
			{ _file=0; diag "round $_r: State-File differs from the answers"; }
	done
	check_eq "every process mapped all $_n SIDs, $_rounds rounds" 1 "$_all"
	check_eq "no process failed" 1 "$_rc"
	check_eq "$_p processes at once: each SID got one id from all of them" 1 "$_agree"
	check_eq "... $_ddesc" 1 "$_distinct"
	check_eq "... and the State-File $_fdesc" 1 "$_file"
}
