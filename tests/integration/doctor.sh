#!/bin/sh
# nfskeys doctor on a fake root (--root: etc/request-key.d, etc/idmapd.conf, proc/ files
# built here) with the real daemons on sockets in the temp dir: a healthy system reports
# no problem and exits 0; each fault made on purpose (a route taken by nfsidmap, a route
# missing, the daemon stopped, a domain mismatch, a full key quota, a knfsd channel
# nobody holds) is named with its fix and makes the exit status 1; --json says the same.
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
	"$R/run/systemd/system"
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

# --- the daemon stopped: the fix names systemctl where PID 1 is systemd (the root has
# run/systemd/system), and the program and syslog where it is not
t_idmapd_stop
fault "nfskeys-idmapd stopped" "daemon nfskeys-idmapd: no answer on $IDMAPD_SOCK: not running; fix: start it: systemctl start nfskeys-idmapd"
rmdir "$R/run/systemd/system"
fault "nfskeys-idmapd stopped, PID 1 not systemd" "daemon nfskeys-idmapd: no answer on $IDMAPD_SOCK: not running; fix: start it as root: $sbindir/nfskeys-idmapd (it logs to syslog"
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
