# Sourced by the NFS kernel tests in the guest (after guest-lib.sh): knfsd exporting a
# tmpfs on the loopback with server-side id mapping, the client mount, and nfskeys'
# configuration and request-key routing.
#
# kt_nfs_setup [EXTRA-CONF-LINES...]: users alice, bob, carol (groups kbstaff, kbeng), the
#   configuration ($KT_SYSCONF/nfskeys.conf, a copy in $T_TMP), the shipped request-key.d
#   file, knfsd and the mount on $MNT; reports 5 assertions, exits on a setup failure.
# nfs_mount, client_forget (drop the client's keys and inodes), id_resolver_keyring.
#
# The server side answers its nfs4.idtoname / nfs4.nametoid channels with rpc.idmapd
# (nfs-utils), or with what the test's kt_nfs_server_idmap starts (nfskeys-idmapd in
# nfs-kernel-idmapd.ktest).  rpc.idmapd runs with -S (server only) so the client's legacy
# rpc_pipefs idmap pipe has no reader: a failing nfskeys-upcall is not papered over by
# the legacy path.
# shellcheck shell=sh
: "${DOMAIN:=kbed.test}" "${POS_TTL:=1500}" "${NOBODY_TTL:=50}"
EXPORT=/srv/nfs4
MNT=/mnt/nfs4
L=$KT_RESULTS

uid_of() { getent passwd "$1" | cut -d: -f3; }
gid_of() { getent group "$1" | cut -d: -f3; }

# the id-mapping routes of a request-key.d file (the shipped one also routes cifs.spnego,
# which enable-upcalls leaves to the admin)
idmap_routes() { grep -E '^create[[:space:]]+(id_resolver|cifs\.idmap)[[:space:]]'; }

kt_nfs_setup() {
	# --- the guest's users and groups (the overlay's /etc; client and server share them)
	kt_add_user alice 2001 3001 kbstaff &&
		kt_add_user bob 2002 3002 kbeng &&
		kt_add_user carol 2003 2003 ||
		{ not_ok "test users: a name or id is taken in /etc/passwd or /etc/group"; exit 1; }
	UNKNOWN_UID=4242 UNKNOWN_GID=4343 # in neither /etc/passwd nor /etc/group
	getent passwd $UNKNOWN_UID >/dev/null || getent group $UNKNOWN_GID >/dev/null &&
		{ not_ok "uid $UNKNOWN_UID or gid $UNKNOWN_GID is known here"; exit 1; }

	# syslog of the helpers (nfskeys-upcall logs there)
	busybox syslogd -n -O "$L/syslog.log" &
	SYSLOG_PID=$!
	t_on_exit "kill $SYSLOG_PID"

	# --- nfskeys: configuration (installed location: the helper reads it) and the routing
	mkdir -p "$KT_SYSCONF"
	cat >"$T_TMP/nfskeys.conf" <<-EOF
	[General]
	Domain = $DOMAIN
	[Translation]
	Method = nsswitch
	[Idmap]
	Positive-TTL = $POS_TTL
	[Mapping]
	Nobody-TTL = $NOBODY_TTL
	[Kernel]
	Server-Channels = no
	Client-Pipe = no
	EOF
	# (nfskeys-idmapd leaves knfsd's channels to rpc.idmapd in these tests, and the
	# client's legacy pipe unserved: see the top of this file)
	[ $# -gt 0 ] && printf '%s\n' "$@" >>"$T_TMP/nfskeys.conf"
	cp "$T_TMP/nfskeys.conf" "$KT_SYSCONF/nfskeys.conf"
	shipped="$pkgdatadir/request-key.d/nfskeys.conf"
	cp "$shipped" /etc/request-key.d/nfskeys.conf
	helpers=$(awk '!/^#/ && $2 == "id_resolver" { print $5 }' "$shipped" | sort -u)
	check_eq "the shipped request-key.d file routes id_resolver keys to the installed helper" \
		"$sbindir/nfskeys-upcall" "$helpers"
	check_eq "and 'nfskeys idmap enable-upcalls' writes the same routes" \
		"$(idmap_routes <"$shipped")" "$("$NFSKEYS" idmap enable-upcalls --print | idmap_routes)"

	# --- knfsd with server-side id mapping
	modprobe nfsd && modprobe nfsv4 || { not_ok "modprobe nfsd nfsv4"; exit 1; }
	echo N >/sys/module/nfsd/parameters/nfs4_disable_idmapping
	echo N >/sys/module/nfs/parameters/nfs4_disable_idmapping
	mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p /run/rpc_pipefs /run/rpcbind /var/lib/nfs/v4recovery "$EXPORT" "$MNT"
	mount -t rpc_pipefs sunrpc /run/rpc_pipefs
	mount -t tmpfs -o mode=1777 nfsexport "$EXPORT"
	cat >/etc/idmapd.conf <<-EOF
	[General]
	Domain = $DOMAIN
	[Mapping]
	Nobody-User = nobody
	Nobody-Group = nogroup
	EOF
	echo "$EXPORT 127.0.0.1(rw,fsid=0,no_subtree_check,no_root_squash,sync,insecure,sec=sys)" \
		>/etc/exports
	rpcbind -f >"$L/rpcbind.log" 2>&1 &
	t_on_exit "kill $!"
	t_wait_for "rpcinfo -p 127.0.0.1" 10
	# who answers knfsd's nfs4.idtoname/nametoid channels: rpc.idmapd unless the test
	# defines kt_nfs_server_idmap (nfs-kernel-idmapd.ktest starts nfskeys-idmapd there)
	if command -v kt_nfs_server_idmap >/dev/null 2>&1; then
		kt_nfs_server_idmap
	else
		rpc.idmapd -f -S -vvv -p /run/rpc_pipefs >"$L/rpc.idmapd.log" 2>&1 &
		t_on_exit "kill $!"
	fi
	exportfs -ra
	rpc.mountd -F -N 2 -N 3 >"$L/rpc.mountd.log" 2>&1 &
	t_on_exit "kill $!"
	rpc.nfsd -L 10 -G 10 -N 3 8 >"$L/rpc.nfsd.log" 2>&1
	t_on_exit "rpc.nfsd 0"
	check "knfsd answers NFSv4 on 127.0.0.1" t_wait_for "rpcinfo -t 127.0.0.1 nfs 4" 20

	if nfs_mount; then
		ok "mount -t nfs4 -o vers=4.2 127.0.0.1:/"
	else
		not_ok "mount -t nfs4 -o vers=4.2 127.0.0.1:/"; sed 's/^/# /' "$T_TMP/mount.err"
		exit 1
	fi
	t_on_exit "umount -f $MNT"
	p=/sys/module
	check_eq "the client and the server map ids (nfs/nfsd.nfs4_disable_idmapping=N)" "N N" \
		"$(cat $p/nfs/parameters/nfs4_disable_idmapping $p/nfsd/parameters/nfs4_disable_idmapping | xargs)"

	# The grace period (10 s) delays the first create; wait it out once.
	t_wait_for "touch $MNT/.grace-done" 30
	rm -f "$MNT/.grace-done"
}

nfs_mount() {
	mount -t nfs4 -o vers=4.2,sec=sys,actimeo=0 127.0.0.1:/ "$MNT" 2>"$T_TMP/mount.err"
}

id_resolver_keyring() { kt_proc_key keyring .id_resolver | awk '{ print $1 }'; }
# Forget every mapping the client has: its keys and its inodes (a fresh mount).
client_forget() {
	umount "$MNT" 2>/dev/null
	k=$(id_resolver_keyring)
	[ -n "$k" ] && keyctl clear $((0x$k))
	nfs_mount
}
