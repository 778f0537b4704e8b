# Sourced by the kernel tests of NFS clients in other network namespaces ("containers"),
# after nfs-lib.sh's kt_nfs_setup (knfsd on the guest's init network namespace).
#
# Each namespace NAME has a number N (1..250): a veth pair kbhN (init netns, 10.77.N.1/24)
# and kbcN (NAME's netns, 10.77.N.2/24), and a holder process: a `sleep` whose mount, UTS
# (host name kbct-NAME, so each NFS client has a client id of its own: two clients with one
# id on one server would steal each other's lease) and network namespaces are NAME's.
# Commands run there with nsenter (ns_exec, as the guest's root; ns_exec_user, as the root
# of the namespace's user namespace).  Its NFS mount (server 10.77.N.1, the export of
# nfs-lib.sh) is on /mnt/kbct-NAME in its own mount namespace only.
#
# ns_add_named NAME N        `ip netns add NAME` (bound at /run/netns/NAME, owned by the
#                            initial user namespace), the holder started by ip netns exec
# ns_add_unshare NAME N      `unshare --net --mount --uts`: a netns held by its process only
# ns_add_userns NAME N MAP   `unshare --user --net --mount --uts`, the holder's uid_map and
#                            gid_map written from here with MAP ("0 100000 65536"): the
#                            network namespace belongs to that user namespace
# ns_pid NAME, ns_net NAME   the holder's pid; its netns as net:[INODE]
# ns_mount NAME              mount -t nfs4 -o vers=4.2 10.77.N.1:/ /mnt/kbct-NAME in NAME
# ns_del NAME                unmount, stop the holder, ip netns del (named ones)
# kt_netns_export            export $EXPORT to 10.77.0.0/16 as nfs-lib.sh does to 127.0.0.1
# kt_no_id_resolver_route    no request-key route for id_resolver (1 assertion): the NFS
#                            client then asks the rpc_pipefs idmap pipe of its own netns
# shellcheck shell=sh
NS_DIR=$T_TMP/netns
NS_MOUNT_OPTS=vers=4.2,sec=sys,actimeo=0

ns_state() { cat "$NS_DIR/$1/$2" 2>/dev/null; }
ns_pid() { ns_state "$1" pid; }
ns_num() { ns_state "$1" n; }
ns_net() { readlink "/proc/$(ns_pid "$1")/ns/net"; }
ns_server() { echo "10.77.$(ns_num "$1").1"; }
ns_mnt() { echo "/mnt/kbct-$1"; }
ns_exec() {
	_p=$(ns_pid "$1")
	shift
	nsenter -t "$_p" -m -n -u "$@"
}
ns_exec_user() {
	_p=$(ns_pid "$1")
	shift
	nsenter -t "$_p" -U -m -n -u "$@"
}

kt_netns_export() {
	exportfs -o rw,fsid=0,no_subtree_check,no_root_squash,sync,insecure,sec=sys \
		"10.77.0.0/16:$EXPORT"
}

kt_no_id_resolver_route() {
	for f in /etc/request-key.d/*.conf /etc/request-key.conf; do
		[ -f "$f" ] && sed -i '/^[[:space:]]*create[[:space:]][[:space:]]*id_resolver/d' "$f"
	done
	check_eq "no request-key route for id_resolver is left" "" \
		"$(cat /etc/request-key.conf /etc/request-key.d/*.conf 2>/dev/null |
			grep -E '^[[:space:]]*create[[:space:]]+id_resolver')"
}

# ns_record NAME N PID KIND: remember the holder, wait until it is in its namespaces
ns_record() {
	mkdir -p "$NS_DIR/$1" "$(ns_mnt "$1")" &&
		echo "$2" >"$NS_DIR/$1/n" && echo "$3" >"$NS_DIR/$1/pid" && echo "$4" >"$NS_DIR/$1/kind"
	t_on_exit "kill -9 $3"
	# the holder is in place once it runs sleep (ip netns exec and unshare exec it)
	t_wait_for "grep -qx sleep /proc/$3/comm" 20
}

# ns_veth NAME: the pair, its addresses, the links up
ns_veth() {
	_n=$(ns_num "$1")
	ip link add "kbh$_n" type veth peer name "kbc$_n" &&
		ip link set "kbc$_n" netns "$(ns_pid "$1")" &&
		ip addr add "10.77.$_n.1/24" dev "kbh$_n" &&
		ip link set "kbh$_n" up &&
		ns_exec "$1" sh -c "ip link set lo up && ip addr add 10.77.$_n.2/24 dev kbc$_n &&
			ip link set kbc$_n up" &&
		t_wait_for "ns_exec $1 busybox ping -c 1 -W 1 10.77.$_n.1" 20
}

ns_add_named() {
	ip netns add "$1" || return 1
	ip netns exec "$1" unshare --uts sleep 1000000 &
	ns_record "$1" "$2" $! named && ns_exec "$1" hostname "kbct-$1" && ns_veth "$1"
}

ns_add_unshare() {
	unshare --net --mount --uts --propagation private sleep 1000000 &
	ns_record "$1" "$2" $! unshare && ns_exec "$1" hostname "kbct-$1" && ns_veth "$1"
}

ns_add_userns() {
	unshare --user --net --mount --uts --propagation private sleep 1000000 &
	ns_record "$1" "$2" $! userns || return 1
	_p=$(ns_pid "$1")
	echo "$3" >"/proc/$_p/uid_map" && echo "$3" >"/proc/$_p/gid_map" &&
		ns_exec "$1" hostname "kbct-$1" && ns_veth "$1"
}

ns_mount() {
	ns_exec "$1" mount -t nfs4 -o "$NS_MOUNT_OPTS" "$(ns_server "$1"):/" "$(ns_mnt "$1")" \
		2>"$T_TMP/mount-$1.err"
}

ns_del() {
	_p=$(ns_pid "$1")
	ns_exec "$1" umount "$(ns_mnt "$1")" 2>/dev/null
	kill "$_p" 2>/dev/null
	t_wait_for "! kill -0 $_p" 20
	[ "$(ns_state "$1" kind)" = named ] && ip netns del "$1"
	rm -rf "${NS_DIR:?}/$1"
}
