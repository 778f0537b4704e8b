#!/usr/bin/env python3
# Drive a daemon's ONC RPC socket to its limits, for tests/integration/limits-daemons.sh.
# Usage: rpc-limits.py SOCKET PROG VERS MODE [ARGS]; prints key=value lines.
#   clients N EXTRA CMD  open N connections and make a NULL call on each (all held open),
#                        run the shell command CMD meanwhile (its rc and time), then open
#                        EXTRA more: how many are answered and how many closed at once
#   stall                one client that sends nothing, one that sends half a record, and
#                        one normal client: its latency, and when the other two are dropped
#   cap MAX              a NULL call of exactly MAX bytes (answered?) and of MAX + 1 (dropped?)
#   hold N SECONDS       hold N connections, each after one NULL call, for SECONDS
import os
import select
import socket
import struct
import subprocess
import sys
import time

path, prog, vers, mode = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3]), sys.argv[4]
args = sys.argv[5:]
xid = 0


def call(proc=0, total=None):
    """A complete record: a CALL of proc, padded so the message is `total` bytes."""
    global xid
    xid += 1
    msg = struct.pack(">IIIIII", xid, 0, 2, prog, vers, proc) + struct.pack(">IIII", 0, 0, 0, 0)
    if total is not None:
        msg += b"\0" * (total - len(msg))
    return struct.pack(">I", 0x80000000 | len(msg)) + msg


def conn(timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)  # blocking: a full backlog waits (non-blocking AF_UNIX says EAGAIN)
    s.settimeout(timeout)
    return s


def reply(s):
    """The reply's accept status, or None when the server closed the connection."""
    try:
        mark = s.recv(4, socket.MSG_WAITALL)
        if len(mark) < 4:
            return None
        n = struct.unpack(">I", mark)[0] & 0x7FFFFFFF
        data = s.recv(n, socket.MSG_WAITALL)
        return struct.unpack(">I", data[20:24])[0] if len(data) >= 24 else None
    except (ConnectionResetError, BrokenPipeError):
        return None


def closed_by_peer(s, timeout):
    r, _, _ = select.select([s], [], [], timeout)
    if not r:
        return False
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def out(**kw):
    for k, v in kw.items():
        print("%s=%s" % (k, v))
    sys.stdout.flush()


if mode == "clients":
    n, extra, cmd = int(args[0]), int(args[1]), args[2]
    socks, answered = [], 0
    for i in range(n):
        s = conn()
        s.sendall(call())
        socks.append(s)
    for s in socks:
        if reply(s) == 0:
            answered += 1
    t0 = time.monotonic()
    rc = subprocess.call(cmd, shell=True, stdout=subprocess.DEVNULL)
    out(answered=answered, other_rc=rc, other_ms=int((time.monotonic() - t0) * 1000))
    more_ok = more_closed = 0
    for i in range(extra):
        try:
            s = conn(5)
            s.sendall(call())
            r = reply(s)
        except OSError:
            r = None
        if r == 0:
            more_ok += 1
            socks.append(s)
        else:
            more_closed += 1
            s.close()
    out(extra_answered=more_ok, extra_closed=more_closed)
    # still answering on a held connection after all that?
    socks[0].sendall(call())
    out(first_again=reply(socks[0]))
    for s in socks:
        s.close()
elif mode == "stall":
    t0 = time.monotonic()
    silent = conn(30)
    partial = conn(30)
    rec = call(total=200)
    partial.sendall(rec[:60])  # the record mark says 200 bytes; 56 arrive
    normal = conn()
    t1 = time.monotonic()
    normal.sendall(call())
    r = reply(normal)
    out(normal_status=r, normal_ms=int((time.monotonic() - t1) * 1000))
    ms = {}
    pending = {"silent": silent, "partial": partial}
    while pending and time.monotonic() - t0 < 30:
        for name, s in list(pending.items()):
            if closed_by_peer(s, 0.05):
                ms[name] = int((time.monotonic() - t0) * 1000)
                del pending[name]
    out(silent_dropped_ms=ms.get("silent", -1), partial_dropped_ms=ms.get("partial", -1))
    # the normal client, quiet since its answer, goes the same way
    normal.sendall(call())
    out(normal_again=reply(normal))
elif mode == "cap":
    cap = int(args[0])
    s = conn()
    s.sendall(call(total=cap))
    out(at_cap=reply(s))
    s.close()
    s = conn()
    try:
        s.sendall(call(total=cap + 1))
    except OSError:
        pass
    out(over_cap=reply(s))
    s.close()
elif mode == "hold":
    n, secs = int(args[0]), float(args[1])
    socks = []
    for i in range(n):
        try:
            s = conn(5)
            socks.append(s)
        except OSError as e:
            out(connect_error=e.errno)
            break
    out(connected=len(socks))
    time.sleep(secs)
    for s in socks:
        s.close()
