#!/bin/sh
# Concurrent writers to the same directories' policies in nfskeys-attrd, which must never
# show a mix of two sets or lose an acknowledged one:
# root twice on a root-owned directory, root and uid 65534 on 65534's directory, uid 65533
# twice on its own, and uid 65534 on root's directory (refused every time), each a stream
# of `nfsattr set` / `unset` calls mixing its own keys with a group of keys every writer of
# the directory sets in one call, while a reader checks that no read ever shows a mixed
# group.  Afterwards: every acknowledged change is there and nothing else (no lost, no
# resurrected, no refused write), each group is whole and from the last writer, the store
# passes PRAGMA integrity_check and holds what the daemon serves, and a fresh daemon on
# the store serves exactly the same.  The driver is tests/harness/attr-writers.py.
. "$top_srcdir/tests/harness/lib.sh"
. "$top_srcdir/tests/harness/attrd.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (directories of other users, setpriv)"
command -v setpriv >/dev/null || skip_all "setpriv not installed (util-linux)"
command -v sqlite3 >/dev/null || skip_all "sqlite3 CLI not installed (package sqlite3)"

OPS=${NFSKEYS_ATTR_WRITER_OPS:-30}
plan 17

chmod 755 "$T_TMP"
CONF="$T_TMP/nfskeys.conf"
DB="$T_TMP/attr.db"
printf '[Attr]\nStore = %s\n[Attrd]\nSocket = %s\n' "$DB" "$T_TMP/attrd.sock" >"$CONF"
ATTRD_CONF=$CONF
t_ou_load
NFSATTR_OU=$(t_ou nfsattr)

SHARED="$T_TMP/shared"
DA="$T_TMP/u65534"
DB_DIR="$T_TMP/u65533"
mkdir -p "$SHARED" "$DA" "$DB_DIR"
chown 65534:65534 "$DA"
chown 65533:65533 "$DB_DIR"

t_attrd_start || { not_ok "daemon started"; sed 's/^/# /' "$ATTRD_LOG"; exit 1; }
ok "daemon started"

python3 - "$T_TMP/spec.json" "$NFSATTR" "$CONF" "$NFSATTR_OU" "$T_OU_ENV" "$OPS" \
	"$SHARED" "$DA" "$DB_DIR" "$T_TMP/attrd.sock" <<'PY'
import json, sys
out, na, conf, na_ou, ou_env, ops, shared, da, db, sock = sys.argv[1:11]
root = [na, "-c", conf]
def as_uid(u):
    return ["setpriv", "--reuid=%d" % u, "--regid=%d" % u, "--clear-groups"] + \
        ou_env.split() + [na_ou, "-c", conf]
w = [("r1", root, shared, False), ("r2", root, shared, False),
     ("r3", root, da, False), ("a1", as_uid(65534), da, False),
     ("b1", as_uid(65533), db, False), ("b2", as_uid(65533), db, False),
     ("x1", as_uid(65534), shared, True)]
json.dump({"nfsattr": root, "socket": sock, "ops": int(ops), "dirs": [shared, da, db],
           "writers": [{"name": n, "argv": a, "dir": d, "refused": r} for n, a, d, r in w]},
          open(out, "w"))
PY

python3 "$top_srcdir/tests/harness/attr-writers.py" run "$T_TMP/spec.json" \
	"$T_TMP/result.json" >"$T_TMP/report" 2>&1
grep '^#' "$T_TMP/report"
r() { awk -v k="$1" '$1 == k { print $2 }' "$T_TMP/report"; }
total=$((6 * (OPS + OPS / 3)))
diag "$(r acked) of $total authorized calls acknowledged, $(r refused_ok) refused as expected," \
	"$(r reads) reads during the run, $(r seconds) s"
check_eq "every authorized set/unset acknowledged (none failed under contention)" \
	"$total 0" "$(r acked) $(r failed_clear)"
check_eq "no call failed without a clear error" 0 "$(r failed_unclear)"
check_eq "uid 65534 on root's directory: refused (exit 4, 'belongs to uid') every time" \
	"$((OPS + OPS / 3)) 0" "$(r refused_ok) $(r refused_bad)"
check_eq "no read during the run saw a mixed group (g1 = g3, g2 = g1 or unset)" \
	0 "$(r mixed_reads)"
check "the reader read while the writers ran" test "$(r reads)" -ge 10
check_eq "no read saw a value of an unacknowledged call" 0 "$(r unacked_tokens_seen)"
check_eq "own keys: every acknowledged set there, every acknowledged unset gone, nothing else" \
	0 "$(r private_bad)"
check_eq "each directory's group whole and from an acknowledged call" 0 "$(r group_bad)"
check_eq "each group from the last writer (no call started after the winner ended)" \
	0 "$(r stale_group)"
check_eq "the library's read path (snapshot) shows what the daemon serves" \
	0 "$(r snapshot_differs)"

python3 "$top_srcdir/tests/harness/attr-writers.py" dump "$T_TMP/spec.json" "$T_TMP/before.txt"
t_attrd_stop
check_eq "daemon stops cleanly" 0 "$?"
check_eq "PRAGMA integrity_check" ok "$(sqlite3 "$DB" 'PRAGMA integrity_check')"

# the store holds what the daemon served (key and value per directory, all three dirs)
sqlite3 -separator ' ' "$DB" "SELECT key, value FROM attrs WHERE origin = 0" | sort >"$T_TMP/db.txt"
cut -d' ' -f2- "$T_TMP/before.txt" | sort >"$T_TMP/served.txt"
check "the database holds exactly what the daemon served ($(wc -l <"$T_TMP/db.txt") rows)" \
	cmp "$T_TMP/db.txt" "$T_TMP/served.txt"

t_attrd_start || { not_ok "fresh daemon started"; sed 's/^/# /' "$ATTRD_LOG"; exit 1; }
ok "fresh daemon started on the store"
python3 "$top_srcdir/tests/harness/attr-writers.py" dump "$T_TMP/spec.json" "$T_TMP/after.txt"
check "a fresh daemon serves exactly what the first one did" cmp "$T_TMP/before.txt" "$T_TMP/after.txt"
check "... and publishes the same for the read path" cmp "$T_TMP/before.txt.store" "$T_TMP/after.txt.store"
t_attrd_stop
