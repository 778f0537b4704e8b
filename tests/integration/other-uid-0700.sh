#!/bin/sh
# The suite's privilege-dropping part passes from a build tree that other uids cannot
# reach, as in a newcomer's clone under root's home or a mktemp -d (both 0700): in a
# private mount namespace the build tree's parent becomes a 0700 directory (a tmpfs with
# the build tree, and the source tree when it sits beside it, bound back in at their own
# paths), then every test that runs programs as uid 65534/65533 runs there and must pass.
# Those tests run what the other uid executes from the install make check makes into a
# 0755 directory (check-other-uid-install, t_ou in tests/harness/lib.sh).
. "$top_srcdir/tests/harness/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (mount namespace, runs commands as other uids)"
command -v setpriv >/dev/null || skip_all "setpriv not installed (util-linux)"
if [ -z "${NFSKEYS_0700_NS:-}" ]; then
	unshare -m --propagation private true 2>/dev/null ||
		skip_all "unshare -m is not possible here (no private mount namespace)"
	NFSKEYS_0700_NS=1 exec unshare -m --propagation private "${SHELL:-/bin/sh}" "$0" "$@"
fi

TESTS_0700="idmapd.sh attr-daemon.sh security-privs.sh security-daemon-secrets.sh"
plan $((2 + 2 * $(echo $TESTS_0700 | wc -w)))

B=$(cd "$top_builddir" && pwd -P)
S=$(cd "$top_srcdir" && pwd -P)
P=$(dirname "$B")
case "$P" in /|/tmp) skip_all "the build tree sits directly in $P (no parent of its own to close)" ;; esac
# Hold the trees by descriptors, put a 0700 tmpfs on the build tree's parent, and bind the
# trees back in at their own paths from those descriptors (mount -c: not by the name
# /proc/PID/fd/N points to, which the tmpfs now hides) (no second path to the build tree
# exists: T_TMP, removed at exit, never leads into it).  The namespace ends with the test.
exec 7<"$B" 8<"$S"
mount -t tmpfs -o mode=0700 nfskeys-0700 "$P" || { not_ok "a 0700 tmpfs on $P"; exit 1; }
mkdir -p "$B" && mount -c --bind "/proc/$$/fd/7" "$B" || { not_ok "bind the build tree back"; exit 1; }
case "$S/" in
"$B"/*) ;;                                    # source inside the build tree (in-tree build)
"$P"/*) { mkdir -p "$S" && mount -c --bind "/proc/$$/fd/8" "$S"; } ||
	{ not_ok "bind the source tree back"; exit 1; } ;;
esac
exec 7<&- 8<&-
check_eq "root still reaches the build tree" yes \
	"$(test -f "$B/Makefile" && test -f "$S/tests/harness/lib.sh" && echo yes)"
check_eq "uid 65534 cannot reach it (as from a 0700 clone)" no \
	"$(setpriv --reuid=65534 --regid=65534 --clear-groups test -e "$B/Makefile" && echo yes || echo no)"

for t in $TESTS_0700; do
	log="$T_TMP/$t.log"
	"$top_srcdir/tests/harness/run-test" "${SHELL:-/bin/sh}" "$top_srcdir/tests/integration/$t" \
		>"$log" 2>&1
	rc=$?
	check_eq "$t from a 0700 parent: exit 0" 0 "$rc"
	bad=$(grep -E '^not ok|error while loading shared libraries' "$log")
	why=$(sed -n 's/^1\.\.0 # SKIP *//p' "$log")
	if [ -n "$why" ] && [ -z "$bad" ]; then
		skip "$t from a 0700 parent: the test skips here ($why)"
	elif [ -z "$bad" ] && grep -q '^ok ' "$log"; then
		ok "$t from a 0700 parent: every check passes"
	else
		not_ok "$t from a 0700 parent: every check passes"
		printf '%s\n' "$bad" | head -20 | sed 's/^/# /'
	fi
done
