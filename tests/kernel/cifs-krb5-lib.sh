# Sourced by the sec=krb5 CIFS kernel tests (tests/kernel/cifs-krb5.ktest,
# bench/cifs-spnego.ktest) in the guest, after guest-lib.sh: a KDC (tests/harness/kdc.sh)
# and Samba's smbd as a standalone server that accepts Kerberos with a dedicated keytab
# (smbd offers krb5 outside a domain when 'kerberos method' names a keytab; ksmbd would
# need ksmbd-tools, which Debian 12 lacks in the install list).
# shellcheck shell=sh
. "$top_srcdir/tests/harness/kdc.sh"

CK_HOST=kbsrv.nfskeys.test
CK_SHARE=/srv/smbkrb
CK_RESULTS=${KT_RESULTS:-/nfskeys-results}

# ck_start: the realm, cifs/$CK_HOST in smbd's keytab, /etc/krb5.conf and /etc/hosts for
# the helpers (request-key runs them with an empty environment), smbd on 127.0.0.1:445.
ck_start() {
	kdc_start NFSKEYS.TEST
	cp "$KRB5_CONFIG" /etc/krb5.conf && chmod 0644 /etc/krb5.conf
	export KRB5_CONFIG=/etc/krb5.conf
	printf '127.0.0.1\t%s kbsrv\n' "$CK_HOST" >>/etc/hosts
	kdc_addprinc "cifs/$CK_HOST" || return 1
	# MIT 1.20 puts a PAC in every ticket; smbd outside a domain refuses one
	# ("Unexpected PAC ... in standalone mode"), so the service asks for none
	kdc_kadmin "modprinc +no_auth_data_required cifs/$CK_HOST" || return 1
	CK_S=$T_TMP/samba
	mkdir -p "$CK_S/private" "$CK_S/lock" "$CK_S/state" "$CK_S/cache" "$CK_S/pid" \
		"$CK_S/ncalrpc" /run/samba "$CK_SHARE"
	chmod 1777 "$CK_SHARE"
	kdc_ktadd "$CK_S/smb.keytab" "cifs/$CK_HOST" || return 1
	cat >"$CK_S/smb.conf" <<-EOC
	[global]
		server role = standalone server
		realm = $KDC_REALM
		kerberos method = dedicated keytab
		dedicated keytab file = FILE:$CK_S/smb.keytab
		interfaces = lo
		bind interfaces only = yes
		disable netbios = yes
		smb ports = 445
		server min protocol = SMB2_10
		passdb backend = tdbsam:$CK_S/private/passdb.tdb
		private dir = $CK_S/private
		lock directory = $CK_S/lock
		state directory = $CK_S/state
		cache directory = $CK_S/cache
		pid directory = $CK_S/pid
		ncalrpc dir = $CK_S/ncalrpc
		log file = $CK_RESULTS/smbd.log
		log level = ${CK_SMB_LOGLEVEL:-3}
		load printers = no
		printcap name = /dev/null
		map to guest = never
	[share]
		path = $CK_SHARE
		read only = no
		create mask = 0644
	EOC
	setsid smbd -F --no-process-group -s "$CK_S/smb.conf" </dev/null \
		>>"$CK_RESULTS/smbd.log" 2>&1 &
	CK_SMBD_PID=$!
	t_on_exit "kill $CK_SMBD_PID"
	modprobe cifs
	t_wait_for "ss -ltn | grep -q '127.0.0.1:445 '" 20
}

# ck_route ours|lean|cifs.upcall [WRAP]: which helper answers cifs.spnego keys.  Ours is the
# shipped request-key.d file's line (nfskeys-upcall-spnego; with WRAP, the same program); cifs-utils' is its own line.  WRAP (a program) is put
# in front of the helper on both routes (the bench times the helper with it).
ck_route() {
	rm -f /etc/request-key.d/cifs.spnego.conf /etc/request-key.d/nfskeys.conf
	case $1 in
	ours)
		if [ -n "${2:-}" ]; then
			printf 'create\tcifs.spnego\t*\t*\t%s %s %%k %%d\n' "$2" \
				"$libexecdir/nfskeys-upcall-spnego" >/etc/request-key.d/nfskeys.conf
		else
			cp "$pkgdatadir/request-key.d/nfskeys.conf" /etc/request-key.d/nfskeys.conf
		fi ;;
	lean) # the bench's third route: the lean nfskeys-upcall in front (the line as it
		# once was), which execs the spnego helper
		printf 'create\tcifs.spnego\t*\t*\t%s %s %%k %%d\n' "${2:-}" \
			"$sbindir/nfskeys-upcall" >/etc/request-key.d/nfskeys.conf ;;
	cifs.upcall)
		printf 'create\tcifs.spnego\t*\t*\t%s /usr/sbin/cifs.upcall %%k\n' "${2:-}" \
			>/etc/request-key.d/cifs.spnego.conf ;;
	esac
}

# ck_mount SRC DIR OPTIONS: mount -t cifs, once more when the first try finds smbd too slow
# to answer (EHOSTDOWN, "Host is down": a new smbd child under TCG on a loaded host can take
# longer than the client waits); errors in $T_TMP/mount.err.
ck_mount() {
	timeout 90 mount -t cifs "$1" "$2" -o "$3" >"$T_TMP/mount.err" 2>&1 && return 0
	grep -q 'error(112)' "$T_TMP/mount.err" || return 1
	sed 's/^/# first try: /' "$T_TMP/mount.err"
	sleep 2
	timeout 90 mount -t cifs "$1" "$2" -o "$3" >"$T_TMP/mount.err" 2>&1
}

# ck_user NAME UID GID PASSWORD: a guest user with a principal of the same name.
ck_user() {
	kt_add_user "$1" "$2" "$3" && kdc_addprinc "$1" "$4"
}
