#!/bin/sh
# The LDAP comparison without QEMU (make bench): what a new owner costs nfsd's id
# mapper with the names in a real slapd on loopback, libnfsidmap's umich_ldap (rpc.idmapd's
# LDAP method) against nfskeys' ldap backend, in-process, same entries, same slapd
# (bench/idmap-ldap-umich.c).  The guest's figure is bench/kernel-idmap.ktest section 3.
# LDAP_UMICH_N names per side and round (default 500), LDAP_UMICH_ROUNDS (default 3).
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/slapd.sh"
N=${LDAP_UMICH_N:-500}
ROUNDS=${LDAP_UMICH_ROUNDS:-3}
DOMAIN=bench.test
NFSKEYS_PLUGIN_DIR=${NFSKEYS_PLUGIN_DIR:-$top_builddir/plugins/.libs}
export NFSKEYS_PLUGIN_DIR
TAP_PLANNED=0 # no TAP here

[ -f "$NFSKEYS_PLUGIN_DIR/idmap-ldap.so" ] || { echo "the ldap plugin was not built: skipped"; exit 0; }
UMICH=$(find /usr/lib /usr/lib64 -name umich_ldap.so -path '*libnfsidmap*' 2>/dev/null | head -n 1)
[ -n "$UMICH" ] || { echo "libnfsidmap's umich_ldap.so is not installed: skipped"; exit 0; }
t_slapd_start dc=ubench,dc=test || { echo "slapd cannot run here: skipped"; exit 0; }
{
	t_ldif_ou people
	i=0
	while [ $i -lt $((3 * N * ROUNDS)) ]; do
		# umich_ldap finds a name by the attribute holding name@domain (NFSv4_name_attr)
		printf 'dn: uid=bu%d,ou=people,%s\nobjectClass: account\nobjectClass: posixAccount\nuid: bu%d\ncn: bu%d\nuidNumber: %d\ngidNumber: %d\nhomeDirectory: /tmp\ndescription: bu%d@%s\n\n' \
			$i "$SLAPD_SUFFIX" $i $i $((20000 + i)) $((30000 + i)) $i "$DOMAIN"
		i=$((i + 1))
	done
} >"$T_TMP/data.ldif"
t_slapd_load "$T_TMP/data.ldif" >/dev/null || { echo "ldapadd failed"; exit 1; }
printf '[General]\nDomain = %s\n[Mapping]\nNobody-User = nobody\nNobody-Group = nogroup\n[Translation]\nMethod = umich_ldap\n[UMICH_SCHEMA]\nLDAP_server = 127.0.0.1\nLDAP_port = %s\nLDAP_base = %s\nLDAP_canonicalize_name = false\nNFSv4_person_objectclass = posixAccount\nNFSv4_name_attr = description\nNFSv4_uid_attr = uidNumber\nNFSv4_acctname_attr = uid\nNFSv4_group_objectclass = posixGroup\nNFSv4_group_attr = description\nNFSv4_gid_attr = gidNumber\n' \
	"$DOMAIN" "$SLAPD_PORT" "$SLAPD_SUFFIX" >"$T_TMP/idmapd.conf"
for u in yes no; do
	printf '[General]\nDomain = %s\n[Translation]\nMethod = ldap\n[LDAP]\nURI = %s\nBase = %s\nUnique-Ids = %s\n' \
		"$DOMAIN" "$SLAPD_URI" "$SLAPD_SUFFIX" $u >"$T_TMP/nfskeys-$u.conf"
done
echo "-- a new owner on an NFS server, names in LDAP (slapd on loopback), no QEMU:"
echo "   $N new names per side and round, best of $ROUNDS (load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs)"
"$top_builddir/bench/idmap-ldap-umich" "$T_TMP/idmapd.conf" "$T_TMP/nfskeys-yes.conf" \
	"$T_TMP/nfskeys-no.conf" "$DOMAIN" "$N" "$ROUNDS"
