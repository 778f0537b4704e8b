#!/usr/bin/env python3
# Drive a daemon's ONC RPC socket to its limits, for tests/integration/limits-daemons.sh.
# Usage: rpc-limits.py SOCKET PROG VERS MODE [ARGS]; prints key=value lines.
# No result is a time: what a mode reports is who was answered, and which connections the
# daemon had closed at that point.  The only clock is GUARD (seconds), a hang guard: a
# wait that ends there is reported as a failure (a hang), never as a measurement.
#   clients N EXTRA CMD  open N connections and make a NULL call on each (all held open),
#                        run the shell command CMD meanwhile (its rc, and how many of the
#                        N the daemon still held open when it was done), then open EXTRA
#                        more: how many are answered and how many closed at once
#   stall                one client that sends nothing, one that sends half a record, then
#                        a normal client: whether it is answered, and whether the other two
#                        were still connected when its answer came
#   idle CMD             the silent and the half-record client alone: whether the daemon
#                        closes each (the caller sets a short Idle-Timeout); CMD's output
#                        (the daemon's uptime, its own clock) before the two connect and
#                        after both are closed
#   cap MAX              a NULL call of exactly MAX bytes (answered?) and of MAX + 1 (dropped?)
#   hold N SECONDS       hold N connections, each after one NULL call, for SECONDS
#   hold-until N FILE    hold N connections (connected=N once they are) until FILE exists
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
GUARD = 120  # seconds: a hang guard (a daemon that never answers), far beyond any load


def call(proc=0, total=None):
    """A complete record: a CALL of proc, padded so the message is `total` bytes."""
    global xid
    xid += 1
    msg = struct.pack(">IIIIII", xid, 0, 2, prog, vers, proc) + struct.pack(">IIII", 0, 0, 0, 0)
    if total is not None:
        msg += b"\0" * (total - len(msg))
    return struct.pack(">I", 0x80000000 | len(msg)) + msg


def conn(timeout=GUARD):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)  # blocking: a full backlog waits (non-blocking AF_UNIX says EAGAIN)
    s.settimeout(timeout)
    return s


def reply(s):
    """The reply's accept status, None when the server closed the connection, "hung"
    when nothing came within GUARD seconds."""
    try:
        mark = s.recv(4, socket.MSG_WAITALL)
        if len(mark) < 4:
            return None
        n = struct.unpack(">I", mark)[0] & 0x7FFFFFFF
        data = s.recv(n, socket.MSG_WAITALL)
        return struct.unpack(">I", data[20:24])[0] if len(data) >= 24 else None
    except (ConnectionResetError, BrokenPipeError):
        return None
    except socket.timeout:
        return "hung"


def closed_by_peer(s, timeout):
    r, _, _ = select.select([s], [], [], timeout)
    if not r:
        return False
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def still_open(s):
    """Whether the peer has not closed s (nothing unread is expected on it)."""
    r, _, _ = select.select([s], [], [], 0)
    if not r:
        return True
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except ConnectionResetError:
        return False


def wait_closed(socks):
    """{name: closed by the peer?}, waiting for each at most GUARD seconds."""
    t0 = time.monotonic()
    pending, closed = dict(socks), {}
    while pending and time.monotonic() - t0 < GUARD:
        for name, s in list(pending.items()):
            if closed_by_peer(s, 0.05):
                closed[name] = True
                del pending[name]
    for name in pending:
        closed[name] = False
    return closed


def sh(cmd):
    """The first line CMD prints (a hang past GUARD: "hung")."""
    try:
        o = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, timeout=GUARD).stdout
    except subprocess.TimeoutExpired:
        return "hung"
    return (o.decode(errors="replace").splitlines() or [""])[0]


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
    try:
        rc = subprocess.call(cmd, shell=True, stdout=subprocess.DEVNULL, timeout=GUARD)
    except subprocess.TimeoutExpired:
        rc = "hung"
    out(answered=answered, other_rc=rc, held_open=sum(still_open(s) for s in socks))
    more_ok = more_closed = 0
    for i in range(extra):
        try:
            s = conn()
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
elif mode in ("stall", "idle"):
    if mode == "idle":
        before = sh(args[0])
    silent = conn()
    partial = conn()
    rec = call(total=200)
    partial.sendall(rec[:60])  # the record mark says 200 bytes; 56 arrive
    if mode == "stall":
        normal = conn()
        normal.sendall(call())
        r = reply(normal)
        out(normal_status=r, silent_open=still_open(silent), partial_open=still_open(partial))
        normal.sendall(call())
        out(normal_again=reply(normal))
    else:
        closed = wait_closed({"silent": silent, "partial": partial})
        out(silent_dropped=closed["silent"], partial_dropped=closed["partial"],
            cmd_before=before, cmd_after=sh(args[0]))
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
elif mode in ("hold", "hold-until"):
    n = int(args[0])
    socks = []
    for i in range(n):
        try:
            s = conn(5)
            socks.append(s)
        except OSError as e:
            out(connect_error=e.errno)
            break
    out(connected=len(socks))
    if mode == "hold":
        time.sleep(float(args[1]))
    else:
        t0 = time.monotonic()
        while not os.path.exists(args[1]) and time.monotonic() - t0 < GUARD:
            time.sleep(0.05)
    for s in socks:
        s.close()
