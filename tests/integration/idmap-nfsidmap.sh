#!/bin/sh
# Interop with nfs-common: nfsidmap and nfskeys-upcall, both reached through real
# request-key upcalls, give byte-identical payloads (or both fail) for a table of names
# and ids built from this host's passwd/group plus unknown names, foreign domains and
# case variants.  Our configuration is imported from the same /etc/idmapd.conf.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/integration/idmap-upcall-lib.sh"

NFSIDMAP=$(command -v nfsidmap || echo /usr/sbin/nfsidmap)
[ -x "$NFSIDMAP" ] || skip_all "nfsidmap (nfs-common) not installed"
[ -r /etc/idmapd.conf ] || skip_all "/etc/idmapd.conf missing"
t_route_upcalls "$NFSIDMAP" || skip_all "needs root, keyctl and a writable /etc/request-key.d"
ref_callout=$T_CALLOUT

"$NFSKEYS" idmap import-conf /etc/idmapd.conf -o "$T_TMP/nfskeys.conf" 2>/dev/null ||
	{ plan 1; not_ok "import-conf /etc/idmapd.conf"; exit 0; }
# in-process answers only: a daemon on the default socket must not answer for us
printf '[Idmapd]\nSocket = %s/no-idmapd.sock\n' "$T_TMP" >>"$T_TMP/nfskeys.conf"
cat >"$T_TMP/helper.sh" <<SH
#!/bin/sh
NFSKEYS_PLUGIN_DIR='$NFSKEYS_PLUGIN_DIR'; export NFSKEYS_PLUGIN_DIR
exec '$top_builddir/tools/upcall/nfskeys-upcall' -c '$T_TMP/nfskeys.conf' "\$@"
SH
chmod +x "$T_TMP/helper.sh"
t_route_upcalls "$T_TMP/helper.sh"
our_callout=$T_CALLOUT

domain=$("$NFSIDMAP" -d 2>/dev/null)
[ -n "$domain" ] || domain=localdomain
ourdomain=$("$NFSKEYS" -c "$T_TMP/nfskeys.conf" idmap domain | cut -d' ' -f1)
upper=$(echo "$domain" | tr a-z A-Z)

# The table: every local user and group (capped), unknowns, foreign domains, ids.
{
	getent passwd | cut -d: -f1,3 | head -n 40 | while IFS=: read -r n id; do
		echo "uid:$n@$domain"; echo "user:$id"; done
	getent group | cut -d: -f1,3 | head -n 40 | while IFS=: read -r n id; do
		echo "gid:$n@$domain"; echo "group:$id"; done
	echo "uid:root@$upper"
	echo "uid:root"; echo "gid:root"; echo "uid:no-such-user-$$"
	echo "uid:no-such-user-$$@$domain"
	echo "gid:no-such-group-$$@$domain"
	echo "uid:root@not-$domain"
	echo "gid:root@not-$domain"
	echo "user:3999999999"
	echo "group:3999999999"
} | awk '!seen[$0]++' >"$T_TMP/table"

plan $(( $(wc -l <"$T_TMP/table") + 2 ))
check_eq "same NFSv4 domain as nfsidmap" "$domain" "$ourdomain"

payload_or_fail() { # CALLOUT DESC
	T_CALLOUT=$1
	out=$(t_upcall "$2" 2>/dev/null) && printf '%s\n' "$out" | head -n1 || echo FAILED
}
while IFS= read -r desc; do
	want=$(payload_or_fail "$ref_callout" "$desc")
	got=$(payload_or_fail "$our_callout" "$desc")
	check_eq "$desc -> $want: same answer as nfsidmap" "$want" "$got"
	[ "$want" = FAILED ] || echo x >>"$T_TMP/answered"
done <"$T_TMP/table"
n=$(wc -l <"$T_TMP/answered" 2>/dev/null || echo 0)
if [ "$n" -ge 40 ]; then ok "nfsidmap answered $n requests (the comparison is not vacuous)"
else not_ok "nfsidmap answered only $n requests"; fi
