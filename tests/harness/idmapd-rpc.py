#!/usr/bin/env python3
# Raw ONC RPC calls to nfskeys-idmapd (proto/idmap.x) for the reload tests: several
# connections at once, each call timed, so a test can see what the daemon answers while
# a reload runs.  Usage: idmapd-rpc.py SOCKET MODE [ARGS]; prints key=value lines.
#   during-reload KEY...   send RELOAD on one connection and, until it is answered, look
#                          up name-to-uid KEY (round robin) on another: how long the reload
#                          took, its status and message, how many lookups were answered
#                          meanwhile, their worst latency, and every answer of each key
#                          in order (to check that none goes back to the old config)
#   reloads N CMD          N RELOADs on N connections, the shell command CMD run after the
#                          first was sent and before the others: each one's status and
#                          generation, and whether the first was still running when the
#                          others were sent
import select
import socket
import struct
import subprocess
import sys
import time

PROG, VERS = 0x20004E01, 1
PROC_LOOKUP, PROC_RELOAD = 2, 5
NAME_TO_UID, LOOKUP_NOBODY = 1, 1
path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
xid = 1000


def xdr_string(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def call(proc, body=b""):
    global xid
    xid += 1
    msg = struct.pack(">IIIIII", xid, 0, 2, PROG, VERS, proc) + struct.pack(">IIII", 0, 0, 0, 0)
    msg += body
    return struct.pack(">I", 0x80000000 | len(msg)) + msg


def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.settimeout(300)
    return s


def results(s):
    """The reply's results (after the accepted-reply header); raises on anything else."""
    mark = s.recv(4, socket.MSG_WAITALL)
    n = struct.unpack(">I", mark)[0] & 0x7FFFFFFF
    data = s.recv(n, socket.MSG_WAITALL)
    if len(data) < 24 or struct.unpack(">I", data[20:24])[0] != 0:
        raise RuntimeError("bad reply")
    return data[24:]


def lookup(s, key):
    s.sendall(call(PROC_LOOKUP, struct.pack(">II", NAME_TO_UID, LOOKUP_NOBODY) + xdr_string(key)))
    r = results(s)
    status = struct.unpack(">i", r[0:4])[0]
    return status, (struct.unpack(">I", r[20:24])[0] if status == 0 else None)


def reload_send(s):
    s.sendall(call(PROC_RELOAD))


def reload_result(s):
    r = results(s)
    status, n = struct.unpack(">iI", r[0:8])
    msg = r[8:8 + n].decode(errors="replace")
    off = 8 + n + (-n % 4)
    gen = struct.unpack(">Q", r[off:off + 8])[0]
    return status, msg, gen


def out(**kw):
    for k, v in kw.items():
        print("%s=%s" % (k, v))
    sys.stdout.flush()


if mode == "during-reload":
    look, rel = conn(), conn()
    lookup(look, args[0])  # connected and warm before the reload starts
    t0 = time.monotonic()
    reload_send(rel)
    answers = {k: [] for k in args}
    n, worst, i = 0, 0.0, 0
    while True:
        ready, _, _ = select.select([rel], [], [], 0)
        if ready:
            break
        key = args[i % len(args)]
        i += 1
        t = time.monotonic()
        status, uid = lookup(look, key)
        dt = time.monotonic() - t
        # a lookup that ended after the reload's answer came does not count
        if select.select([rel], [], [], 0)[0]:
            break
        worst = max(worst, dt)
        n += 1
        answers[key].append(uid if status == 0 else status)
        time.sleep(0.002)  # leave the CPU to the reload (2-core machines)
    status, msg, gen = reload_result(rel)
    out(reload_seconds="%.3f" % (time.monotonic() - t0), reload_status=status,
        reload_message=msg, generation=gen, lookups_during=n,
        worst_ms="%.1f" % (worst * 1000))
    for k in args:
        seq = []
        for a in answers[k]:
            if not seq or seq[-1] != a:
                seq.append(a)
        out(**{"answers_" + k.split("@")[0]: ",".join(map(str, seq))})
elif mode == "reloads":
    n, cmd = int(args[0]), args[1]
    socks = [conn() for _ in range(n)]
    reload_send(socks[0])
    time.sleep(0.05)
    subprocess.run(cmd, shell=True, check=True)
    for s in socks[1:]:
        reload_send(s)
    out(first_running=not select.select([socks[0]], [], [], 0)[0])
    for i, s in enumerate(socks):
        status, msg, gen = reload_result(s)
        out(**{"status%d" % i: status, "generation%d" % i: gen})
else:
    sys.exit("unknown mode " + mode)
