#!/bin/sh
# nfskeys doctor on a fake root (--root: etc/request-key.d, etc/idmapd.conf, proc/ files
# built here) with the real daemons on sockets in the temp dir: a healthy system reports
# no problem and exits 0; each fault made on purpose (a route taken by nfsidmap, a route
# missing, the daemon stopped, a domain mismatch, a full key quota, a knfsd channel
# nobody holds) is named with its fix and makes the exit status 1; --json says the same.
# The kernel's CIFS upcall_target= (6.13) from the root's osrelease.  --namespace on the
# running system: the host's own network namespace, a container's made with unshare (its
# own user namespace and uid_map), usage errors, the daemon stopped and Namespaces = none.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/idmapd.sh"
. "$top_srcdir/tests/harness/attrd.sh"
. "$top_srcdir/tests/harness/kdc.sh"
unset MAKEFLAGS MFLAGS MAKELEVEL
eval "$(make -s -C "$top_builddir" print-config)"

R="$T_TMP/root"
t_idmapd_conf "[Attr]" "Store = $T_TMP/attr.db" "[Attrd]" "Socket = $T_TMP/attrd.sock"
CONF=$IDMAPD_CONF
ATTRD_CONF=$CONF
doc() { "$NFSKEYS" -c "$CONF" doctor --root "$R" "$@"; }

# --- the fake root: what nfs-common, cifs-utils and 'enable-upcalls' leave in /etc
mkdir -p "$R/etc/request-key.d" "$R/usr/sbin" "$R/proc/net/rpc/nfs4.nametoid" \
	"$R/proc/net/rpc/nfs4.idtoname" "$R/proc/4242/fd" "$R/run/rpc_pipefs/nfs/clnt0" \
	"$R/run/systemd/system" "$R/proc/sys/kernel"
for p in nfsidmap cifs.idmap cifs.upcall nfskeys-upcall; do
	printf '#!/bin/sh\n' >"$R/usr/sbin/$p"; chmod 755 "$R/usr/sbin/$p"
done
printf 'create\tid_resolver\t*\t*\t/usr/sbin/nfsidmap -t 600 %%k %%d\n' \
	>"$R/etc/request-key.d/id_resolver.conf"
printf 'create  cifs.idmap    * * /usr/sbin/cifs.idmap %%k\n' >"$R/etc/request-key.d/cifs.idmap.conf"
printf 'create  cifs.spnego    * * /usr/sbin/cifs.upcall %%k\n' >"$R/etc/request-key.d/cifs.spnego.conf"
printf 'create\tuser\tdebug:*\tnegate\t/bin/keyctl negate %%k 30 %%S\n' >"$R/etc/request-key.conf"
"$NFSKEYS" idmap enable-upcalls --dir "$R/etc/request-key.d" --helper /usr/sbin/nfskeys-upcall \
	>"$T_TMP/enable.out" 2>&1 || fail_all "nfskeys idmap enable-upcalls --dir: $(cat "$T_TMP/enable.out")"
printf '[General]\nVerbosity = 0\nDomain = Example.Test\n' >"$R/etc/idmapd.conf"
: >"$R/proc/net/rpc/nfs4.nametoid/channel"
: >"$R/proc/net/rpc/nfs4.idtoname/channel"
: >"$R/run/rpc_pipefs/nfs/clnt0/idmap"
echo "rpc_pipefs /run/rpc_pipefs rpc_pipefs rw,relatime 0 0" >"$R/proc/mounts"
echo nfskeys-idmapd >"$R/proc/4242/comm"
echo 6.1.0-57-amd64 >"$R/proc/sys/kernel/osrelease"
# (what a real kernel shows for a channel opened as /proc/net/rpc/...: /proc/net is a link
# to self/net, so the opener's pid is in the path; and the plain form)
ln -s /proc/4242/net/rpc/nfs4.nametoid/channel "$R/proc/4242/fd/5"
ln -s /proc/net/rpc/nfs4.idtoname/channel "$R/proc/4242/fd/6"
ln -s /run/rpc_pipefs/nfs/clnt0/idmap "$R/proc/4242/fd/7"
ln -s /dev/null "$R/proc/4242/fd/0"
healthy_quota() {
	{ echo "    0:    16 15/15 8/1000000 124/25000000"
	  echo " 1000:     2 2/2 2/200 30/20000"; } >"$R/proc/key-users"
}
healthy_quota

t_idmapd_start || fail_all "nfskeys-idmapd did not start: $(tail -5 "$T_TMP/idmapd.log")"
t_attrd_start || fail_all "nfskeys-attrd did not start: $(tail -5 "$ATTRD_LOG")"

# --- healthy
check "nfskeys doctor --help" "$NFSKEYS" doctor --help
out=$(doc 2>&1); rc=$?
check_eq "healthy: exit 0" 0 "$rc"
check_contains "healthy: no problem" "0 problems found" "$out"
printf '%s\n' "$out" | sed 's/^/# /'
for t in "uid:" "gid:" "user:" "group:"; do
	check_contains "healthy: id_resolver $t routed to nfskeys-upcall over nfsidmap's '*' line" \
		"ok      route id_resolver $t*: /etc/request-key.d/nfskeys.conf" "$out"
done
for t in "os:" "gs:" "oi:" "gi:"; do
	check_contains "healthy: cifs.idmap $t routed to nfskeys-upcall over cifs.idmap's '*' line" \
		"ok      route cifs.idmap $t*: /etc/request-key.d/nfskeys.conf" "$out"
done
check_contains "healthy: cifs.spnego stays with cifs.upcall (cifs-utils)" \
	"/usr/sbin/cifs.upcall (cifs-utils)" "$out"
check_contains "healthy: nfskeys-idmapd answers" "ok      daemon nfskeys-idmapd: answers on $IDMAPD_SOCK" "$out"
check_contains "healthy: nfskeys-attrd answers" "ok      daemon nfskeys-attrd: answers on $T_TMP/attrd.sock" "$out"
check_contains "healthy: the configured domain (case differs from idmapd.conf: same domain)" \
	"ok      domain NFSv4: example.test (from" "$out"
check_contains "healthy: knfsd's channel held by nfskeys-idmapd" \
	"/proc/net/rpc/nfs4.nametoid/channel held by nfskeys-idmapd[4242]" "$out"
check_contains "healthy: the client pipe held by nfskeys-idmapd" \
	"/run/rpc_pipefs/nfs/clnt0/idmap held by nfskeys-idmapd[4242]" "$out"
check_contains "healthy: quota headroom of uid 1000" "ok      quota uid 1000: 2 of 200 keys" "$out"
# a container's CIFS upcalls run in its namespaces only with upcall_target=app (6.13):
# before it, said with the fix (not a problem: a host without containers is fine)
check_contains "kernel 6.1: a container's CIFS Kerberos mount gets the host's credential caches; fix: a 6.13+ kernel" \
	"info    kernel cifs upcall_target: Linux 6.1.0-57-amd64 predates the CIFS mount option upcall_target= (6.13): cifs.spnego and cifs.idmap upcalls always run in the host's namespaces, so a container's CIFS Kerberos mount gets the host's credential cache namespace, not the container's; fix: a 6.13 or later kernel" \
	"$out"
for rel in 6.12.58 5.19.0; do
	echo "$rel" >"$R/proc/sys/kernel/osrelease"
	check_contains "kernel $rel predates upcall_target=" "Linux $rel predates the CIFS mount option" "$(doc 2>&1)"
done
for rel in 6.13.0-rc1 7.0.2; do
	echo "$rel" >"$R/proc/sys/kernel/osrelease"
	check_contains "kernel $rel has upcall_target=app" \
		"ok      kernel cifs upcall_target: Linux $rel has the CIFS mount option upcall_target=app" "$(doc 2>&1)"
done
echo 6.1.0-57-amd64 >"$R/proc/sys/kernel/osrelease"
json=$(doc --json 2>&1)
check_eq "healthy --json: valid JSON, no problems, every finding has check/status/message/fix" \
	"0 ok" "$(printf '%s' "$json" | python3 -c 'import json,sys
d=json.load(sys.stdin)
ok=all(set(f)>={"check","subject","status","message","fix"} for f in d["findings"])
print(d["problems"], "ok" if ok and len(d["findings"]) >= 14 else "bad")' 2>&1)"

# problem lines and the exit status for one fault; $1 what, $2 expected problem text
fault() {
	out=$(doc 2>&1); rc=$?
	check_eq "$1: exit 1" 1 "$rc"
	check_contains "$1: named, with its fix" "$2" "$(printf '%s\n' "$out" | grep '^problem')"
	printf '%s\n' "$out" | grep '^problem' | sed 's/^/# /'
}

# --- a route taken by nfsidmap: a line as close as ours, read first (name order)
printf 'create id_resolver uid:* * /usr/sbin/nfsidmap %%k %%d\n' >"$R/etc/request-key.d/00-local.conf"
fault "uid: route taken by nfsidmap in an earlier file" \
	"route id_resolver uid:*: /etc/request-key.d/00-local.conf:1 routes NFS name to uid to /usr/sbin/nfsidmap (nfs-common's nfsidmap), not to nfskeys-upcall; fix: run 'nfskeys idmap enable-upcalls'"
check_eq "only uid: is taken (gid: still ours)" "1 problem found" "$(printf '%s\n' "$out" | tail -1)"
rm "$R/etc/request-key.d/00-local.conf"
# fewer skipped characters win even from a file read later
printf 'create id_resolver user:1* * /usr/sbin/nfsidmap %%k %%d\n' >"$R/etc/request-key.d/zz.conf"
fault "user: route narrowed to nfsidmap in a later file (least wildcard wins)" \
	"route id_resolver user:*: /etc/request-key.d/zz.conf:1 routes NFS uid to name to /usr/sbin/nfsidmap"
rm "$R/etc/request-key.d/zz.conf"
# our routes not installed: nfs-common's and cifs-utils' '*' lines answer
mv "$R/etc/request-key.d/nfskeys.conf" "$T_TMP/nfskeys.conf.saved"
# (the same problem on several routes is one line naming them, with one fix)
fault "routes not enabled" "route id_resolver uid:*, gid:*, user:*, group:*: 4 routes go to /usr/sbin/nfsidmap (nfs-common's nfsidmap), not to nfskeys-upcall: NFS name to uid (/etc/request-key.d/id_resolver.conf:1), NFS group to gid (/etc/request-key.d/id_resolver.conf:1), NFS uid to name (/etc/request-key.d/id_resolver.conf:1), NFS gid to group (/etc/request-key.d/id_resolver.conf:1); fix: run 'nfskeys idmap enable-upcalls' as root; if it is installed, remove or narrow the lines named here"
check_contains "routes not enabled: cifs.idmap's 4 routes on one line too" \
	"route cifs.idmap os:*, gs:*, oi:*, gi:*: 4 routes go to /usr/sbin/cifs.idmap (cifs-utils), not to nfskeys-upcall: CIFS SID to uid (/etc/request-key.d/cifs.idmap.conf:1)" "$out"
check_eq "routes not enabled: the 8 idmap routes are 2 problems (one per program)" \
	"2 problems found" "$(printf '%s\n' "$out" | tail -1)"
check_eq "routes not enabled: one fix line per program, no repeats" 2 \
	"$(printf '%s\n' "$out" | grep -c '^problem route .*; fix: ')"
json=$(doc --json 2>/dev/null)
check_eq "routes not enabled --json: two route problems, the first naming its 4 routes" \
	"2 id_resolver uid:*, gid:*, user:*, group:*" "$(printf '%s' "$json" | python3 -c 'import json,sys
f=[f for f in json.load(sys.stdin)["findings"] if f["check"]=="route" and f["status"]=="problem"]
print(len(f), f[0]["subject"])' 2>&1)"
mv "$T_TMP/nfskeys.conf.saved" "$R/etc/request-key.d/nfskeys.conf"
# the helper a route names is gone: all 8 routes in one line, one fix
mv "$R/usr/sbin/nfskeys-upcall" "$T_TMP/upcall.saved"
fault "helper missing" "route id_resolver uid:*, gid:*, user:*, group:*; cifs.idmap os:*, gs:*, oi:*, gi:*: 8 routes go to /usr/sbin/nfskeys-upcall, which is missing or not executable (No such file or directory): NFS name to uid (/etc/request-key.d/nfskeys.conf:"
check_eq "helper missing: one problem, said once" "1 problem found|1" \
	"$(printf '%s\n' "$out" | tail -1)|$(printf '%s\n' "$out" | grep -c 'nfskeys-upcall, which is missing')"
mv "$T_TMP/upcall.saved" "$R/usr/sbin/nfskeys-upcall"
# no request-key configuration at all: the 8 idmap routes are one problem, cifs.spnego
# (another fix) a second
mkdir "$T_TMP/rk.saved" && mv "$R"/etc/request-key.d/*.conf "$R/etc/request-key.conf" "$T_TMP/rk.saved/"
fault "no request-key lines" "no request-key line matches 8 routes (NFS name to uid, NFS group to gid, NFS uid to name, NFS gid to group, CIFS SID to uid, CIFS SID to gid, CIFS uid to SID, CIFS gid to SID): the kernel's requests fail; fix: run 'nfskeys idmap enable-upcalls' as root"
check_eq "no request-key lines: 2 problems" "2 problems found" "$(printf '%s\n' "$out" | tail -1)"
mv "$T_TMP/rk.saved/request-key.conf" "$R/etc/" && mv "$T_TMP"/rk.saved/*.conf "$R/etc/request-key.d/"
check_eq "routes restored: exit 0" 0 "$(doc >/dev/null 2>&1; echo $?)"

# --- a malformed line in another file: request-key gives up on it, every upcall fails
# (the kernel test bed's nfs-failure.ktest shows it on a real kernel)
printf '# a comment\n\ncreate id_resolver\n' >"$R/etc/request-key.d/00-broken.conf"
fault "malformed request-key line" \
	"request-key /etc/request-key.d/00-broken.conf:3: 'create id_resolver' is not a rule (op type description callout program): request-key gives up on it, so every upcall fails, nfskeys-upcall's too; fix: correct the line or remove it"
check_contains "malformed request-key line: healthy files are not blamed" \
	"1 problem found" "$(printf '%s\n' "$out" | tail -1)"
"$NFSKEYS" idmap enable-upcalls --dir "$R/etc/request-key.d" --helper /usr/sbin/nfskeys-upcall \
	>"$T_TMP/enable.out" 2>&1
check_contains "enable-upcalls warns about the malformed line" \
	"nfskeys: warning: $R/etc/request-key.d/00-broken.conf:3: 'create id_resolver' is not a request-key rule: request-key gives up on it and every upcall fails" \
	"$(cat "$T_TMP/enable.out")"
rm "$R/etc/request-key.d/00-broken.conf"
check_eq "malformed line removed: exit 0" 0 "$(doc >/dev/null 2>&1; echo $?)"

# --- a domain mismatch with nfs-common's idmapd.conf
printf '[General]\nDomain = other.test\n' >"$R/etc/idmapd.conf"
fault "domain mismatch" "domain NFSv4: nfskeys uses example.test (from"
check_contains "domain mismatch: both domains named" "idmapd.conf says Domain = other.test" "$out"
printf '[General]\nDomain = example.test\n' >"$R/etc/idmapd.conf"

# --- a full key quota (uid 1000: 199 of 200 keys)
echo " 1000:   200 200/200 199/200 9000/20000" >>"$R/proc/key-users"
sed -i '/^ 1000:     2/d' "$R/proc/key-users"
fault "full key quota" "quota uid 1000: 199 of 200 keys and 9000 of 20000 bytes used"
check_contains "full key quota: the sysctl to raise" "kernel.keys.maxkeys" "$out"
healthy_quota

# --- knfsd's channel held by nobody (the holder went away)
rm "$R/proc/4242/fd/5"
fault "knfsd channel not held" "channel knfsd: /proc/net/rpc/nfs4.nametoid/channel: nobody holds it"
ln -s /proc/4242/net/rpc/nfs4.nametoid/channel "$R/proc/4242/fd/5"
# held by rpc.idmapd instead: said, not a problem
mkdir -p "$R/proc/77/fd" && echo rpc.idmapd >"$R/proc/77/comm"
rm "$R/proc/4242/fd/6" && ln -s /proc/net/rpc/nfs4.idtoname/channel "$R/proc/77/fd/9"
out=$(doc 2>&1)
check_contains "channel held by rpc.idmapd is named with the switch" \
	"nfs4.idtoname/channel held by rpc.idmapd[77], not nfskeys-idmapd" "$out"

# --- names in another domain asked of nfskeys-idmapd lately: the server sends its own
# (domains newest first, as first seen, counted case-insensitively)
out=$(doc 2>&1)
case "$out" in *"domain requests"*) not_ok "no names asked yet: no finding on recent domains" ;;
*) ok "no names asked yet: no finding on recent domains" ;; esac
"$NFSKEYS" -c "$CONF" idmapd lookup name-to-uid root@example.test >/dev/null 2>&1
out=$(doc 2>&1)
check_contains "names in our domain only: said, not a problem" \
	"ok      domain requests: the last 1 names asked of nfskeys-idmapd all carry example.test" "$out"
for n in alice@other.test bob@Other.Test carol@third.test; do
	"$NFSKEYS" -c "$CONF" idmapd lookup --nobody name-to-uid "$n" >/dev/null 2>&1
done
fault "names from other domains" "domain requests: 3 of the last 4 names asked of nfskeys-idmapd carry another domain than example.test: third.test (1), Other.Test (2); they map to nobody"

# a domain an NFS client sent with a terminal escape in it: shown escaped, never raw
"$NFSKEYS" -c "$CONF" idmapd lookup --nobody name-to-uid "$(printf 'eve@evil\033[2J.test')" \
	>/dev/null 2>&1
out=$(doc 2>&1)
check_eq "a domain with an escape byte: named escaped, no raw escape byte in the output" "1|0" \
	"$(printf '%s\n' "$out" | grep -cF 'evil\x1b[2J.test (1)')|$(printf '%s' "$out" | grep -c "$(printf '\033')")"

# --- --namespace: one network namespace of the running system (--root does not apply)
ndoc() { "$NFSKEYS" -c "$CONF" doctor "$@"; }
host_net=$(readlink /proc/$$/ns/net)
host_user=$(readlink /proc/$$/ns/user)
out=$(ndoc --namespace $$ --name alice@example.test 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check_eq "--namespace \$\$ (the host's): exit 0" 0 "$rc"
check_contains "--namespace \$\$: its identity, the daemon's own, owned by the initial user namespace" \
	"info    namespace $host_net: network namespace of process $$ ($(cat /proc/$$/comm)), the daemon's own namespace; owned by the initial user namespace ($host_user): ids as on the host" \
	"$out"
check_contains "--namespace \$\$: its mounts ask the request-key upcall, the pipe when that fails" \
	"info    namespace $host_net mounts: its NFS mounts (of the initial user namespace) ask the request-key id_resolver upcall" \
	"$out"
check_contains "--namespace \$\$: served as the daemon's own" \
	"ok      namespace $host_net: the daemon's own namespace: its pipes are the daemon's own" "$out"
check_contains "--name: the daemon's answer, the same uid in the host's namespace" \
	"ok      namespace alice@example.test: nfskeys-idmapd answers uid 2001 (static); $host_net sees the host's ids: uid 2001 there too" \
	"$out"
out=$(ndoc --namespace /proc/self/ns/net 2>&1); rc=$?
check_eq "--namespace /proc/self/ns/net: exit 0" 0 "$rc"
check_contains "--namespace /proc/self/ns/net: the daemon's own namespace (the process is nfskeys itself)" \
	"info    namespace $host_net: network namespace of process P, the daemon's own namespace; owned by the initial user namespace" \
	"$(printf '%s\n' "$out" | sed 's/process [0-9]* ([^)]*)/process P/')"
check_eq "--namespace --json: valid JSON, the four checks and the kernel's" \
	"0 namespace namespace namespace namespace kernel" \
	"$(ndoc --namespace $$ --name alice@example.test --json | python3 -c 'import json,sys
d=json.load(sys.stdin); print(d["problems"], " ".join(f["check"] for f in d["findings"]))' 2>&1)"
# what is not a network namespace: named, exit 2 (as every usage error)
nsbad() { out=$(ndoc "$@" 2>&1); echo "$? $out"; }
check_eq "--namespace of no process: exit 2, said" \
	"2 nfskeys: doctor: --namespace 2147483646: no process 2147483646 (no /proc/2147483646/ns/net)" \
	"$(nsbad --namespace 2147483646)"
check_eq "--namespace of a file that is no namespace: exit 2, said" \
	"2 nfskeys: doctor: --namespace $CONF: $CONF is not a namespace file (give a PID, /proc/PID/ns/net or /run/netns/NAME)" \
	"$(nsbad --namespace "$CONF")"
check_eq "--namespace of a user namespace: exit 2, said" \
	"2 nfskeys: doctor: --namespace /proc/self/ns/user: /proc/self/ns/user is a user namespace, not a network namespace (/proc/PID/ns/net)" \
	"$(nsbad --namespace /proc/self/ns/user)"
check_eq "--namespace of a FIFO: refused before it is opened, exit 2" \
	"2 nfskeys: doctor: --namespace $T_TMP/fifo: $T_TMP/fifo is not a namespace file (give a PID, /proc/PID/ns/net or /run/netns/NAME)" \
	"$(mkfifo "$T_TMP/fifo"; nsbad --namespace "$T_TMP/fifo")"
check_eq "--namespace with --root: exit 2" 2 "$(ndoc --root "$R" --namespace $$ >/dev/null 2>&1; echo $?)"
check_eq "--name without --namespace: exit 2" 2 "$(ndoc --name alice@example.test >/dev/null 2>&1; echo $?)"
# a container: a network namespace owned by a user namespace of its own, whose uid 0-99
# are the host's 2000-2099 (written from here: no newuidmap needed)
UPID=
if unshare --net --user true 2>/dev/null; then
	unshare --net --user sleep 600 &
	UPID=$!
	t_on_exit "kill $UPID"
	t_wait_for "[ \"\$(readlink /proc/$UPID/ns/user)\" != '$host_user' ]" 10
	echo "0 2000 100" >"/proc/$UPID/uid_map" && echo "0 3000 100" >"/proc/$UPID/gid_map"
fi
if [ -n "$UPID" ] && [ "$(cat "/proc/$UPID/uid_map" 2>/dev/null | tr -s ' ')" = " 0 2000 100" ]; then
	unet=$(readlink "/proc/$UPID/ns/net") uuser=$(readlink "/proc/$UPID/ns/user")
	out=$(ndoc --namespace $UPID --name alice@example.test 2>&1); rc=$?
	printf '%s\n' "$out" | sed 's/^/# /'
	check_eq "a container's namespace: exit 1 (not served: no rpc_pipefs here)" 1 "$rc"
	check_contains "a container's namespace: owned by its user namespace, not the initial one, with its uid_map read" \
		"info    namespace $unet: network namespace of process $UPID (sleep); owned by user namespace $uuser, not the initial one; its uid_map (inside outside count, from /proc/$UPID/uid_map): 0 2000 100" \
		"$out"
	check_contains "a container's namespace: its mounts map ids only through its own pipe" \
		"info    namespace $unet mounts: NFS mounts made in its user namespace $uuser never make the request-key upcall: their ids map only through the rpc_pipefs pipe of $unet; process $UPID sees no NFSv4 mount" \
		"$out"
	check_contains "a container's namespace: not served by the daemon, with the fix" \
		"problem namespace $unet: nfskeys-idmapd does not serve it (0 other namespaces served; kernel paths: no kernel paths); fix: the daemon serves containers when the kernel has rpc_pipefs" \
		"$out"
	check_contains "--name: uid 2001 is uid 1 inside (0 2000 100)" \
		"ok      namespace alice@example.test: nfskeys-idmapd answers uid 2001 (static); $uuser sees it as uid 1 (uid_map 0 2000 100)" \
		"$out"
	out=$(ndoc --namespace "/proc/$UPID/ns/net" --name user5@example.test 2>&1)
	check_contains "--name of a uid outside the map: the overflow id, a problem with the fix (the path form reads the map too)" \
		"problem namespace user5@example.test: nfskeys-idmapd answers uid 10005 (static), outside the uid_map of $uuser (0 2000 100): inside it is the overflow id $(cat /proc/sys/kernel/overflowuid), shown as nobody; fix: map the host uid" \
		"$out"
	# unshare's own --map-root-user: root is root inside, nobody else is mapped
	unshare --net --user --map-root-user sleep 600 &
	RPID=$!
	t_on_exit "kill $RPID"
	t_wait_for "[ -n \"\$(cat /proc/$RPID/uid_map 2>/dev/null)\" ]" 10
	out=$(ndoc --namespace $RPID --name alice@example.test 2>&1)
	check_eq "--map-root-user: not the initial user namespace, its map 0 0 1 read, alice outside it" \
		"1 1" \
		"$(printf '%s\n' "$out" | grep -cF "not the initial one; its uid_map (inside outside count, from /proc/$RPID/uid_map): 0 0 1") $(printf '%s\n' "$out" | grep -cF "problem namespace alice@example.test: nfskeys-idmapd answers uid 2001 (static), outside the uid_map of")"
	# a name bound to it, as ip netns add makes: no process, so no map to read
	: >"$T_TMP/netns-c"
	if mount --bind "/proc/$UPID/ns/net" "$T_TMP/netns-c" 2>/dev/null; then
		t_on_exit "umount $T_TMP/netns-c"
		out=$(ndoc --namespace "$T_TMP/netns-c" --name alice@example.test 2>&1)
		check_contains "--namespace of a bound name: the same namespace, its map not read" \
			"info    namespace $unet: network namespace of $T_TMP/netns-c; owned by user namespace $uuser, not the initial one; its uid_map is not read (give the PID of a process of it)" \
			"$out"
		check_contains "... and the uid inside is not guessed" \
			"info    namespace alice@example.test: nfskeys-idmapd answers uid 2001 (static); how $uuser sees it needs its uid_map" \
			"$out"
	else
		skip "mount --bind of a namespace file is not allowed here"
		skip "mount --bind of a namespace file is not allowed here"
	fi
else
	UPID=
	for i in 1 2 3 4 5 6 7 8 9; do skip "unshare --net --user does not work here"; done
fi

# --- the daemon stopped: the fix names systemctl where PID 1 is systemd (the root has
# run/systemd/system), and the program and syslog where it is not
t_idmapd_stop
fault "nfskeys-idmapd stopped" "daemon nfskeys-idmapd: no answer on $IDMAPD_SOCK: not running; fix: start it: systemctl start nfskeys-idmapd"
rmdir "$R/run/systemd/system"
fault "nfskeys-idmapd stopped, PID 1 not systemd" "daemon nfskeys-idmapd: no answer on $IDMAPD_SOCK: not running; fix: start it as root: $sbindir/nfskeys-idmapd (it logs to syslog"
if [ -n "$UPID" ]; then
	out=$(ndoc --namespace $UPID 2>&1); rc=$?
	check_eq "--namespace with the daemon stopped: exit 1" 1 "$rc"
	check_contains "--namespace with the daemon stopped: said, with the fix" \
		"problem namespace $unet: nfskeys-idmapd does not answer on $IDMAPD_SOCK (not running): nobody serves the NFS client pipe of $unet; fix: start it" \
		"$out"
else
	skip "unshare --net --user does not work here"
fi
case "$out" in *systemctl* | *journalctl* | *.service*)
	not_ok "PID 1 not systemd: no systemctl, journalctl or unit in any line"
	printf '%s\n' "$out" | grep 'systemctl\|journalctl\|\.service' | sed 's/^/# /' ;;
*) ok "PID 1 not systemd: no systemctl, journalctl or unit in any line" ;; esac
mkdir "$R/run/systemd/system"
json=$(doc --json 2>/dev/null)
check_eq "--json names the stopped daemon as a problem" "problem" \
	"$(printf '%s' "$json" | python3 -c 'import json,sys
d=json.load(sys.stdin)
print([f["status"] for f in d["findings"] if f["subject"]=="nfskeys-idmapd"][0])' 2>&1)"
t_attrd_stop
# (without --attrd-socket a stopped attrd whose program is not installed is "not installed")
doc() { "$NFSKEYS" -c "$CONF" doctor --root "$R" --attrd-socket "$T_TMP/attrd.sock" "$@"; }
fault "nfskeys-attrd stopped" "daemon nfskeys-attrd: no answer on $T_TMP/attrd.sock: not running"

# usage errors
check_eq "unknown option: exit 2" 2 "$(doc --bogus >/dev/null 2>&1; echo $?)"
check_eq "missing --root directory: exit 1" 1 "$("$NFSKEYS" -c "$CONF" doctor --root "$T_TMP/none" >/dev/null 2>&1; echo $?)"

# --- --user NAME: the user's TGT in KEYRING:persistent:UID, read by a child that became the
# user (libkrb5 never runs as root on a user's cache).  uid 65534 logs in through the 0755
# install; a user with no ticket and a user that does not exist are problems.
if command -v krb5kdc >/dev/null && command -v kdb5_util >/dev/null && command -v kinit >/dev/null
then
	kdc_start DOCTOR.TEST
	kdc_addprinc tuser 'tuser-Pw-3'
	chmod 0711 "$T_TMP" "$KDC_DIR" # the realm's krb5.conf, for uid 65534
	t_ou_load
	ou=$(getent passwd 65534 | cut -d: -f1)
	OU() { setpriv --reuid 65534 --regid 65534 --clear-groups $T_OU_ENV "$@"; }
	NK_OU=$(t_ou nfskeys)
	t_on_exit "setpriv --reuid 65534 --regid 65534 --clear-groups $T_OU_ENV $NK_OU nfs logout"
	printf 'tuser-Pw-3\n' | OU "$NK_OU" nfs login -p tuser >"$T_TMP/ou-login" 2>&1
	check_eq "uid 65534 logs in to KEYRING:persistent:65534" 0 $?
	exp=$(OU "$NK_OU" nfs status 2>/dev/null | sed -n 's/^expires: *//p')
	out=$($T_OU_ENV "$NK_OU" -c "$CONF" doctor --root "$R" --user "$ou" 2>&1)
	check_contains "doctor --user $ou: the TGT's principal, cache and expiry (read as $ou)" \
		"ok      ticket $ou: TGT of tuser@DOCTOR.TEST in KEYRING:persistent:65534 expires ${exp:-?} (in " \
		"$out"
	noticket=$(getent passwd 1 | cut -d: -f1)
	out=$($T_OU_ENV "$NK_OU" -c "$CONF" doctor --root "$R" --user "$noticket" 2>&1)
	check_contains "doctor --user $noticket (no ticket): a problem with its fix" \
		"problem ticket $noticket: no Kerberos TGT in KEYRING:persistent:1: NFS sec=krb5 and CIFS sec=krb5 access fails; fix: the user runs 'nfskeys nfs login'" \
		"$out"
	out=$($T_OU_ENV "$NK_OU" -c "$CONF" doctor --root "$R" --user no-such-user-nfskeys 2>&1)
	check_contains "doctor --user of no such user says so" \
		"problem ticket no-such-user-nfskeys: no such user" "$out"
else
	skip "doctor --user: no MIT KDC here (krb5-kdc, krb5-user)"
fi

# --- [Kernel] Namespaces = none: no container is served; --namespace and 'nfskeys idmapd
# namespaces' say so, with the fix
t_idmapd_conf "[Kernel]" "Namespaces = none"
t_idmapd_start || fail_all "nfskeys-idmapd did not start: $(tail -5 "$T_TMP/idmapd.log")"
check_eq "idmapd namespaces: Namespaces = none said" \
	"no other network namespace is served: [Kernel] Namespaces = none when nfskeys-idmapd started (set auto and restart it to serve containers)" \
	"$("$NFSKEYS" -c "$IDMAPD_CONF" idmapd namespaces 2>&1)"
if [ -n "$UPID" ]; then
	out=$("$NFSKEYS" -c "$IDMAPD_CONF" doctor --namespace $UPID 2>&1)
	check_contains "--namespace with Namespaces = none: a problem, with the fix" \
		"problem namespace $unet: nfskeys-idmapd started with [Kernel] Namespaces = none: it serves no other network namespace's pipe, so NFS mounts there that need it map owners to nobody; fix: set [Kernel] Namespaces = auto in nfskeys.conf and restart nfskeys-idmapd" \
		"$out"
else
	skip "unshare --net --user does not work here"
fi
t_idmapd_stop
