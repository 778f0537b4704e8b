# The kernel's per-user key quota as /proc/key-users shows it, for the key-quota test
# (tests/integration/cred-cifs-quota.sh) and bench/key-quota.sh.  Plain sh with no other
# harness: the functions also run inside the throwaway uid's processes (sourced there).
#   ku_get UID       "KEYS BYTES MAXKEYS MAXBYTES" charged to UID (the line "UID: USAGE
#                    NKEYS/NIKEYS QNKEYS/MAXKEYS QNBYTES/MAXBYTES"); a uid without keys has
#                    no line: "0 0" and the sysctls kernel.keys.maxkeys and maxbytes
#   ku_settled UID   the same once two reads 0.2 s apart agree (at most 10 s): the keyrings
#                    of an exited process stay charged until the kernel's key garbage
#                    collector has run
#   ku_need_tools    (a test, after harness/lib.sh) skip_all unless root with setpriv,
#                    keyctl and /proc/key-users: what acting as a throwaway uid needs
ku_get() {
	awk -v u="$1:" -v mk="$(cat /proc/sys/kernel/keys/maxkeys)" \
		-v mb="$(cat /proc/sys/kernel/keys/maxbytes)" '$1 == u { split($4, k, "/");
		split($5, b, "/"); print k[1], b[1], k[2], b[2]; f = 1 }
		END { if (!f) print 0, 0, mk, mb }' /proc/key-users
}

ku_settled() {
	_ku_prev=$(ku_get "$1")
	_ku_i=0
	while [ $_ku_i -lt 50 ]; do
		sleep 0.2
		_ku_cur=$(ku_get "$1")
		[ "$_ku_cur" = "$_ku_prev" ] && break
		_ku_prev=$_ku_cur
		_ku_i=$((_ku_i + 1))
	done
	echo "$_ku_prev"
}

ku_need_tools() {
	[ "$(id -u)" = 0 ] || skip_all "needs root (another uid)"
	command -v setpriv >/dev/null || skip_all "setpriv not installed (util-linux)"
	command -v keyctl >/dev/null || skip_all "keyctl not installed (keyutils)"
	[ -r /proc/key-users ] || skip_all "no /proc/key-users"
}
