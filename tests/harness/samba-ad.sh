# A throwaway Samba Active Directory domain controller, and a member server running
# winbindd against it, for tests (source after lib.sh; root only).
#
# Where things run: one private network namespace (its own loopback; the DC listens on
# 127.0.0.2, nothing reaches the host's network or its ports), and two private mount
# namespaces in it, the DC's and the member's.  In each, /etc/hosts, /etc/resolv.conf
# and /var/log/samba are the test's own (the names resolve through the DC's DNS, which
# the member's idmap ad backend needs: it finds its DC by SRV records), and /run is a
# tmpfs with /run/samba bound to a directory of the test: libwbclient has the winbindd
# socket directory /run/samba/winbindd compiled in and reads no setting for it (its
# environment variable is honoured only under Samba's own nss_wrapper selftest), so a
# private mount is the only way to give the DC's smbd and the member's wbinfo each their
# own winbindd without touching the host's.  All state is under $T_TMP/samba-ad.
#
# Provisioning takes 10 to 35 s here, so the first test provisions a template (the DC and
# the accounts below) in $top_builddir/tests/samba-ad-template and later ones copy it;
# it is made again when Samba's version or this file changes.  A test that sets
# SAMBA_AD_BULK=N before t_samba_ad_start gets a DC with N more accounts (a template of
# its own, samba-ad-template-bulkN, made once from the first; see _samba_ad_bulk_add).
#
#   t_samba_ad_start        copy the template (provisioning it first if needed) and start
#                           samba.  Sets SAMBA_AD_DIR SAMBA_AD_REALM SAMBA_AD_DOMAIN
#                           SAMBA_AD_BASEDN SAMBA_AD_URI (reachable in the namespace only:
#                           t_samba_ad_net) SAMBA_AD_SID (the domain SID)
#                           SAMBA_AD_ADMINPW_FILE (0600) SAMBA_AD_ACCOUNTS (the file of the
#                           accounts below: "NAME KIND SID UIDNUMBER GIDNUMBER", - for none).
#                           skip_all when Samba or the namespaces are not available.
#   t_samba_ad_template_prepare  provision the template now when it is missing or stale
#                           (nothing when Samba or root is not there: say why, succeed);
#                           for a guest that boots the DC (tests/kernel/cifs-ad-acl.ktest)
#   t_samba_ad_template_ready  whether the template is there and current
#   t_samba_ad_net CMD...   run CMD in the DC's network namespace
#   t_samba_ad_sid NAME     the SID of an account of SAMBA_AD_ACCOUNTS
#   t_samba_ad_objects      every user, computer and group of the DC now (the domain's and
#                           BUILTIN's) and the foreign security principals (well-known
#                           SIDs): lines "SID KIND NAME", KIND user, group or wellknown
#                           (NAME may have spaces)
#   t_samba_member_join     join the member MEMBER1 (net ads join, the administrator's
#                           password from a 0600 file, never argv).  Sets SAMBA_MEMBER_DIR.
#   t_samba_winbind_start FILE  (re)start the member's winbindd with the "idmap config"
#                           lines of FILE, from the state right after the join (no cached
#                           mapping, no id allocated by an earlier run)
#   t_samba_winbind_stop
#   t_wbinfo ARGS...        wbinfo against the member's winbindd
#   t_wbinfo_ids SID...     winbind's uid and gid of each SID: lines "SID UID GID", an id
#                           "unmapped" when winbind has none.  One wbinfo
#                           --sids-to-unix-ids for each 500 (one argument may not pass
#                           128 KiB, nor winbind's request): the id winbind gives a SID and its
#                           type, uid, gid or both; a SID's uid is the id of type uid or
#                           both, as --sid-to-uid answers (each of those is a wbinfo run,
#                           some 40 ms here, one per SID and kind).
#   t_wbinfo_sids uID|gID...  winbind's SID of each uid (u2000) or gid (g2000): lines
#                           "uID SID", SID "unmapped" when winbind has none (one wbinfo
#                           --unix-ids-to-sids for each 500; --uid-to-sid takes no id
#                           above 2^31-1)
#   t_samba_ad_stop         stop everything (registered with t_on_exit)
#   t_samba_wb_ids_of FILE  t_wbinfo_ids for the SIDs of the first field of FILE's lines
#   t_samba_agree DESC UNIT MIN TABLE SELECT DIFFER MAPPED HEADER
#                           one check of a table of answers (winbind's against nfskeys's):
#                           the rows for which the awk condition SELECT holds must be some,
#                           MIN at least of them rows for which MAPPED holds, and none one
#                           for which DIFFER holds; those are shown under HEADER
#                           (SAMBA_AGREE_FS: the field separator, default blanks)
#
# The accounts (RFC 2307 attributes as the DC stores them; AD's uidNumber and gidNumber
# are 32-bit signed integers, so 3000000000 is kept as -1294967296):
#   user alice  uidNumber 10001 gidNumber 20001    group staff   gidNumber 20001
#   user bob    (none)                             group plain   (none)
#   user big    uidNumber 3000000000 gidNumber 20001
#   group biggrp gidNumber 3000000001

SAMBA_AD_REALM=NFSKEYS.TEST
SAMBA_AD_DOMAIN=NFSKEYS
SAMBA_AD_BASEDN=DC=nfskeys,DC=test
SAMBA_AD_IP=127.0.0.2
SAMBA_AD_URI=ldap://$SAMBA_AD_IP
SAMBA_AD_NS_PID=
SAMBA_AD_PID=
SAMBA_MEMBER_NS_PID=
SAMBA_WINBINDD_PID=

# The accounts of the template: KIND NAME UIDNUMBER GIDNUMBER
_samba_ad_account_list() {
	cat <<'EOF'
user alice 10001 20001
user bob - -
user big 3000000000 20001
group staff - 20001
group plain - -
group biggrp - 3000000001
EOF
}

_samba_ad_tools() {
	PATH="$PATH:/usr/sbin:/sbin"
	for _t in samba samba-tool ldbsearch net winbindd wbinfo unshare nsenter ip; do
		command -v "$_t" >/dev/null 2>&1 ||
			skip_all "$_t not installed" \
				"(samba-ad-dc samba-ad-provision winbind ldb-tools iproute2)"
	done
	[ -d /usr/share/samba/setup ] ||
		skip_all "samba-ad-provision not installed (provisioning data)"
}

# A namespace holder: sh sets the namespace up, says so, and becomes a sleep whose pid
# names the namespaces to nsenter.  $1: file for "ready", $2: the setup commands;
# the rest: unshare's or nsenter's command line in front.
_samba_ns_hold() {
	_ready=$1 _setup=$2
	shift 2
	"$@" sh -c "$_setup && echo ready >$_ready && exec sleep 3600" </dev/null \
		>"$_ready.log" 2>&1 &
	_hold_pid=$!
	t_wait_for "test -s $_ready" 10 || { cat "$_ready.log" >&2; return 1; }
}

# Mount setup of a namespace: its own /etc/hosts, /etc/resolv.conf, /run/samba ($1) and
# /var/log/samba ($2: samba-dcerpcd and its rpcd_* workers, which winbindd starts, log
# there whatever "log file" says).
_samba_ns_mounts() {
	mkdir -p "$2"
	echo "mount --bind $SAMBA_AD_DIR/hosts /etc/hosts &&" \
		"mount --bind $SAMBA_AD_DIR/resolv.conf /etc/resolv.conf &&" \
		"{ ! [ -d /var/log/samba ] || mount --bind $2 /var/log/samba; } &&" \
		"mount -t tmpfs -o mode=0755 nfskeys-test /run && mkdir /run/samba &&" \
		"mount --bind $1 /run/samba"
}

# Provision the template into $1 (a new directory), in a network namespace of its own
# so that nothing it looks up leaves the machine.
_samba_ad_provision() {
	_tpl=$1
	mkdir -p "$_tpl" && chmod 700 "$_tpl" || return 1
	(umask 077; : >"$_tpl/provision.log")
	TDB_NO_FSYNC=1 unshare --net sh -c 'ip link set lo up && exec "$@"' sh \
		samba-tool domain provision --use-rfc2307 --realm="$SAMBA_AD_REALM" \
		--domain="$SAMBA_AD_DOMAIN" --server-role=dc --dns-backend=SAMBA_INTERNAL \
		--host-name=dc1 --host-ip="$SAMBA_AD_IP" --targetdir="$_tpl" \
		--option="interfaces = $SAMBA_AD_IP" --option="bind interfaces only = yes" \
		>>"$_tpl/provision.log" 2>&1 || return 1
	# the generated administrator password: into a 0600 file, out of the log
	(umask 077; sed -n 's/.*Admin password: *//p' "$_tpl/provision.log" >"$_tpl/adminpw")
	[ -s "$_tpl/adminpw" ] || return 1
	sed -i 's/\(Admin password:\).*/\1 (in adminpw)/' "$_tpl/provision.log"
	# Paths of our own, no dns forwarder (nothing leaves the namespace), only the services
	# a member server needs (LDAP, Kerberos, SMB and RPC for the join and winbindd, DNS for
	# locating the DC) and plain LDAP binds allowed for tests that read the directory.
	sed -i -e '/^\s*\(log file\|server services\|dns forwarder\|panic action\)\s*=/d' \
		-e "/^\[global\]/a\\
	log file = $_tpl/log.%m\\
	pid directory = $_tpl/run\\
	ncalrpc dir = $_tpl/run/ncalrpc\\
	winbindd socket directory = $_tpl/run/winbindd\\
	ntp signd socket directory = $_tpl/run/ntp_signd\\
	panic action =\\
	load printers = no\\
	disable spoolss = yes\\
	ldap server require strong auth = no\\
	server services = s3fs, rpc, ldap, cldap, kdc, winbindd, dns" \
		"$_tpl/etc/smb.conf" || return 1
	mkdir -p "$_tpl/run"
	# The TLS key and certificates Samba's LDAP server would make at each start (a 4096-bit
	# RSA key: a second of CPU here, 30 s under TCG), made once: a CA and the DC's
	# certificate for dc1.nfskeys.test, the key 0600 as Samba requires.
	_tls=$_tpl/private/tls
	mkdir -p "$_tls" && (umask 077
		openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/O=$SAMBA_AD_REALM test CA" \
			-keyout "$_tpl/ca.key" -out "$_tls/ca.pem" &&
		openssl req -newkey rsa:2048 -nodes -subj "/CN=dc1.nfskeys.test" \
			-keyout "$_tls/key.pem" -out "$_tpl/dc.csr" &&
		printf 'subjectAltName = DNS:dc1.nfskeys.test\n' >"$_tpl/dc.ext" &&
		openssl x509 -req -in "$_tpl/dc.csr" -CA "$_tls/ca.pem" -CAkey "$_tpl/ca.key" \
			-CAcreateserial -days 3650 -extfile "$_tpl/dc.ext" -out "$_tls/cert.pem") \
		>>"$_tpl/provision.log" 2>&1 || return 1
	rm -f "$_tpl/ca.key" "$_tpl/dc.csr" "$_tpl/dc.ext" "$_tls/ca.srl"
	chmod 0644 "$_tls/ca.pem" "$_tls/cert.pem"
	_samba_ad_account_list | while read -r _kind _name _uid _gid; do
		_o=
		if [ "$_kind" = user ]; then
			[ "$_uid" != - ] && _o="--uid-number=$_uid --gid-number=$_gid
				--unix-home=/home/$_name --login-shell=/bin/sh --nis-domain=nfskeys"
			# shellcheck disable=SC2086
			TDB_NO_FSYNC=1 samba-tool user add "$_name" --random-password $_o \
				-s "$_tpl/etc/smb.conf" -H "$_tpl/private/sam.ldb" || exit 1
		else
			[ "$_gid" != - ] && _o="--gid-number=$_gid --nis-domain=nfskeys"
			# shellcheck disable=SC2086
			TDB_NO_FSYNC=1 samba-tool group add "$_name" $_o \
				-s "$_tpl/etc/smb.conf" -H "$_tpl/private/sam.ldb" || exit 1
		fi
	done >>"$_tpl/provision.log" 2>&1 || return 1
	_samba_ad_account_list | while read -r _kind _name _uid _gid; do
		_sid=$(ldbsearch -H "$_tpl/private/sam.ldb" "(sAMAccountName=$_name)" objectSid |
			sed -n 's/^objectSid: //p')
		[ -n "$_sid" ] || exit 1
		echo "$_name $_kind $_sid $_uid $_gid"
	done >"$_tpl/accounts" || return 1
	echo "$_tpl" >"$_tpl/template-path"
}

# N more accounts ($2) into the template $1, before its DC ever starts: one LDIF through
# ldbadd on its sam.ldb, so Samba's own modules allocate the RIDs and fill in what a DC
# stores; some 10 ms an account here at first, growing with the database (10000 take
# about 100 s of CPU, 2000 about 5 s).  Three quarters users bu00001..., a quarter groups
# bg00001...; every tenth user uidNumber 100000+i and gidNumber 20001, every tenth group
# gidNumber 200000+i, and a few ids at 2^31 (AD keeps them as signed 32-bit integers:
# 2147483648 is stored as -2147483648): bu00003 uidNumber 2147483647, bu00005 2147483648,
# bu00007 3000000100, bu00009 4294967294; bg00003 gidNumber 2147483648, bg00005
# 3500000000.  Appended to the template's accounts file like the others.
_samba_ad_bulk_add() {
	_d=$1 _n=$2
	awk -v n="$_n" -v base="$SAMBA_AD_BASEDN" '
		function s32(v) { return sprintf("%.0f", v >= 2147483648 ? v - 4294967296 : v) }
		# account i of class c ("user" or "group"), its id v (the uidNumber of a user,
		# the gidNumber of a group; none when 0)
		function account(c, i, v) {
			printf "dn: CN=b%s%05d,CN=Users,%s\nobjectClass: %s\n", substr(c, 1, 1), i, base, c
			printf "sAMAccountName: b%s%05d\n", substr(c, 1, 1), i
			if (v && c == "user")
				printf "uidNumber: %s\ngidNumber: 20001\n", s32(v)
			else if (v)
				printf "gidNumber: %s\n", s32(v)
			print ""
		}
		BEGIN {
			nu = n - int(n / 4)
			id["user", 3] = 2147483647; id["user", 5] = 2147483648
			id["user", 7] = 3000000100; id["user", 9] = 4294967294
			id["group", 3] = 2147483648; id["group", 5] = 3500000000
			for (i = 1; i <= n; i++) {
				c = i <= nu ? "user" : "group"; k = i <= nu ? i : i - nu
				v = (c, k) in id ? id[c, k] : k % 10 ? 0 : (c == "user" ? 100000 : 200000) + k
				account(c, k, v)
			}
		}' >"$_d/bulk.ldif"
	TDB_NO_FSYNC=1 ldbadd --nosync -H "$_d/private/sam.ldb" "$_d/bulk.ldif" \
		>>"$_d/provision.log" 2>&1 || return 1
	rm -f "$_d/bulk.ldif"
	# "NAME KIND SID UIDNUMBER GIDNUMBER", ids unsigned, - for none
	ldbsearch -H "$_d/private/sam.ldb" '(|(sAMAccountName=bu*)(sAMAccountName=bg*))' \
		sAMAccountName objectSid uidNumber gidNumber objectClass 2>/dev/null | awk '
		function u32(v) { return v == "-" ? v : sprintf("%.0f", v < 0 ? v + 4294967296 : v) }
		function out() { if (name != "") print name, kind, sid, u32(uid), u32(gid) }
		/^dn: / { out(); name = ""; kind = "user"; sid = ""; uid = "-"; gid = "-" }
		/^objectClass: group$/ { kind = "group" }
		/^sAMAccountName: / { name = $2 }
		/^objectSid: / { sid = $2 }
		/^uidNumber: / { uid = $2 }
		/^gidNumber: / { gid = $2 }
		END { out() }' | sort >"$_d/accounts.bulk"
	[ "$(wc -l <"$_d/accounts.bulk")" = "$_n" ] || return 1
	cat "$_d/accounts.bulk" >>"$_d/accounts"
}

# The template $1 made again by "$3 $1.new" (a command that fills that new directory,
# its log in provision.log) unless its key is $_key; $2 says what was done, for the log.
_samba_ad_make() {
	_dir=$1 _what=$2
	shift 2
	[ "$(cat "$_dir/key" 2>/dev/null)" = "$_key" ] && return 0
	rm -rf "$_dir" "$_dir.new"
	_t0=$(date +%s)
	if ! "$@" "$_dir.new"; then
		tail -n 20 "$_dir.new/provision.log" >&2
		return 1
	fi
	echo "$_key" >"$_dir.new/key"
	mv "$_dir.new" "$_dir"
	echo "# samba-ad: $_what in $(($(date +%s) - _t0)) s" >&2
}

# A copy of the template $_base in $2 with $1 accounts more
_samba_ad_bulk_copy() {
	_old=$(cat "$_base/template-path")
	cp -a "$_base" "$2" && rm -f "$2/key" && sed -i "s#$_old#$2#g" "$2/etc/smb.conf" &&
		echo "$2" >"$2/template-path" && _samba_ad_bulk_add "$2" "$1"
}

_samba_ad_template_key() {
	echo "$(samba -V) $(cksum <"$top_srcdir/tests/harness/samba-ad.sh")"
}

# The template: kept while Samba's version and this file are the same.  2: the accounts
# of SAMBA_AD_BULK could not be added.
_samba_ad_template() {
	_base="$top_builddir/tests/samba-ad-template"
	_key=$(_samba_ad_template_key)
	_n=${SAMBA_AD_BULK:-0}
	case $_n in
	'' | *[!0-9]*) echo "SAMBA_AD_BULK=$_n: not a number of accounts" >&2; return 2 ;;
	esac
	mkdir -p "$top_builddir/tests" 2>/dev/null
	if [ -w "$top_builddir/tests" ]; then
		exec 8>"$_base.lock"
		flock 8
	elif [ -e "$_base.lock" ]; then
		# a build tree this side cannot write (the kernel guest's view of a clone under
		# /tmp): the template the host made, read as it is, under a shared lock
		exec 8<"$_base.lock"
		flock -s 8
	fi
	SAMBA_AD_TEMPLATE=$_base
	_samba_ad_make "$_base" "provisioned the template" _samba_ad_provision ||
		{ exec 8>&-; return 1; }
	if [ "$_n" -gt 0 ]; then
		SAMBA_AD_TEMPLATE="$_base-bulk$_n"
		_samba_ad_make "$SAMBA_AD_TEMPLATE" "added $_n accounts to a template" \
			_samba_ad_bulk_copy "$_n" || { exec 8>&-; return 2; }
	fi
	exec 8>&-
}

# t_samba_ad_template_prepare: the template made on the host ahead of a guest test that
# uses it (make samba-ad-template); never fails, a guest test without it skips, naming it
t_samba_ad_template_prepare() {
	[ "$(id -u)" = 0 ] || { echo "samba-ad: the template needs root" >&2; return 0; }
	PATH="$PATH:/usr/sbin:/sbin"
	(skip_all() { echo "samba-ad: no template: $*" >&2; exit 1; }; _samba_ad_tools) || return 0
	_samba_ad_template || echo "samba-ad: provisioning the template failed" >&2
	return 0
}

# t_samba_ad_template_ready: true when the template exists and is this harness's own
t_samba_ad_template_ready() {
	PATH="$PATH:/usr/sbin:/sbin"
	command -v samba >/dev/null 2>&1 &&
		[ "$(cat "$top_builddir/tests/samba-ad-template/key" 2>/dev/null)" = \
			"$(_samba_ad_template_key)" ]
}

t_samba_ad_start() {
	[ "$(id -u)" = 0 ] || skip_all "needs root (samba, network and mount namespaces)"
	_samba_ad_tools
	unshare --net --mount true 2>/dev/null ||
		skip_all "cannot make network and mount namespaces here"
	# (2: the accounts of SAMBA_AD_BULK could not be added, the harness's failure)
	_samba_ad_template || { [ $? = 2 ] && return 1
		skip_all "samba-tool domain provision failed (log above)"; }
	SAMBA_AD_DIR="$T_TMP/samba-ad"
	mkdir -p "$SAMBA_AD_DIR" && chmod 700 "$SAMBA_AD_DIR"
	_dc="$SAMBA_AD_DIR/dc"
	cp -a "$SAMBA_AD_TEMPLATE" "$_dc" || return 1
	rm -rf "$_dc/run" && mkdir -p "$_dc/run"
	_old=$(cat "$_dc/template-path")
	sed -i "s#$_old#$_dc#g" "$_dc/etc/smb.conf"
	SAMBA_AD_CONF="$_dc/etc/smb.conf"
	SAMBA_AD_ADMINPW_FILE="$_dc/adminpw"
	SAMBA_AD_ACCOUNTS="$_dc/accounts"
	SAMBA_AD_SID=$(awk 'NR == 1 { sub(/-[0-9]+$/, "", $3); print $3 }' "$SAMBA_AD_ACCOUNTS")
	printf '127.0.0.1\tlocalhost\n%s\tdc1.nfskeys.test dc1\n%s\tmember1.nfskeys.test member1\n' \
		"$SAMBA_AD_IP" 127.0.0.3 >"$SAMBA_AD_DIR/hosts"
	printf 'nameserver %s\n' "$SAMBA_AD_IP" >"$SAMBA_AD_DIR/resolv.conf"
	_samba_ns_hold "$SAMBA_AD_DIR/ns-dc.ready" \
		"ip link set lo up && ip addr add $SAMBA_AD_IP/8 dev lo &&
		 ip addr add 127.0.0.3/8 dev lo && $(_samba_ns_mounts "$_dc/run" "$_dc/varlog")" \
		unshare --net --mount --propagation private ||
		skip_all "cannot set up the namespaces (log above)"
	SAMBA_AD_NS_PID=$_hold_pid
	t_on_exit t_samba_ad_stop
	nsenter -t "$SAMBA_AD_NS_PID" --net --mount samba -i -s "$SAMBA_AD_CONF" \
		>"$SAMBA_AD_DIR/samba.log" 2>&1 </dev/null &
	SAMBA_AD_PID=$!
	# LDAP, Kerberos (for the join) and DNS (the SRV records of the DC) listening on TCP,
	# the DC's own winbindd (its smbd maps sessions through it), then LDAP answering.  The
	# cheap checks first: under TCG (tests/kernel/cifs-ad-acl.ktest) a poll that starts
	# ldbsearch or python takes the guest's one CPU from samba, and a start took minutes.
	if ! _samba_wait "_samba_ad_listening 389 88 53" 30 ||
		! _samba_wait "nsenter -t $SAMBA_AD_NS_PID --net --mount wbinfo -p" 30 ||
		! _samba_wait "t_samba_ad_net ldbsearch -H $SAMBA_AD_URI -s base -b '' dnsHostName |
			grep -q dnsHostName" 30; then
		tail -n 20 "$SAMBA_AD_DIR/samba.log" >&2
		return 1
	fi
}

# _samba_wait CMD SECS: t_wait_for CMD, which polls every 0.1 s; with SAMBA_AD_POLL=1 once
# a second (a guest under TCG: each poll's programs take its one CPU from the daemons
# being waited for, which take a minute to start there)
_samba_wait() {
	[ "${SAMBA_AD_POLL:-}" = 1 ] || { t_wait_for "$@"; return; }
	_sw=$2
	[ "$_sw" -ge "$T_WAIT_GUARD" ] 2>/dev/null || _sw=$T_WAIT_GUARD
	while [ "$_sw" -gt 0 ]; do
		eval "$1" >/dev/null 2>&1 && return 0
		sleep 1
		_sw=$((_sw - 1))
	done
	return 1
}

# whether the DC listens on each TCP port $@ of its address
_samba_ad_listening() {
	_ss=$(t_samba_ad_net ss -ltnH) || return 1
	for _port; do
		case $_ss in *" $SAMBA_AD_IP:$_port "*) ;; *) return 1 ;; esac
	done
}

t_samba_ad_net() {
	nsenter -t "$SAMBA_AD_NS_PID" --net "$@"
}

t_samba_ad_sid() {
	awk -v n="$1" '$1 == n { print $3 }' "$SAMBA_AD_ACCOUNTS"
}

t_samba_ad_objects() {
	ldbsearch -H "$SAMBA_AD_DIR/dc/private/sam.ldb" \
		'(|(objectClass=user)(objectClass=group)(objectClass=foreignSecurityPrincipal))' \
		objectSid objectClass sAMAccountName cn 2>/dev/null | awk '
		/^dn: / { if (sid != "") print sid, kind, name; sid = ""; kind = ""; name = "" }
		/^objectSid: / { sid = $2 }
		/^objectClass: user$/ { kind = "user" }
		/^objectClass: group$/ { kind = "group" }
		/^objectClass: foreignSecurityPrincipal$/ { kind = "wellknown" }
		/^sAMAccountName: / { name = substr($0, 17) }
		/^cn: / { if (name == "") name = substr($0, 5) }
		END { if (sid != "") print sid, kind, name }'
}

t_samba_member_join() {
	SAMBA_MEMBER_DIR="$SAMBA_AD_DIR/member"
	_m=$SAMBA_MEMBER_DIR
	mkdir -p "$_m/run" "$_m/private" "$_m/state" "$_m/cache" "$_m/lock"
	cat >"$_m/krb5.conf" <<EOF
[libdefaults]
	default_realm = $SAMBA_AD_REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	rdns = false
[realms]
	$SAMBA_AD_REALM = {
		kdc = $SAMBA_AD_IP
		admin_server = $SAMBA_AD_IP
		kpasswd_server = $SAMBA_AD_IP
	}
[domain_realm]
	.nfskeys.test = $SAMBA_AD_REALM
EOF
	cat >"$_m/smb.conf.base" <<EOF
[global]
	workgroup = $SAMBA_AD_DOMAIN
	realm = $SAMBA_AD_REALM
	security = ads
	netbios name = MEMBER1
	interfaces = 127.0.0.3
	bind interfaces only = yes
	name resolve order = host
	private dir = $_m/private
	state directory = $_m/state
	cache directory = $_m/cache
	lock directory = $_m/lock
	pid directory = $_m/run
	ncalrpc dir = $_m/run/ncalrpc
	winbindd socket directory = $_m/run/winbindd
	log file = $_m/log.%m
	panic action =
	kerberos method = secrets only
	load printers = no
	disable spoolss = yes
EOF
	cp "$_m/smb.conf.base" "$_m/smb.conf"
	(umask 077; printf 'username = Administrator\npassword = %s\ndomain = %s\n' \
		"$(cat "$SAMBA_AD_ADMINPW_FILE")" "$SAMBA_AD_DOMAIN" >"$_m/auth")
	_samba_ns_hold "$_m/ns.ready" "$(_samba_ns_mounts "$_m/run" "$_m/varlog")" \
		nsenter -t "$SAMBA_AD_NS_PID" --net unshare --mount --propagation private || return 1
	SAMBA_MEMBER_NS_PID=$_hold_pid
	if ! _samba_member net ads join -s "$_m/smb.conf" -A "$_m/auth" --no-dns-updates \
		-S dc1.nfskeys.test >"$_m/join.log" 2>&1; then
		cat "$_m/join.log" >&2
		return 1
	fi
	rm -f "$_m/auth"
	# the state right after the join, for each winbindd run
	mkdir -p "$_m/joined"
	cp -a "$_m/private" "$_m/state" "$_m/cache" "$_m/lock" "$_m/joined/"
}

_samba_member() {
	nsenter -t "$SAMBA_MEMBER_NS_PID" --net --mount \
		env KRB5_CONFIG="$SAMBA_MEMBER_DIR/krb5.conf" \
		KRB5CCNAME="FILE:$SAMBA_MEMBER_DIR/ccache" \
		"$@"
}

t_wbinfo() {
	_samba_member wbinfo "$@"
}

# wbinfo prints ids as signed ints (2147483648 as -2147483648): taken back modulo 2^32.
t_wbinfo_ids() {
	printf '%s\n' "$@" | _samba_batches | while read -r _ids; do
		t_wbinfo --sids-to-unix-ids "$_ids" </dev/null
	done | awk '
		function u32(n) { return sprintf("%.0f", n < 0 ? n + 4294967296 : n) }
		$2 != "->" { print "unexpected wbinfo output: " $0 > "/dev/stderr"; next }
		$3 == "unmapped" { print $1, "unmapped", "unmapped"; next }
		$3 == "uid" { print $1, u32($4), "unmapped"; next }
		$3 == "gid" { print $1, "unmapped", u32($4); next }
		$3 == "uid/gid" { print $1, u32($4), u32($4); next }
		{ print "unexpected wbinfo output: " $0 > "/dev/stderr" }'
}

# the lines of stdin, comma-separated, 500 to an output line
_samba_batches() {
	awk '{ printf "%s%s", NR == 1 ? "" : (NR - 1) % 500 ? "," : "\n", $0 }
		END { if (NR) print "" }'
}

t_wbinfo_sids() {
	printf '%s\n' "$@" >"$SAMBA_MEMBER_DIR/ids.in"
	_samba_batches <"$SAMBA_MEMBER_DIR/ids.in" | while read -r _ids; do
		t_wbinfo --unix-ids-to-sids "$_ids" </dev/null || exit 1
	done >"$SAMBA_MEMBER_DIR/ids.out" || return 1
	[ "$(wc -l <"$SAMBA_MEMBER_DIR/ids.out")" = $# ] ||
		{ echo "wbinfo --unix-ids-to-sids: not one line per id" >&2; return 1; }
	paste -d ' ' "$SAMBA_MEMBER_DIR/ids.in" "$SAMBA_MEMBER_DIR/ids.out" |
		sed 's/NOT MAPPED$/unmapped/'
}

t_samba_winbind_start() {
	_m=$SAMBA_MEMBER_DIR
	t_samba_winbind_stop
	# (run/ itself stays: the member's namespace has it bound on /run/samba)
	rm -rf "$_m/private" "$_m/state" "$_m/cache" "$_m/lock" "$_m/run/"*
	cp -a "$_m/joined/private" "$_m/joined/state" "$_m/joined/cache" "$_m/joined/lock" "$_m/"
	cat "$_m/smb.conf.base" "$1" >"$_m/smb.conf"
	# a simple command, so that $! is winbindd itself (setsid, nsenter and env exec it;
	# a session of its own: whatever it signals on the way out, the test is not in it)
	setsid nsenter -t "$SAMBA_MEMBER_NS_PID" --net --mount env KRB5_CONFIG="$_m/krb5.conf" \
		winbindd -F --no-process-group -s "$_m/smb.conf" >"$_m/winbindd.out" 2>&1 </dev/null &
	SAMBA_WINBINDD_PID=$!
	# up (its socket there: a shell test, no program taking the CPU it starts with under
	# TCG), and its connection to the DC (netlogon) works (wbinfo -P waits for it)
	if ! _samba_wait "[ -S '$_m/run/winbindd/pipe' ]" 30 ||
		! _samba_wait "t_wbinfo -P" 30; then
		tail -n 20 "$_m/winbindd.out" "$_m/log.winbindd" >&2
		return 1
	fi
}

# whether process $1 still runs (a zombie child of the test's shell does not).  No
# program run here or below: under TCG each exec costs a tenth of a second or more.
_samba_alive() {
	_st=
	read -r _st <"/proc/$1/stat" 2>/dev/null || return 1
	case $_st in *") Z "*) return 1 ;; esac
	return 0
}

_samba_all_dead() {
	for _q; do _samba_alive "$_q" && return 1; done
	return 0
}

_samba_stop_pid() {
	[ -n "$1" ] || return 0
	kill "$1" 2>/dev/null
	t_wait_for "_samba_all_dead $1" 10 || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# Stop every process in the mount namespace of holder $1 but the holder: what a daemon
# started (winbindd's samba-dcerpcd and its rpcd_* workers outlive it) goes too, and
# nothing else can be in that namespace.
_samba_ns_kill() {
	[ -n "$1" ] || return 0
	_ns=$(readlink "/proc/$1/ns/mnt") || return 0
	for _sig in TERM KILL; do
		# every process's namespace in one ls (not a readlink per process)
		# shellcheck disable=SC2012
		_left=$(ls -l /proc/[0-9]*/ns/mnt 2>/dev/null | awk -v ns="$_ns" -v h="$1" '
			$NF == ns { split($(NF - 2), p, "/"); if (p[3] != h) printf " %s", p[3] }')
		# shellcheck disable=SC2086
		[ -n "$_left" ] && kill -"$_sig" $_left 2>/dev/null
		[ -z "$_left" ] && return 0
		[ $_sig = TERM ] && t_wait_for "_samba_all_dead$_left" 10 && return 0
	done
	return 0
}

t_samba_winbind_stop() {
	_samba_stop_pid "$SAMBA_WINBINDD_PID"
	SAMBA_WINBINDD_PID=
	_samba_ns_kill "$SAMBA_MEMBER_NS_PID"
}

t_samba_ad_stop() {
	t_samba_winbind_stop
	_samba_stop_pid "$SAMBA_AD_PID"
	SAMBA_AD_PID=
	_samba_ns_kill "$SAMBA_AD_NS_PID"
	_samba_stop_pid "$SAMBA_MEMBER_NS_PID"
	SAMBA_MEMBER_NS_PID=
	_samba_stop_pid "$SAMBA_AD_NS_PID"
	SAMBA_AD_NS_PID=
}

# t_samba_ad_gss_keytab FILE: what a SASL GSSAPI bind of the member to the DC needs: the
# DC's LDAP service principals (ldap/dc1.nfskeys.test, ldap/DC1, which a DC registers for
# itself through samba_spnupdate, run by the dnsupdate service the harness's DC goes
# without) and the member's machine keytab in FILE (net ads keytab create, from the
# machine password the join stored; never the host's /etc/krb5.keytab).  After
# t_samba_member_join.  Sets SAMBA_AD_KEYTAB.
t_samba_ad_gss_keytab() {
	_sam="$SAMBA_AD_DIR/dc/private/sam.ldb"
	_dc_dn=$(ldbsearch -H "$_sam" '(sAMAccountName=DC1$)' dn | sed -n 's/^dn: //p')
	printf 'dn: %s\nchangetype: modify\nadd: servicePrincipalName\n%s\n%s\n' "$_dc_dn" \
		'servicePrincipalName: ldap/dc1.nfskeys.test' 'servicePrincipalName: ldap/DC1' |
		ldbmodify -H "$_sam" >"$SAMBA_MEMBER_DIR/spn.log" 2>&1 ||
		{ cat "$SAMBA_MEMBER_DIR/spn.log" >&2; return 1; }
	nsenter -t "$SAMBA_MEMBER_NS_PID" --net --mount \
		env KRB5_CONFIG="$SAMBA_MEMBER_DIR/krb5.conf" \
		net ads keytab create -P -s "$SAMBA_MEMBER_DIR/smb.conf" \
		--option='kerberos method = dedicated keytab' \
		--option="dedicated keytab file = FILE:$1" >"$SAMBA_MEMBER_DIR/keytab.log" 2>&1
	[ -s "$1" ] || { cat "$SAMBA_MEMBER_DIR/keytab.log" >&2; return 1; }
	SAMBA_AD_KEYTAB=$1
}

# t_samba_member_run CMD...: CMD in the member's namespaces (its /etc/hosts names the
# DC), with its krb5.conf and a KRB5CCNAME in a directory that does not exist (a GSSAPI
# bind must neither need nor write a credential cache of the environment's)
t_samba_member_run() {
	nsenter -t "$SAMBA_MEMBER_NS_PID" --net --mount \
		env KRB5_CONFIG="$SAMBA_MEMBER_DIR/krb5.conf" \
		KRB5CCNAME="FILE:$SAMBA_MEMBER_DIR/no-such-dir/ccache" "$@"
}

# t_samba_wb_ids_of FILE: winbind's ids (t_wbinfo_ids) of the SIDs in FILE's first column
t_samba_wb_ids_of() {
	# shellcheck disable=SC2046
	t_wbinfo_ids $(awk '{ print $1 }' "$1")
}

# t_samba_agree DESC UNIT MIN TABLE SELECT DIFF MAPPED HEADER: one check that nfskeys and
# winbind agree over the rows of TABLE that the awk program SELECT keeps: none printed
# by the awk program DIFF, and at least MIN printed by MAPPED (the rows mapped on both
# sides); on failure HEADER and the first 50 differing rows as diagnostics.  Fields split
# on SAMBA_AGREE_FS (default a space).
t_samba_agree() {
	_d=$1 _unit=$2 _min=$3 _tab=$4 _sel=$5 _diff=$6 _mapped=$7 _hdr=$8
	_fs=${SAMBA_AGREE_FS:- }
	awk -F "$_fs" "$_sel" "$_tab" >"$T_TMP/agree.sel"
	_n=$(wc -l <"$T_TMP/agree.sel")
	_m=$(awk -F "$_fs" "$_mapped" "$T_TMP/agree.sel" | wc -l)
	awk -F "$_fs" "$_diff" "$T_TMP/agree.sel" >"$T_TMP/agree.diff"
	if [ "$_n" -gt 0 ] && [ "$_m" -ge "$_min" ] && [ ! -s "$T_TMP/agree.diff" ]; then
		ok "$_d ($_n $_unit, $_m mapped)"
	else
		not_ok "$_d ($_n $_unit, $_m mapped)"
		diag "$_hdr"
		head -n 50 "$T_TMP/agree.diff" | sed 's/^/#   /'
		[ "$(wc -l <"$T_TMP/agree.diff")" -le 50 ] ||
			diag "... $(wc -l <"$T_TMP/agree.diff") rows differ in all"
	fi
}
