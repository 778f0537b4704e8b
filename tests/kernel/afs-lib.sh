# Sourced by the AFS kernel test (tests/kernel/afs.ktest) in the guest, after guest-lib.sh
# and tests/harness/kdc.sh: a one-host OpenAFS cell (ptserver, vlserver, fileserver,
# volserver run directly, no bosserver) on an address of a dummy interface, keyed from the
# afs principal's keytab of the test KDC, and the kernel AFS client (kafs) told about it.
# The guest's root is a tmpfs overlay, so /etc/openafs/server and /var/lib/openafs are the
# guest's own.
# shellcheck shell=sh

AFS_ADDR=${AFS_ADDR:-192.0.2.1}
AFS_SRV=/etc/openafs/server
AFS_LIBEXEC=/usr/lib/openafs
AFS_LOGS=/var/log/openafs
# (the servers' logs go straight to the results share: a hung guest leaves them too)
AFS_TIMEOUT=${AFS_TIMEOUT:-30}

# afs_wait_s SECS CMD: until CMD succeeds, for at most SECS seconds by the clock (each try of
# an rx client may itself take seconds).
afs_wait_s() {
	_end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt $_end ]; do
		eval "$2" >/dev/null 2>&1 && return 0
		sleep 1
	done
	return 1
}

# afs_cell_start CELL REALM: write the server configuration, the service key from the
# KDC's afs/CELL principal, start the four servers and wait until the VL server answers
# with the file server's address.  0 or 1 (what failed is in $AFS_WHY).
afs_cell_start() {
	AFS_CELL=$1 _realm=$2
	AFS_WHY=
	modprobe dummy 2>/dev/null
	if ! ip link show afs0 >/dev/null 2>&1; then
		ip link add afs0 type dummy && ip addr add "$AFS_ADDR/32" dev afs0 &&
			ip link set afs0 up || { AFS_WHY="dummy interface with $AFS_ADDR"; return 1; }
	fi
	# the db servers and the file server look up their own host name (its address, the
	# file server's uuid): the dummy interface's address
	grep -q "^$AFS_ADDR " /etc/hosts || echo "$AFS_ADDR $(hostname) afs.$AFS_CELL" >>/etc/hosts
	mkdir -p "$AFS_SRV" /var/lib/openafs/db /var/lib/openafs/local /vicepa "$KT_RESULTS/afs"
	rm -rf "$AFS_LOGS" && ln -s "$KT_RESULTS/afs" "$AFS_LOGS"
	echo "$AFS_CELL" >"$AFS_SRV/ThisCell"
	printf '>%s #nfskeys test cell\n%s #afs.%s\n' "$AFS_CELL" "$AFS_ADDR" "$AFS_CELL" \
		>"$AFS_SRV/CellServDB"
	# the client tools (vos, pts with -localauth) read the server's files; the cache
	# manager side is kafs, told through /proc below
	cp "$AFS_SRV/ThisCell" /etc/openafs/ThisCell
	cp "$AFS_SRV/CellServDB" /etc/openafs/CellServDB
	: >"$AFS_SRV/UserList"
	rm -f "$AFS_SRV/KeyFile" "$AFS_SRV/KeyFileExt"
	kdc_addprinc "afs/$AFS_CELL" || { AFS_WHY="kadmin addprinc afs/$AFS_CELL"; return 1; }
	kdc_ktadd "$T_TMP/afs.keytab" "afs/$AFS_CELL" || { AFS_WHY="kadmin ktadd"; return 1; }
	_kvno=$(klist -k "$T_TMP/afs.keytab" | awk -v p="afs/$AFS_CELL@$_realm" '$2 == p { print $1; exit }')
	for _et in 18 17; do
		timeout "$AFS_TIMEOUT" asetkey add rxkad_krb5 "${_kvno:-1}" $_et "$T_TMP/afs.keytab" "afs/$AFS_CELL@$_realm" \
			>>"$AFS_LOGS/asetkey.log" 2>&1 || { AFS_WHY="asetkey add rxkad_krb5 $_et"; return 1; }
	done
	# a partition the file server attaches: a tmpfs of its own at /vicepa
	mountpoint -q /vicepa || mount -t tmpfs -o size=256m afsvicepa /vicepa ||
		{ AFS_WHY="tmpfs on /vicepa"; return 1; }
	touch /vicepa/AlwaysAttach
	# The db servers first: ubik elects the only server after some seconds; a file server
	# started before that fails to register its address and retries only minutes later.
	for _s in ptserver vlserver; do
		setsid "$AFS_LIBEXEC/$_s" </dev/null >>"$AFS_LOGS/$_s.out" 2>&1 &
		t_on_exit "kill $!"
	done
	if ! afs_wait_s 150 "timeout 15 vos listaddrs -localauth -noresolve 2>>$AFS_LOGS/vos.err &&
		timeout 15 pts examine system:anyuser -localauth 2>>$AFS_LOGS/pts.err"; then
		AFS_WHY="the VL or PT server never answered (no quorum)"
		return 1
	fi
	for _s in fileserver volserver; do
		setsid "$AFS_LIBEXEC/$_s" </dev/null >>"$AFS_LOGS/$_s.out" 2>&1 &
		t_on_exit "kill $!"
	done
	if ! afs_wait_s 90 "timeout 15 vos listaddrs -localauth -noresolve 2>>$AFS_LOGS/vos.err | grep -qx '$AFS_ADDR'"; then
		AFS_WHY="the file server never registered $AFS_ADDR (vos listaddrs)"
		return 1
	fi
	return 0
}

# afs_pts_user NAME ID: a protection-database user (NAME@REALM of the cell's realm maps to
# it: the cell name upper-cased is a local realm).
afs_pts_user() {
	timeout "$AFS_TIMEOUT" pts createuser "$1" -id "$2" -localauth >>"$AFS_LOGS/pts.log" 2>&1
}

# afs_kafs_cell CELL: tell kafs where the cell's VL server is.
#
# 6.1.0-57 (6.1.192) oopses in afs_vlserver_probe_result -> rxrpc_kernel_get_srtt (NULL
# call->rxcall, in the kafsd worker) when a server's abort of kafs' capability probe arrives
# while the probe is still being sent: with the servers on this host the loopback delivers
# the abort inside sendmsg, afs_make_call's error path drops the rxrpc call, then runs the
# probe's result handler on it.  A short netem delay on lo lets sendmsg return first.
afs_kafs_cell() {
	modprobe kafs || return 1
	modprobe sch_netem && { tc qdisc replace dev lo root netem delay "${AFS_LO_DELAY:-5ms}" ||
		return 1; }
	grep -qw "$1" /proc/fs/afs/cells 2>/dev/null && return 0
	echo "add $1 $AFS_ADDR" >/proc/fs/afs/cells
}

# afs_acl RIGHTS...: the AFS ACL text kafs' afs.acl xattr takes ("NPOS\nNNEG\nname bits\n"),
# from "name:rights" words (rights in OpenAFS letters rlidwka).
afs_acl() {
	printf '%s\n0\n' $#
	for _e in "$@"; do
		_n=${_e%:*} _r=${_e##*:} _b=0
		case $_r in *r*) _b=$((_b | 1)) ;; esac
		case $_r in *w*) _b=$((_b | 2)) ;; esac
		case $_r in *i*) _b=$((_b | 4)) ;; esac
		case $_r in *l*) _b=$((_b | 8)) ;; esac
		case $_r in *d*) _b=$((_b | 16)) ;; esac
		case $_r in *k*) _b=$((_b | 32)) ;; esac
		case $_r in *a*) _b=$((_b | 64)) ;; esac
		printf '%s %s\n' "$_n" "$_b"
	done
}
