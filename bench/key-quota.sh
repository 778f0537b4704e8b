#!/bin/sh
# How many containers sharing one uid fit in the kernel's per-user key quota
# (kernel.keys.maxkeys / maxbytes, charged per uid: /proc/key-users), and what each costs.
# A container here is a process of a throwaway uid in a session keyring of its own
# (keyctl session -) that does what its mount needs from us, then stays, holding its keys:
# a CIFS credential (cifs add for 192.0.2.10) and, with a KDC (tests/harness/kdc.sh), a
# Kerberos ticket in KEYRING:persistent:UID.  Side by side: nfskeys (cifs add, nfs login)
# and cifs-utils/krb5 (cifscreds add, kinit).  Three setups:
#   shared       every container in the initial user namespace
#   userns       a user namespace per container, made by the uid itself (rootless)
#   userns-root  a user namespace per container made by root, mapping 0 and the uid
# Containers are started one after the other (each once the quota has settled: an exited
# process's keyrings stay charged until the key garbage collector runs) until one fails,
# or KEYQUOTA_MAX (default 250) run.  Root only; the quota sysctls are left as they are.
# Settings: KEYQUOTA_SETUPS, KEYQUOTA_TOOLS (nfskeys cifs-utils), KEYQUOTA_KRB5=no.
: "${top_srcdir:?}" "${top_builddir:?}"
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/keyusers.sh"
TAP_PLANNED=0 # not a test: no TAP plan at exit
[ "$(id -u)" = 0 ] || { echo "key-quota: needs root (a throwaway uid)"; exit 0; }
for t in setpriv unshare keyctl setsid; do
	command -v $t >/dev/null || { echo "key-quota: $t not installed"; exit 0; }
done
MAX=${KEYQUOTA_MAX:-250}
SETUPS=${KEYQUOTA_SETUPS:-shared userns userns-root}
TOOLS=${KEYQUOTA_TOOLS:-nfskeys cifs-utils}
# a fresh uid for each row, so that no row inherits what another left (the user keyrings
# of the initial namespace live as long as the namespace)
Q0=$((3600000 + $$ % 100000 * 10))
new_uid() {
	Q=$((Q0 + $1))
	AS_Q="setpriv --reuid=$Q --regid=$Q --clear-groups"
	chown "$Q:$Q" "$T_TMP/q"
}
chmod 755 "$T_TMP"
mkdir "$T_TMP/q"
new_uid 0
cp "$top_srcdir/tests/harness/keyusers.sh" "$T_TMP/"
if [ -f "$top_builddir/tests/other-uid.env" ]; then
	t_ou_load
	NK=$(t_ou nfskeys)
else # the build tree itself (readable by the uid, or the runs fail saying so)
	T_OU_ENV="env LD_LIBRARY_PATH=$top_builddir/libnfskeys/.libs NFSKEYS_PLUGIN_DIR=$top_builddir/plugins/.libs"
	NK=$top_builddir/tools/nfskeys/.libs/nfskeys
fi
KRB=
if [ "${KEYQUOTA_KRB5:-yes}" = yes ] && command -v krb5kdc >/dev/null 2>&1 &&
	command -v kinit >/dev/null 2>&1; then
	. "$top_srcdir/tests/harness/kdc.sh"
	kdc_start
	kdc_addprinc alice 'alice-Pw-7'
	chmod -R a+rX "$KDC_DIR"
	unset KRB5CCNAME
	KRB=yes
fi

# cont.sh TOOLS N: as uid Q in the container's session keyring: what its mount needs, the
# outcome on q/N, then hold the keys until killed.
cat >"$T_TMP/cont.sh" <<'EOS'
tools=$1 st=${0%/*}/q/$2 nk=$3 krb=$4
fail() { echo "fail: $1: $(tail -n1 "$st.err")" >"$st"; exit 1; }
# cifscreds says "error: Add credential key for ...: Disk quota exceeded" and exits 0
# (cifs-utils 7.0): the key itself is looked for
has_key() { keyctl search @s logon cifs:a:192.0.2.10 >/dev/null 2>&1; }
if [ "$tools" = nfskeys ]; then
	printf 'Pw-9\n' | setsid -w $nk cifs add -u alice 192.0.2.10 >"$st.err" 2>&1 && has_key ||
		fail "cifs add"
	[ -z "$krb" ] || printf 'alice-Pw-7\n' | setsid -w $nk nfs login -p alice >"$st.err" 2>&1 ||
		fail "nfs login"
else
	printf 'Pw-9\n' | setsid -w cifscreds add -u alice 192.0.2.10 >"$st.err" 2>&1 && has_key ||
		fail cifscreds
	[ -z "$krb" ] || printf 'alice-Pw-7\n' | setsid -w kinit -c "KEYRING:persistent:$(id -u)" \
		alice >"$st.err" 2>&1 || fail kinit
fi
echo ok >"$st"
exec sleep 100000
EOS
chmod 644 "$T_TMP/cont.sh"

PIDS=
t_on_exit 'for p in $PIDS; do kill $p; done'
# start SETUP TOOLS N: container N in the background, its pid added to PIDS
start() {
	_c="keyctl session - $T_OU_ENV sh $T_TMP/cont.sh $2 $3 $NK $KRB"
	case $1 in
	shared) $AS_Q $_c >/dev/null 2>&1 & ;;
	userns) $AS_Q unshare --user --map-current-user $_c >/dev/null 2>&1 & ;;
	userns-root)
		# the map is written from outside before the shell execs setpriv (as root of
		# the new namespace, which the map makes it)
		mkfifo "$T_TMP/q/map$3"
		unshare --user sh -c 'read _ <"$0"; exec "$@"' "$T_TMP/q/map$3" $AS_Q $_c \
			>/dev/null 2>&1 &
		_p=$!
		t_wait_for "[ \"\$(readlink /proc/$_p/ns/user)\" != \"$(readlink /proc/self/ns/user)\" ]" 10
		printf '0 0 1\n%s %s 1\n' $Q $Q >/proc/$_p/uid_map
		printf '0 0 1\n%s %s 1\n' $Q $Q >/proc/$_p/gid_map
		echo go >"$T_TMP/q/map$3"
		;;
	esac
	PIDS="$PIDS $!"
}

# the Kerberos caches in the initial namespace's persistent keyring outlive the sessions
# (a persistent keyring expires 3 days after its last use): cleared after each run
clear_persistent() {
	$AS_Q keyctl session - sh -c 'keyctl clear $(keyctl get_persistent @s)' >/dev/null 2>&1
}
t_on_exit clear_persistent

stop_all() {
	for p in $PIDS; do kill $p 2>/dev/null; done
	for p in $PIDS; do wait $p 2>/dev/null; done
	PIDS=
	clear_persistent
	t_wait_for '[ "$(ku_get $Q | cut -d" " -f1)" -le 2 ]' 60
}

# run SETUP TOOLS: one row of the table
run() {
	set -- "$1" "$2" $(ku_settled $Q)
	_k0=$3 _b0=$4 _mk=$5 _mb=$6 _n=0 _why="KEYQUOTA_MAX"
	rm -f "$T_TMP"/q/[0-9]* "$T_TMP"/q/map*
	while [ $_n -lt "$MAX" ]; do
		start "$1" "$2" $((_n + 1))
		t_wait_for "test -s $T_TMP/q/$((_n + 1))" 60
		if [ "$(cat "$T_TMP/q/$((_n + 1))" 2>/dev/null)" != ok ]; then
			_why=$(cat "$T_TMP/q/$((_n + 1))" 2>/dev/null || echo "no answer")
			break
		fi
		_n=$((_n + 1))
		set -- "$1" "$2" $(ku_settled $Q)
		[ $_n = 1 ] && _k1=$3 _b1=$4
	done
	set -- "$1" "$2" $(ku_settled $Q)
	if [ $_n -ge 2 ]; then
		_each="$(((($3 - _k1) * 100 / (_n - 1) + 50) / 100)) / $((($4 - _b1) / (_n - 1)))"
	else
		_each="-"
	fi
	printf '| %s | %s | %s | %s / %s | %s | %s / %s of %s / %s | %s |\n' "$1" "$2" "$_n" \
		"$((${_k1:-$_k0} - _k0))" "$((${_b1:-$_b0} - _b0))" "$_each" "$3" "$4" "$_mk" \
		"$_mb" "$(echo "$_why" | sed 's/Password: //; s/  */ /g' | cut -c1-110)"
	stop_all
	_k1= _b1=
}

echo "key-quota: uids $Q0 and on, $(uname -r), maxkeys $(cat /proc/sys/kernel/keys/maxkeys)," \
	"maxbytes $(cat /proc/sys/kernel/keys/maxbytes); per container: cifs add${KRB:+ + a Kerberos login}"
echo "| setup | tools | containers | first: keys / bytes | each further: keys / bytes | at the end: keys / bytes of max | stopped by |"
echo "|---|---|---|---|---|---|---|"
row=0
for s in $SETUPS; do
	for t in $TOOLS; do
		[ "$t" = cifs-utils ] && ! command -v cifscreds >/dev/null 2>&1 && continue
		row=$((row + 1))
		new_uid $row
		run "$s" "$t"
	done
done
