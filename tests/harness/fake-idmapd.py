#!/usr/bin/env python3
"""A fake nfskeys-idmapd for the helper's failure paths: listens on SOCKET and answers
every IDMAPD_LOOKUP with a reply broken as MODE says, logging each request's key to
LOG.  Modes:
  garbage      a complete record of random bytes
  truncated    a record marker for 200 bytes, 10 sent, then the connection closed
  short        a valid accepted-reply header, status 0, the answer cut after 8 bytes
  wrong-kind   a complete answer of another kind than asked
  bad-sid      a *_TO_SID answer whose binary SID claims more sub-authorities than it has
  empty-name   a *_TO_NAME answer with an empty name
  huge-len     status 0 and a name whose length field says 4 GB
Usage: fake-idmapd.py SOCKET MODE LOG  (writes SOCKET.ready when listening)"""
import os, socket, struct, sys

path, mode, log = sys.argv[1:4]

def u32(v): return struct.pack(">I", v & 0xffffffff)
def opaque(b): return u32(len(b)) + b + b"\0" * ((4 - len(b) % 4) % 4)

def answer(kind, ident=4242, name=b"x@example.test", sid=b""):
    # kind flags error ttl id gid groups<> sid<> name<> backend<>
    return (u32(kind) + u32(0) + u32(0) + u32(60) + u32(ident) + u32(0) + u32(0) +
            opaque(sid) + opaque(name) + opaque(b"fake"))

def reply(xid, body):
    # xid, REPLY(1), MSG_ACCEPTED(0), verf AUTH_NONE (0, 0), SUCCESS(0), body
    msg = u32(xid) + u32(1) + u32(0) + u32(0) + u32(0) + u32(0) + body
    return u32(0x80000000 | len(msg)) + msg

def read_record(c):
    data = b""
    while True:
        hdr = c.recv(4, socket.MSG_WAITALL)
        if len(hdr) < 4: return None
        n = struct.unpack(">I", hdr)[0]
        frag = b""
        while len(frag) < (n & 0x7fffffff):
            chunk = c.recv((n & 0x7fffffff) - len(frag))
            if not chunk: return None
            frag += chunk
        data += frag
        if n & 0x80000000: return data

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try: os.unlink(path)
except FileNotFoundError: pass
s.bind(path); os.chmod(path, 0o666); s.listen(16)
open(path + ".ready", "w").close()
while True:
    c, _ = s.accept()
    try:
        req = read_record(c)
        if req is None: continue
        xid, proc = struct.unpack(">I", req[:4])[0], struct.unpack(">I", req[20:24])[0]
        # call body after the 40-byte header (xid..verf): kind, flags, key<>
        kind = struct.unpack(">I", req[40:44])[0] if len(req) >= 44 else 0
        klen = struct.unpack(">I", req[48:52])[0] if len(req) >= 52 else 0
        with open(log, "a") as f: f.write("%d %d %s\n" % (proc, kind, req[52:52 + klen].decode(errors="replace")))
        if proc != 2:
            c.sendall(reply(xid, u32(0) * 8)); continue
        if mode == "garbage":
            junk = os.urandom(64); c.sendall(u32(0x80000000 | len(junk)) + junk)
        elif mode == "truncated":
            c.sendall(u32(0x80000000 | 200) + b"\0" * 10)
        elif mode == "short":
            c.sendall(reply(xid, u32(0) + answer(kind)[:8]))
        elif mode == "wrong-kind":
            c.sendall(reply(xid, u32(0) + answer(kind ^ 3)))  # uid asked: a gid answer (same payload shape)
        elif mode == "bad-sid":
            sid = bytes([1, 16, 0, 0, 0, 0, 0, 5]) + b"\0" * 60  # 68 bytes claiming 16 sub-authorities (72)
            c.sendall(reply(xid, u32(0) + answer(kind, sid=sid[:68])))
        elif mode == "empty-name":
            c.sendall(reply(xid, u32(0) + answer(kind, name=b"")))
        elif mode == "huge-len":
            body = answer(kind)
            c.sendall(reply(xid, u32(0) + body[:32] + u32(0xfffffff0)))
    except (OSError, struct.error):
        pass
    finally:
        c.close()
