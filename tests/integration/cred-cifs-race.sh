#!/bin/sh
# Two `nfskeys cifs add` for the same target at the same time (FINDINGS.md K4), in the real
# session keyring (run-test gives this script its own).  Both commands are held at their
# password prompt, after each has looked for an existing key and found none, and then both
# passwords are written at once: the race is forced every round, not hoped for.  Exactly
# one key for the target must remain, holding one password whole (the two differ in
# length: /proc/keys shows the payload length of a logon key), exactly one command may say
# it added it (exit 0) and it must be the one whose password is in the key, and the other
# must fail naming the existing credentials.  The commands look for the key again after the
# password is read, so the window left is between that look and the add: the test shim
# (tests/shim/keyshim.c) delays each add_key by 300 ms to hold it open every round.
. "$top_srcdir/tests/harness/lib.sh"
command -v keyctl >/dev/null || skip_all "keyctl not installed (package keyutils)"

ROUNDS=${NFSKEYS_CIFS_RACE_ROUNDS:-10}
SHIM="$top_builddir/tests/shim/.libs/keyshim.so"
[ -f "$SHIM" ] || fail_all "test shim $SHIM not built"
plan 5

python3 - "$NFSKEYS" "$ROUNDS" "$SHIM" >"$T_TMP/report" 2>&1 <<'PY'
import os, subprocess, sys, time
nfskeys, rounds, shim = sys.argv[1], int(sys.argv[2]), sys.argv[3]
desc = "cifs:a:127.0.0.2"
pw = {"A": b"pa" * 5, "B": b"pb" * 9}            # payload alice:PW\0 = 17 / 25 bytes

def in_read(pid):
    """True once pid (the command itself, after a libtool wrapper's exec) reads fd 0."""
    try:
        with open("/proc/%d/syscall" % pid) as f:
            v = f.read().split()
        with open("/proc/%d/comm" % pid) as f:
            comm = f.read().strip()
    except OSError:
        return False
    return "nfskeys" in comm and v[0] == "0" and int(v[1], 16) == 0

def keys():
    """Payload lengths of the target's keys linked in the session keyring (/proc/keys
    also lists a loser's unlinked key until the kernel's garbage collector runs)."""
    linked = subprocess.run(["keyctl", "rlist", "@s"], capture_output=True, text=True)
    linked = {int(x) for x in linked.stdout.split()}
    out = []
    with open("/proc/keys") as f:
        for line in f:
            if int(line.split()[0], 16) in linked and " logon " in line \
                    and (desc + ":") in line:
                out.append(int(line.rsplit(":", 1)[1]))
    return out

stats = {"one_key": 0, "whole": 0, "one_ok": 0, "winner_in_key": 0, "loser_clear": 0,
         "raced": 0}
for r in range(rounds):
    subprocess.run([nfskeys, "cifs", "clear", "127.0.0.2"], capture_output=True)
    ps = {}
    env = dict(os.environ, LD_PRELOAD=shim, KEYSHIM_ADD_KEY_DELAY_MS="300")
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"
    for n in "AB":
        ps[n] = subprocess.Popen([nfskeys, "cifs", "add", "-u", "alice", "127.0.0.2"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env)
    t = time.monotonic()
    while time.monotonic() - t < 20 and not all(in_read(p.pid) for p in ps.values()):
        time.sleep(0.01)
    if all(in_read(p.pid) for p in ps.values()):
        stats["raced"] += 1
    for n in "AB":
        ps[n].stdin.write(pw[n] + b"\n")
    for n in "AB":
        ps[n].stdin.close()
    res = {n: (p.wait(), p.stderr.read().decode()) for n, p in ps.items()}
    k = keys()
    lens = {n: len(b"alice:" + pw[n]) + 1 for n in "AB"}
    winners = [n for n in "AB" if res[n][0] == 0]
    stats["one_key"] += len(k) == 1
    stats["whole"] += len(k) == 1 and k[0] in lens.values()
    stats["one_ok"] += len(winners) == 1
    if len(winners) == 1 and len(k) == 1:
        w = winners[0]
        l = "B" if w == "A" else "A"
        stats["winner_in_key"] += k[0] == lens[w]
        stats["loser_clear"] += res[l][0] == 1 and "already exist" in res[l][1]
    if len(k) != 1 or len(winners) != 1:
        print("# round %d: exits %s, key lengths %s" %
              (r, {n: res[n][0] for n in "AB"}, k))
        for n in "AB":
            print("# %s: %s" % (n, res[n][1].strip().replace("\n", " | ")))
for k, v in stats.items():
    print(k, v)
PY
grep '^#' "$T_TMP/report"
r() { awk -v k="$1" '$1 == k { print $2 }' "$T_TMP/report"; }
check_eq "both commands were at the password prompt together in every round" "$ROUNDS" "$(r raced)"
check_eq "exactly one key for the target after every round" "$ROUNDS" "$(r one_key)"
check_eq "... holding one of the two passwords whole (payload length)" "$ROUNDS" "$(r whole)"
check_eq "exactly one command said it added the key (exit 0), and its password is the key's" \
	"$ROUNDS $ROUNDS" "$(r one_ok) $(r winner_in_key)"
check_eq "the other failed (exit 1) saying the credentials already exist" "$ROUNDS" "$(r loser_clear)"
"$NFSKEYS" cifs clear 127.0.0.2 >/dev/null 2>&1
