#!/usr/bin/env python3
# Hostile load on nfskeys-idmapd (proto/idmap.x), for the security tests.  Usage:
# idmapd-stress.py SOCKET MODE [ARGS]; prints key=value lines.
#   pipeline CONNS BURST ROUNDS   each round, every one of CONNS connections sends BURST
#                                 lookups of keys new to the cache in one write (more than
#                                 Max-Inflight: the rest wait in the daemon's buffer), then
#                                 all replies are read: answered, expected, lost, wrong xid
#   churn SECONDS [KEY]           a connect-send-close loop (every connection sends 16
#                                 lookups of new keys and closes without reading) on
#                                 4 connections at a time, and with KEY one other connection
#                                 looks up KEY every 20 ms: how many churn connections, the
#                                 other client's answered/failed lookups and latencies
#   probe SECONDS KEY             only that other client (run it as another uid)
#                                 (SECONDS may be until:FILE, churn and probe running until
#                                 FILE exists, or count:N, probe making N lookups; either
#                                 way at most 300 s, a hang guard)
#   burst SECONDS KEY...          one connection sends a lookup of each KEY in one write,
#                                 reads nothing, and closes after SECONDS (work queued for
#                                 a caller that then goes)
#   parallel CONNS FIRST COUNT DOMAIN  CONNS connections, each one lookup at a time, share
#                                 the keys userFIRST@DOMAIN .. user(FIRST+COUNT-1)@DOMAIN
#                                 (new to the cache: every one goes to the backend); the
#                                 wall time, answered (result status 0)/failed, lookups
#                                 per second, p50/p99
import os
import socket
import struct
import sys
import threading
import time

PROG, VERS = 0x20004E01, 1
PROC_LOOKUP = 2
NAME_TO_UID, LOOKUP_NOBODY = 1, 1
path, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
_xid = [int.from_bytes(os.urandom(3), "big")]


def xdr_string(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b + b"\0" * (-len(b) % 4)


def lookup_msg(key):
    _xid[0] += 1
    msg = struct.pack(">IIIIII", _xid[0], 0, 2, PROG, VERS, PROC_LOOKUP)
    msg += struct.pack(">IIII", 0, 0, 0, 0)
    msg += struct.pack(">II", NAME_TO_UID, LOOKUP_NOBODY) + xdr_string(key)
    return _xid[0], struct.pack(">I", 0x80000000 | len(msg)) + msg


def conn(timeout=60):
    """Connect as the project's client does (unix_connect): a full listen backlog
    (EAGAIN) is waited out until the timeout, not taken as a failure."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    deadline = time.monotonic() + timeout
    while True:
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.001)


def read_reply(s, want_status=False):
    """(xid, accept status) of the next reply (with want_status, also the lookup's result
    status, -1 when absent); raises when the connection ends."""
    mark = s.recv(4, socket.MSG_WAITALL)
    if len(mark) < 4:
        raise EOFError
    n = struct.unpack(">I", mark)[0] & 0x7FFFFFFF
    data = s.recv(n, socket.MSG_WAITALL)
    if len(data) < n:
        raise EOFError
    r = (struct.unpack(">I", data[0:4])[0],
         struct.unpack(">I", data[20:24])[0] if len(data) >= 24 else -1)
    if want_status:
        r += (struct.unpack(">i", data[24:28])[0] if len(data) >= 28 else -1,)
    return r


def out(**kw):
    for k, v in kw.items():
        print("%s=%s" % (k, v))
    sys.stdout.flush()


if mode == "pipeline":
    nconn, burst, rounds = int(args[0]), int(args[1]), int(args[2])
    answered = expected = lost = wrong = 0
    socks = [conn() for _ in range(nconn)]
    tag = os.getpid()
    for r in range(rounds):
        want = []
        for ci, s in enumerate(socks):
            xids, buf = [], b""
            for i in range(burst):
                # static users (answered fast) and unknown names (nobody): all new keys
                # to the cache, so every call adds an entry and evicts another
                key = ("user%d@example.test" % ((r * burst + i) % 200) if i % 2 else
                       "x%d-%d-%d-%d@example.test" % (tag, r, ci, i))
                x, m = lookup_msg(key)
                xids.append(x)
                buf += m
            s.sendall(buf)
            want.append(xids)
        for s, xids in zip(socks, want):
            expected += len(xids)
            got = set()
            try:
                for _ in xids:
                    x, st = read_reply(s)
                    got.add(x)
                    answered += 1
                    wrong += x not in xids or st != 0
            except (EOFError, OSError):
                pass
            lost += len(set(xids) - got)
        if lost:
            break
    out(answered=answered, expected=expected, lost=lost, wrong=wrong)
elif mode in ("churn", "probe"):
    key = args[1] if len(args) > 1 else None
    until, count = None, None
    if args[0].startswith("until:"):
        until, seconds = args[0][6:], 300.0
    elif args[0].startswith("count:"):
        count, seconds = int(args[0][6:]), 300.0
    else:
        seconds = float(args[0])
    stop = time.monotonic() + seconds
    counts = [0]
    lock = threading.Lock()

    def going():
        return time.monotonic() < stop and not (until and os.path.exists(until))

    def churner(n):
        i = 0
        while going():
            try:
                s = conn(5)
                buf = b""
                for j in range(16):
                    buf += lookup_msg("churn%d-%d-%d@example.test" % (n, i, j))[1]
                s.sendall(buf)
                s.close()
            except OSError:
                time.sleep(0.001)
            i += 1
            with lock:
                counts[0] += 1

    threads = ([threading.Thread(target=churner, args=(n,)) for n in range(4)]
               if mode == "churn" else [])
    for t in threads:
        t.start()
    lat, failed = [], 0
    while key and going() and (count is None or len(lat) + failed < count):
        t0 = time.monotonic()
        try:
            s = conn(60 if count else 10)
            x, m = lookup_msg(key)
            s.sendall(m)
            rx, st = read_reply(s)
            s.close()
            if rx != x or st != 0:
                failed += 1
            else:
                lat.append(time.monotonic() - t0)
        except (EOFError, OSError):
            failed += 1
        time.sleep(0.02)
    for t in threads:
        t.join()
    lat.sort()

    def pct(p):
        return "%.1f" % (lat[min(len(lat) - 1, int(len(lat) * p))] * 1000) if lat else "nan"

    out(churn_connections=counts[0], other_answered=len(lat), other_failed=failed,
        other_p50_ms=pct(0.5), other_p99_ms=pct(0.99), other_max_ms=pct(1.0))
elif mode == "burst":
    seconds, keys = float(args[0]), args[1:]
    s = conn(10)
    s.sendall(b"".join(lookup_msg(k)[1] for k in keys))
    time.sleep(seconds)
    s.close()
    out(sent=len(keys))
elif mode == "parallel":
    nconn, first, count, domain = int(args[0]), int(args[1]), int(args[2]), args[3]
    keys = ["user%d@%s" % (first + i, domain) for i in range(count)]
    lock = threading.Lock()
    lat, failed = [], [0]

    def worker():
        s = conn(60)
        while True:
            with lock:
                if not keys:
                    break
                k = keys.pop()
            t0 = time.monotonic()
            why = None
            try:
                x, m = lookup_msg(k)
                s.sendall(m)
                rx, st, res = read_reply(s, True)
                if rx != x or st != 0 or res != 0:
                    why = "%s: xid %d (sent %d), accept status %d, result %d" % (
                        k, rx, x, st, res)
            except (EOFError, OSError) as e:
                why = "%s: %r" % (k, e)
            with lock:
                if not why:
                    lat.append(time.monotonic() - t0)
                else:
                    failed[0] += 1
                    sys.stderr.write("failed: %s\n" % why)
        s.close()

    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(nconn)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    lat.sort()

    def pct(p):
        return "%.1f" % (lat[min(len(lat) - 1, int(len(lat) * p))] * 1000) if lat else "nan"

    out(wall_ms=int(wall * 1000), answered=len(lat), failed=failed[0],
        per_s="%.0f" % (len(lat) / wall), p50_ms=pct(0.5), p99_ms=pct(0.99))
else:
    sys.exit("unknown mode " + mode)
