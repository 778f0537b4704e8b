# Helpers for the fault, limit and security tests (source after lib.sh).
# t_real_bin PROG: the binary libtool keeps in .libs (its wrapper script costs ~0.4 s per
#   run on a loaded machine; LD_LIBRARY_PATH is set for it here); else PROG itself.
# t_ms_since START_NS: milliseconds since START_NS (from date +%s%N).
# A fault-injecting TCP proxy (tests/harness/tcp-proxy.py) in front of a real server:
#   t_proxy_start TARGET_PORT   start it on a free 127.0.0.1 port; sets PROXY_PORT,
#                               PROXY_PID; stopped at exit
#   t_proxy_mode MODE           forward | delay MS | hang | refuse (new connections, and the
#                               next chunk on open ones) | hold-match TEXT (a request
#                               holding TEXT stalls its connection until the mode changes)
#   t_proxy_stop                stop it (the port then refuses connections)
#   t_proxy_count EVENT         how many EVENT lines ("accept hang", "delayed", "refused",
#                               "held-match"; tcp-proxy.py) the proxy wrote since the last
#                               t_proxy_mode: that a fault was in the path, without a clock
#   t_proxy_most_held           the most chunks the proxy held at once in delay mode since
#                               the last t_proxy_mode (requests in flight together)
# t_upcall_wrapper FILE: write FILE, a request-key helper running the built nfskeys-upcall
#   with $IDMAPD_CONF and the build's plugins, its stderr appended to $T_TMP/helper.err.
PROXY_PID=
PROXY_PORT=
LD_LIBRARY_PATH="$top_builddir/libnfskeys/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH

t_proxy_start() {
	_pf="$T_TMP/proxy.port"
	rm -f "$_pf"
	echo forward >"$T_TMP/proxy.mode"
	python3 "$top_srcdir/tests/harness/tcp-proxy.py" 127.0.0.1 "$1" "$T_TMP/proxy.mode" "$_pf" \
		>"$T_TMP/proxy.log" 2>&1 &
	PROXY_PID=$!
	t_on_exit t_proxy_stop
	t_wait_for "[ -s '$_pf' ]" 10 || return 1
	PROXY_PORT=$(cat "$_pf")
}

t_proxy_mode() {
	wc -l <"$T_TMP/proxy.log" >"$T_TMP/proxy.mark"
	echo "$*" >"$T_TMP/proxy.mode"
}

t_proxy_count() {
	tail -n +$(($(cat "$T_TMP/proxy.mark" 2>/dev/null || echo 0) + 1)) "$T_TMP/proxy.log" |
		grep -c "^$1\( [0-9]*\)\{0,1\}\$"
}

t_proxy_most_held() {
	tail -n +$(($(cat "$T_TMP/proxy.mark" 2>/dev/null || echo 0) + 1)) "$T_TMP/proxy.log" |
		awk '$1 == "delayed" && $2 > m { m = $2 } END { print m + 0 }'
}

t_proxy_stop() {
	[ -n "$PROXY_PID" ] || return 0
	kill "$PROXY_PID" 2>/dev/null
	wait "$PROXY_PID" 2>/dev/null
	PROXY_PID=
}

t_ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

t_real_bin() {
	_d=$(dirname "$1")
	if [ -x "$_d/.libs/$(basename "$1")" ] && [ -f "$_d/.libs/$(basename "$1")" ]; then
		echo "$_d/.libs/$(basename "$1")"
	else
		echo "$1"
	fi
}
NFSKEYS=$(t_real_bin "$NFSKEYS")

t_upcall_wrapper() {
	cat >"$1" <<SH || return 1
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
LD_LIBRARY_PATH='$top_builddir/libnfskeys/.libs'; export LD_LIBRARY_PATH
exec '$(t_real_bin "$top_builddir/tools/upcall/nfskeys-upcall")' -c '$IDMAPD_CONF' "\$@" 2>>'$T_TMP/helper.err'
SH
	chmod 755 "$1" && : >>"$T_TMP/helper.err"
}

# t_attrd_wait LOG [N] and the rest of the attrd helpers: tests/harness/attrd.sh
. "$top_srcdir/tests/harness/attrd.sh"
