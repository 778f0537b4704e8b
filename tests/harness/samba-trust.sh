# A second Samba AD domain, TRUST (realm TRUST.TEST, its DC dc2 on 127.0.0.4), next to
# the domain of tests/harness/samba-ad.sh, and a forest trust between the two, so that
# the member of the first domain maps the second's accounts (source after samba-ad.sh;
# root only).
#
# dc2 runs in the first DC's network namespace, in a mount namespace of its own (its own
# /run/samba, as the first DC's); the hosts file of the first names dc2 too.  DNS: every
# namespace asks dc2 (resolv.conf), which answers trust.test and forwards the rest to
# dc1 ("dns forwarder"); dc1 forwards nothing, so no query goes round.
#
# Provisioning is cached as the first domain's is: a template in
# $top_builddir/tests/samba-trust-template, made again when Samba's version or this file
# changes.
#
#   t_samba_trust_start     after t_samba_ad_start and t_samba_member_join: copy the
#                           template (provisioning it first if needed), start dc2, create
#                           the trust (samba-tool domain trust create --type=forest
#                           --direction=both, run on dc1 as the system, TRUST's
#                           administrator's password from its 0600 file through
#                           PASSWD_FILE), give the member's Kerberos the second realm.
#                           Sets SAMBA_TRUST_DIR (its adminpw: TRUST's administrator's
#                           password, 0600) SAMBA_TRUST_SID SAMBA_TRUST_ACCOUNTS
#                           ("NAME KIND SID UIDNUMBER GIDNUMBER").  Its names and
#                           BASEDN: SAMBA_TRUST_REALM SAMBA_TRUST_DOMAIN SAMBA_TRUST_BASEDN
#                           SAMBA_TRUST_IP.  Returns 1 when the trust cannot be made,
#                           with what failed and its error on the first line of
#                           SAMBA_TRUST_ERR, the end of its output on the next ones.
#   t_samba_trust_objects   t_samba_ad_objects of dc2 (its users, computers and groups,
#                           BUILTIN's and the well-known SIDs it stores)
#   t_samba_trust_gss_spn   register dc2's LDAP service principal (ldap/dc2.trust.test)
#                           for a GSSAPI bind from the member through the trust
#   t_samba_trust_stop      stop dc2 (registered with t_on_exit)
#
# The accounts of the second domain:
#   user carol uidNumber 30002 gidNumber 40002   group tstaff gidNumber 40002
#   user dave  (none)                            group tplain (none)

SAMBA_TRUST_REALM=TRUST.TEST
SAMBA_TRUST_DOMAIN=TRUST
SAMBA_TRUST_BASEDN=DC=trust,DC=test
SAMBA_TRUST_IP=127.0.0.4
SAMBA_TRUST_NS_PID=
SAMBA_TRUST_PID=
SAMBA_TRUST_ERR=

_samba_trust_account_list() {
	cat <<'EOF'
user carol 30002 40002
user dave - -
group tstaff - 40002
group tplain - -
EOF
}

_samba_trust_provision() {
	_tpl=$1
	mkdir -p "$_tpl" && chmod 700 "$_tpl" || return 1
	(umask 077; : >"$_tpl/provision.log")
	TDB_NO_FSYNC=1 unshare --net sh -c 'ip link set lo up && exec "$@"' sh \
		samba-tool domain provision --use-rfc2307 --realm="$SAMBA_TRUST_REALM" \
		--domain="$SAMBA_TRUST_DOMAIN" --server-role=dc --dns-backend=SAMBA_INTERNAL \
		--host-name=dc2 --host-ip="$SAMBA_TRUST_IP" --targetdir="$_tpl" \
		--option="interfaces = $SAMBA_TRUST_IP" --option="bind interfaces only = yes" \
		>>"$_tpl/provision.log" 2>&1 || return 1
	(umask 077; sed -n 's/.*Admin password: *//p' "$_tpl/provision.log" >"$_tpl/adminpw")
	[ -s "$_tpl/adminpw" ] || return 1
	sed -i 's/\(Admin password:\).*/\1 (in adminpw)/' "$_tpl/provision.log"
	# as the first DC, and names outside trust.test forwarded to it
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
	dns forwarder = $SAMBA_AD_IP\\
	server services = s3fs, rpc, ldap, cldap, kdc, winbindd, dns" \
		"$_tpl/etc/smb.conf" || return 1
	mkdir -p "$_tpl/run"
	_samba_trust_account_list | while read -r _kind _name _uid _gid; do
		_o=
		if [ "$_kind" = user ]; then
			[ "$_uid" != - ] && _o="--uid-number=$_uid --gid-number=$_gid
				--unix-home=/home/$_name --login-shell=/bin/sh --nis-domain=trust"
			# shellcheck disable=SC2086
			TDB_NO_FSYNC=1 samba-tool user add "$_name" --random-password $_o \
				-s "$_tpl/etc/smb.conf" -H "$_tpl/private/sam.ldb" || exit 1
		else
			[ "$_gid" != - ] && _o="--gid-number=$_gid --nis-domain=trust"
			# shellcheck disable=SC2086
			TDB_NO_FSYNC=1 samba-tool group add "$_name" $_o \
				-s "$_tpl/etc/smb.conf" -H "$_tpl/private/sam.ldb" || exit 1
		fi
	done >>"$_tpl/provision.log" 2>&1 || return 1
	_samba_trust_account_list | while read -r _kind _name _uid _gid; do
		_sid=$(ldbsearch -H "$_tpl/private/sam.ldb" "(sAMAccountName=$_name)" objectSid |
			sed -n 's/^objectSid: //p')
		[ -n "$_sid" ] || exit 1
		echo "$_name $_kind $_sid $_uid $_gid"
	done >"$_tpl/accounts" || return 1
	echo "$_tpl" >"$_tpl/template-path"
}

_samba_trust_template() {
	_base="$top_builddir/tests/samba-trust-template"
	_key="$(samba -V) $(cksum <"$top_srcdir/tests/harness/samba-trust.sh")"
	mkdir -p "$top_builddir/tests"
	exec 8>"$_base.lock"
	flock 8
	if [ "$(cat "$_base/key" 2>/dev/null)" != "$_key" ]; then
		rm -rf "$_base" "$_base.new"
		_t0=$(date +%s)
		if ! _samba_trust_provision "$_base.new"; then
			tail -n 20 "$_base.new/provision.log" >&2
			exec 8>&-
			return 1
		fi
		echo "$_key" >"$_base.new/key"
		mv "$_base.new" "$_base"
		echo "# samba-trust: provisioned the template in $(($(date +%s) - _t0)) s" >&2
	fi
	exec 8>&-
	SAMBA_TRUST_TEMPLATE=$_base
}

# _samba_trust_fail WHAT FILE: the trust cannot be made: WHAT and the last line of FILE
# (the error), then the end of FILE
_samba_trust_fail() {
	SAMBA_TRUST_ERR="$1: $(grep . "$2" 2>/dev/null | tail -n 1)
$(tail -n 15 "$2" 2>/dev/null)"
	return 1
}

t_samba_trust_start() {
	_samba_trust_template || { SAMBA_TRUST_ERR="provisioning the second domain failed"; return 1; }
	SAMBA_TRUST_DIR="$SAMBA_AD_DIR/dc2"
	_d=$SAMBA_TRUST_DIR
	cp -a "$SAMBA_TRUST_TEMPLATE" "$_d" ||
		{ SAMBA_TRUST_ERR="cannot copy the template to $_d"; return 1; }
	rm -rf "$_d/run" && mkdir -p "$_d/run"
	_old=$(cat "$_d/template-path")
	sed -i "s#$_old#$_d#g" "$_d/etc/smb.conf"
	SAMBA_TRUST_CONF="$_d/etc/smb.conf"
	SAMBA_TRUST_ACCOUNTS="$_d/accounts"
	SAMBA_TRUST_SID=$(awk 'NR == 1 { sub(/-[0-9]+$/, "", $3); print $3 }' "$SAMBA_TRUST_ACCOUNTS")
	# in place: the namespaces have these files bound
	printf '%s\tdc2.trust.test dc2\n' "$SAMBA_TRUST_IP" >>"$SAMBA_AD_DIR/hosts"
	printf 'nameserver %s\n' "$SAMBA_TRUST_IP" >"$SAMBA_AD_DIR/resolv.conf"
	t_samba_ad_net ip addr add "$SAMBA_TRUST_IP/8" dev lo ||
		{ SAMBA_TRUST_ERR="ip addr add $SAMBA_TRUST_IP/8 dev lo failed"; return 1; }
	_samba_ns_hold "$_d/ns.ready" "$(_samba_ns_mounts "$_d/run" "$_d/varlog")" \
		nsenter -t "$SAMBA_AD_NS_PID" --net unshare --mount --propagation private ||
		{ SAMBA_TRUST_ERR="cannot set up dc2's mount namespace (log above)"; return 1; }
	SAMBA_TRUST_NS_PID=$_hold_pid
	t_on_exit t_samba_trust_stop
	nsenter -t "$SAMBA_TRUST_NS_PID" --net --mount samba -i -s "$SAMBA_TRUST_CONF" \
		>"$_d/samba.log" 2>&1 </dev/null &
	SAMBA_TRUST_PID=$!
	if ! t_wait_for "t_samba_ad_net ldbsearch -H ldap://$SAMBA_TRUST_IP -s base -b '' \
			dnsHostName | grep -q dnsHostName &&
		nsenter -t $SAMBA_TRUST_NS_PID --net --mount wbinfo -p &&
		t_samba_ad_net python3 -c \
			'import socket; [socket.create_connection((\"$SAMBA_TRUST_IP\", p), 1) for p in (88, 53)]'" \
		30; then
		_samba_trust_fail "dc2 did not start" "$_d/samba.log"
		return 1
	fi
	# the trust, from dc1 (its local side through ncalrpc as the system)
	if ! nsenter -t "$SAMBA_AD_NS_PID" --net --mount env PASSWD_FILE="$_d/adminpw" \
		samba-tool domain trust create "$SAMBA_TRUST_REALM" --type=forest \
		--direction=both --create-location=both -U "$SAMBA_TRUST_DOMAIN\\Administrator" \
		-s "$SAMBA_AD_CONF" >"$_d/trust.log" 2>&1 </dev/null; then
		_samba_trust_fail "samba-tool domain trust create $SAMBA_TRUST_REALM --type=forest \
--direction=both --create-location=both failed" "$_d/trust.log"
		return 1
	fi
	# the member's Kerberos: both realms
	cat >>"$SAMBA_MEMBER_DIR/krb5.conf" <<EOF
[realms]
	$SAMBA_TRUST_REALM = {
		kdc = $SAMBA_TRUST_IP
	}
[domain_realm]
	.trust.test = $SAMBA_TRUST_REALM
EOF
}

t_samba_trust_objects() {
	ldbsearch -H "$SAMBA_TRUST_DIR/private/sam.ldb" \
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

t_samba_trust_stop() {
	_samba_stop_pid "$SAMBA_TRUST_PID"
	SAMBA_TRUST_PID=
	_samba_ns_kill "$SAMBA_TRUST_NS_PID"
	_samba_stop_pid "$SAMBA_TRUST_NS_PID"
	SAMBA_TRUST_NS_PID=
}

# t_samba_trust_gss_spn: dc2's LDAP service principal (ldap/dc2.trust.test), which a DC
# registers for itself through samba_spnupdate, run by the dnsupdate service the harness's
# DCs go without; a GSSAPI bind to dc2 from the first domain's member needs it
t_samba_trust_gss_spn() {
	_sam="$SAMBA_TRUST_DIR/private/sam.ldb"
	_dc_dn=$(ldbsearch -H "$_sam" '(sAMAccountName=DC2$)' dn | sed -n 's/^dn: //p')
	printf 'dn: %s\nchangetype: modify\nadd: servicePrincipalName\n%s\n' "$_dc_dn" \
		'servicePrincipalName: ldap/dc2.trust.test' |
		ldbmodify -H "$_sam" >"$SAMBA_TRUST_DIR/spn.log" 2>&1 ||
		{ cat "$SAMBA_TRUST_DIR/spn.log" >&2; return 1; }
}
