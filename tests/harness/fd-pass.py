#!/usr/bin/env python3
# Send one ONC RPC call to a daemon with a descriptor attached (SCM_RIGHTS) and print the
# reply, for the descriptor-passing tests.  Usage:
#   fd-pass.py SOCKET PROG PROC FILE OPEN [ARGS-HEX]
# OPEN: rdonly (a plain open: closing it runs FUSE FLUSH), path (O_PATH), pathdir
# (O_PATH|O_DIRECTORY), dir (O_RDONLY|O_DIRECTORY), none (no descriptor).  The call's
# arguments are ARGS-HEX (XDR, hex).  Prints status=<accept status> and, for a reply with
# results, res_status=<first int of the results> and message=<the string after it when
# there is one>.  With SECOND=PROC:ARGS-HEX in the environment a second call follows on
# the same connection without a descriptor (its results as status2=, res_status2=,
# message2=): whether a descriptor sent with the first call was kept for the next one.
# FDPASS_TIMEOUT: seconds to wait for each answer (10).
import os
import socket
import struct
import sys

path, prog, proc, fname, how = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3]), \
    sys.argv[4], sys.argv[5]
body = bytes.fromhex(sys.argv[6]) if len(sys.argv) > 6 else b""
flags = {"rdonly": os.O_RDONLY, "path": os.O_PATH, "pathdir": os.O_PATH | os.O_DIRECTORY,
         "dir": os.O_RDONLY | os.O_DIRECTORY, "none": None}[how]
fd = os.open(fname, flags) if flags is not None else None
xid = int.from_bytes(os.urandom(4), "big")
msg = struct.pack(">IIIIII", xid, 0, 2, prog, 1, proc) + struct.pack(">IIII", 0, 0, 0, 0) + body
rec = struct.pack(">I", 0x80000000 | len(msg)) + msg
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(float(os.environ.get("FDPASS_TIMEOUT", "10")))
s.connect(path)
if fd is None:
    s.sendall(rec)
else:
    socket.send_fds(s, [rec], [fd])


def answer(sfx):
    try:
        mark = s.recv(4, socket.MSG_WAITALL)
        n = struct.unpack(">I", mark)[0] & 0x7FFFFFFF
        data = s.recv(n, socket.MSG_WAITALL)
        st = struct.unpack(">I", data[20:24])[0] if len(data) >= 24 else -1
        print("status%s=%d" % (sfx, st))
        if st == 0 and len(data) >= 28:
            print("res_status%s=%d" % (sfx, struct.unpack(">i", data[24:28])[0]))
            if len(data) >= 32:
                ln = struct.unpack(">I", data[28:32])[0]
                if ln < 4096 and len(data) >= 32 + ln:
                    print("message%s=%s" % (sfx, data[32:32 + ln].decode(errors="replace")))
    except (OSError, struct.error) as e:
        print("status%s=none (%s)" % (sfx, e))
    sys.stdout.flush()


answer("")
if os.environ.get("SECOND"):
    p2, a2 = os.environ["SECOND"].split(":")
    xid += 1
    msg = struct.pack(">IIIIII", xid, 0, 2, prog, 1, int(p2)) + struct.pack(">IIII", 0, 0, 0, 0)
    msg += bytes.fromhex(a2)
    s.sendall(struct.pack(">I", 0x80000000 | len(msg)) + msg)
    answer("2")
s.close()
os._exit(0)
