# Sourced by the kernel tests (tests/kernel/*.ktest) inside the guest: the TAP helpers of
# tests/harness/lib.sh plus what the guest offers.  The project is installed in the guest's
# root (make install copied in by guest-init), so its programs are found on PATH and its
# configuration is the installed one ($KT_SYSCONF/nfskeys.conf).
# shellcheck shell=sh
. "$top_srcdir/tests/harness/lib.sh"

KT_RESULTS=${KT_RESULTS:-/nfskeys-results}
# each result's guest uptime, in tap-times of the results (where the time goes)
T_TAP_TIMES=$KT_RESULTS/tap-times
# the programs as installed (not the build tree's libtool wrappers); prefix, sysconfdir,
# sbindir, pkgdatadir come from the host (vm-run writes them to $KT_RESULTS/env)
. "$KT_RESULTS/env"
NFSKEYS="$bindir/nfskeys"
KT_SYSCONF="$sysconfdir/nfskeys"

# The log of a daemon or helper, kept in the results share (the host prints these when the
# test fails).
kt_log() { echo "$KT_RESULTS/$1.log"; }

# kt_add_user NAME UID GID [GROUP]: a user (and its primary group) in the guest's files;
# fails when the name or the id is taken (the host's files are the guest's).
kt_add_group() {
	getent group "$1" >/dev/null || getent group "$2" >/dev/null && return 1
	echo "$1:x:$2:" >>/etc/group
}
kt_add_user() {
	kt_add_group "${4:-$1}" "$3" || return 1
	getent passwd "$1" >/dev/null || getent passwd "$2" >/dev/null && return 1
	echo "$1:x:$2:$3::/tmp:/bin/sh" >>/etc/passwd
}

# kt_as UID GID CMD...: run CMD with those ids and no supplementary groups.
kt_as() {
	_u=$1 _g=$2; shift 2
	setpriv --reuid "$_u" --regid "$_g" --clear-groups "$@"
}

# kt_proc_key TYPE DESC: the /proc/keys line of the key of that type and description
# (fields: serial flags usage expiry perm uid gid type description[: payload size]; the
# kernel prints the type in 9 columns: "id_resolv").
kt_proc_key() {
	awk -v t="$1" -v d="$2" '$8 == substr(t, 1, 9) && ($9 == d ":" || $9 == d)' /proc/keys
}

# kt_expiry_secs EXP: /proc/keys' expiry column (perm, 59s, 24m, 3h, 2d, 1w) in seconds
# (the upper end of what it can mean); "perm" gives -1.
kt_expiry_secs() {
	case $1 in
	perm) echo -1 ;;
	*s) echo "${1%s}" ;;
	*m) echo $((${1%m} * 60 + 59)) ;;
	*h) echo $((${1%h} * 3600 + 3599)) ;;
	*d) echo $((${1%d} * 86400 + 86399)) ;;
	*w) echo $((${1%w} * 604800 + 604799)) ;;
	*) echo 0 ;;
	esac
}
# kt_expiry_lower EXP: the lower end.
kt_expiry_lower() {
	case $1 in
	perm) echo -1 ;;
	*s) echo "${1%s}" ;;
	*m) echo $((${1%m} * 60)) ;;
	*h) echo $((${1%h} * 3600)) ;;
	*d) echo $((${1%d} * 86400)) ;;
	*w) echo $((${1%w} * 604800)) ;;
	*) echo 0 ;;
	esac
}
