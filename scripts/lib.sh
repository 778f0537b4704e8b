# Shared by scripts/check and scripts/quickstart: the Debian packages nfskeys needs and
# an idempotent installer (apt-get update once, only when something is missing).

# Build dependencies, test services and reference tools, one per line.
NFSKEYS_PACKAGES="
autoconf automake libtool pkg-config make gcc clang libclang-rt-14-dev
libkeyutils-dev keyutils libtirpc-dev rpcsvc-proto libkrb5-dev libssl-dev
libsqlite3-dev sqlite3 libldap2-dev libmount-dev libcmocka-dev libsystemd-dev libfuse3-dev
krb5-kdc krb5-admin-server krb5-user slapd ldap-utils libsasl2-modules-gssapi-mit
cifs-utils nfs-common libnfsidmap-dev libsss-idmap-dev libpam0g-dev pamtester
python3 valgrind gnuplot-nox hyperfine groff-base iproute2
debhelper dh-exec lintian devscripts fakeroot
qemu-system-x86 busybox-static kmod samba smbclient nfs-kernel-server rpcbind dmsetup e2fsprogs
podman crun conmon
samba-ad-dc samba-ad-provision winbind ldb-tools
openafs-fileserver openafs-dbserver openafs-client openafs-krb5
"

ensure_packages() {
	missing=
	for p in $NFSKEYS_PACKAGES; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing="$missing $p"
		fi
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing packages:$missing (run as root, or install them)" >&2
		return 1
	fi
	echo "==> installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || return 1
	# slapd must not ask for an admin password on a fresh machine.
	echo "slapd slapd/no_configuration boolean true" | debconf-set-selections 2>/dev/null || true
	apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confdef \
		-o Dpkg::Options::=--force-confold $missing
}

# Configure $1 (again only when configure or the arguments changed) with the configure
# arguments after it (VAR=value ones such as CC=clang included).
configure_tree() {
	dir=$1; shift
	[ -x "$SRCDIR/configure" ] || (cd "$SRCDIR" && ./autogen.sh >/dev/null)
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ "$SRCDIR/configure" -nt "$dir/Makefile" ] ||
	   [ "$(cat "$dir/.configure-args" 2>/dev/null)" != "$*" ]; then
		(cd "$dir" && "$SRCDIR/configure" -q "$@") || return 1
		echo "$*" >"$dir/.configure-args"
	fi
}

# Configure and build in $1 with extra configure arguments after it.
build_tree() {
	dir=$1
	configure_tree "$@" || return 1
	make -C "$dir" -j"$(nproc)" -s >/dev/null || make -C "$dir" -j1
}
