#!/usr/bin/env python3
"""Concurrent writers against nfskeys-attrd (tests/integration/attr-concurrent.sh).

  attr-writers.py run SPEC.json RESULT.json   run the writers and a reader, check, report
  attr-writers.py dump SPEC.json OUT.txt      the daemon's view of every directory, sorted

SPEC: {"nfsattr": [argv prefix for root], "socket": attrd's socket, "ops": N,
       "writers": [{"name", "argv": [prefix], "dir", "refused": bool}],
       "dirs": [paths]}

Each writer runs N calls in sequence, one nfsattr process each:
  every i:       set DIR user.<name>n<i>=v<i> user.g1=T user.g2=T user.g3=T   (T = name.i)
  every 3rd i:   then unset DIR user.<name>n<i-1> user.g2
so private keys tell lost or resurrected writes apart exactly, and the g1/g2/g3 group
(written by every writer of the directory in one call) tells a mixed state: at any
moment g1 == g3 == T of one acknowledged call, and g2 is T or absent.  A reader thread
checks that on every read while the writers run.  The report is "name value" lines the
shell script checks one by one.
"""
import json
import subprocess
import sys
import threading
import time

GROUP = ("user.g1", "user.g2", "user.g3")


def call(argv):
    t0 = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.returncode, p.stderr.strip(), t0, time.monotonic()


def get(spec, d, view="daemon"):
    """The attributes on d as the daemon serves them (LOOKUP: get -s SOCK) or as the
    library's read path sees them (the published snapshot: get)."""
    sock = ["-s", spec["socket"]] if view == "daemon" else []
    p = subprocess.run(spec["nfsattr"] + sock + ["get", "--json", d], capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None
    return {a["key"]: a["value"] for a in json.loads(p.stdout)["attributes"]}


def writer(spec, w, log):
    d, n = w["dir"], spec["ops"]
    for i in range(1, n + 1):
        tok = "%s.%d" % (w["name"], i)
        priv = "user.%sn%d" % (w["name"], i)
        args = ["set", d, "%s=v%d" % (priv, i)] + ["%s=%s" % (k, tok) for k in GROUP]
        rc, err, t0, t1 = call(w["argv"] + args)
        log.append({"op": "set", "i": i, "tok": tok, "keys": [priv], "rc": rc, "err": err,
                    "t0": t0, "t1": t1})
        if i % 3 == 0:
            old = "user.%sn%d" % (w["name"], i - 1)
            rc, err, t0, t1 = call(w["argv"] + ["unset", d, old, "user.g2"])
            log.append({"op": "unset", "i": i, "keys": [old], "rc": rc, "err": err,
                        "t0": t0, "t1": t1})


def group_state(attrs):
    g = [attrs.get(k) for k in GROUP]
    ok = g[0] is not None and g[0] == g[2] and g[1] in (None, g[0])
    if all(x is None for x in g):
        ok = True  # before the first set
    return ok, g[0]


def run(spec, result_path):
    logs = {w["name"]: [] for w in spec["writers"]}
    stop = threading.Event()
    reads = {"n": 0, "mixed": [], "tokens": set()}

    def reader():
        while not stop.is_set():
            for d, view in [(d, v) for d in spec["dirs"] for v in ("daemon", "store")]:
                a = get(spec, d, view)
                if a is None:
                    continue
                reads["n"] += 1
                ok, tok = group_state(a)
                if not ok:
                    reads["mixed"].append((d, [a.get(k) for k in GROUP]))
                if tok:
                    reads["tokens"].add(tok)

    threads = [threading.Thread(target=writer, args=(spec, w, logs[w["name"]]))
               for w in spec["writers"]]
    rt = threading.Thread(target=reader)
    t_start = time.monotonic()
    for t in threads:
        t.start()
    rt.start()
    for t in threads:
        t.join()
    stop.set()
    rt.join()
    elapsed = time.monotonic() - t_start

    rep = {}
    acked = failed_clear = failed_unclear = refused_ok = refused_bad = 0
    for w in spec["writers"]:
        for e in logs[w["name"]]:
            if w["refused"]:
                if e["rc"] == 4 and "belongs to uid" in e["err"]:
                    refused_ok += 1
                else:
                    refused_bad += 1
                    print("# not refused as expected: %s %s rc=%d %s" %
                          (w["name"], e["op"], e["rc"], e["err"]))
            elif e["rc"] == 0:
                acked += 1
            elif e["err"].startswith("nfsattr: ") and len(e["err"]) > 12:
                failed_clear += 1
                print("# failed with an error: %s %s %d rc=%d: %s" %
                      (w["name"], e["op"], e["i"], e["rc"], e["err"]))
            else:
                failed_unclear += 1
                print("# failed without a clear error: %s %s %d rc=%d: %r" %
                      (w["name"], e["op"], e["i"], e["rc"], e["err"]))

    # the final state, dir by dir, against what the acknowledgements say
    final = {d: get(spec, d) or {} for d in spec["dirs"]}
    snapshot_differs = sum(final[d] != (get(spec, d, "store") or {}) for d in spec["dirs"])
    private_bad = group_bad = stale = 0
    acked_tokens = set()
    for w in spec["writers"]:
        if w["refused"]:
            # nothing of a refused writer may appear anywhere
            for d in spec["dirs"]:
                for k, v in final[d].items():
                    if k.startswith("user.%sn" % w["name"]) or v.startswith(w["name"] + "."):
                        private_bad += 1
                        print("# refused writer's value present: %s %s=%s" % (d, k, v))
            continue
        expect = {}
        for e in logs[w["name"]]:
            if e["rc"] != 0:
                continue
            for k in e["keys"]:
                if e["op"] == "set":
                    expect[k] = "v%d" % e["i"]
                    acked_tokens.add(e["tok"])
                else:
                    expect.pop(k, None)
        got = {k: v for k, v in final[w["dir"]].items()
               if k.startswith("user.%sn" % w["name"])}
        if got != expect:
            private_bad += 1
            lost = sorted(set(expect) - set(got))
            extra = sorted(set(got) - set(expect))
            print("# %s: lost %s, extra %s" % (w["name"], lost[:5], extra[:5]))
    for d in spec["dirs"]:
        sets = [e for w in spec["writers"] if w["dir"] == d and not w["refused"]
                for e in logs[w["name"]] if e["op"] == "set" and e["rc"] == 0]
        if not sets:
            continue
        ok, tok = group_state(final[d])
        if not ok or tok not in acked_tokens:
            group_bad += 1
            print("# %s: group %s" % (d, [final[d].get(k) for k in GROUP]))
            continue
        # the winner committed after every other acknowledged set had started
        win = [e for e in sets if e["tok"] == tok][0]
        late = [e for e in sets if e["t0"] > win["t1"]]
        if late:
            stale += 1
            print("# %s: final group from %s, but %s started after it ended" %
                  (d, tok, late[0]["tok"]))
    unacked_seen = sorted(reads["tokens"] - acked_tokens)
    for d, g in reads["mixed"][:5]:
        print("# mixed read on %s: %s" % (d, g))
    rep.update({
        "acked": acked, "failed_clear": failed_clear, "failed_unclear": failed_unclear,
        "refused_ok": refused_ok, "refused_bad": refused_bad, "reads": reads["n"],
        "mixed_reads": len(reads["mixed"]), "unacked_tokens_seen": len(unacked_seen),
        "private_bad": private_bad, "group_bad": group_bad, "stale_group": stale,
        "snapshot_differs": snapshot_differs, "seconds": round(elapsed, 1),
    })
    for k, v in rep.items():
        print("%s %s" % (k, v))
    with open(result_path, "w") as f:
        json.dump({"report": rep, "logs": logs}, f)


def dump(spec, out):
    """OUT: the daemon's view; OUT.store: the read path's view."""
    for view, path in (("daemon", out), ("store", out + ".store")):
        with open(path, "w") as f:
            for d in spec["dirs"]:
                for k, v in sorted((get(spec, d, view) or {}).items()):
                    f.write("%s %s %s\n" % (d, k, v))


def main():
    mode, spec_path, out = sys.argv[1:4]
    with open(spec_path) as f:
        spec = json.load(f)
    {"run": run, "dump": dump}[mode](spec, out)


if __name__ == "__main__":
    main()
