#!/bin/sh
# Run the ID-mapping benchmark with a private configuration (NFSv4 domain from
# /etc/idmapd.conf's default, nsswitch + sid backends, slices in a temp dir).
set -eu
: "${top_builddir:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
domain=$(nfsidmap -d 2>/dev/null || echo localdomain)
printf '[General]\nDomain = %s\n[Translation]\nMethod = nsswitch,sid\n[Idmap]\nCache-Size = 262144\n[SID]\nState-File = %s/slices\n' \
	"$domain" "$tmp" >"$tmp/nfskeys.conf"
NFSKEYS_PLUGIN_DIR="$top_builddir/plugins/.libs" \
	"$top_builddir/bench/idmap-bench" "$tmp/nfskeys.conf" "${IDMAP_BENCH_ITERS:-200000}"
