#!/usr/bin/env python3
# A DNS server on UDP for tests that need a slow or specific name server: it answers a TXT
# query for NAME with the record TEXT, and any other query with NXDOMAIN, each answer sent
# DELAY_MS milliseconds after its query came (queries are answered concurrently, so one
# slow answer does not hold up the next).  Every query is logged as "QNAME QTYPE" to LOG,
# which is created (empty) once the server is listening.
# Usage: dns-txt.py ADDR NAME TEXT DELAY_MS LOG   (port 53; run it in a network namespace)
import socket
import struct
import sys
import threading
import time

addr, name, text, delay, log_path = sys.argv[1], sys.argv[2], sys.argv[3], \
    int(sys.argv[4]) / 1000.0, sys.argv[5]
T_TXT, C_IN = 16, 1
lock = threading.Lock()


def qname_end(msg, off):
    """The offset after the (uncompressed) name at off, and the name."""
    labels = []
    while msg[off]:
        n = msg[off]
        labels.append(msg[off + 1:off + 1 + n].decode("ascii", "replace"))
        off += 1 + n
    return off + 1, ".".join(labels)


def answer(sock, msg, peer):
    try:
        qid, flags, qd = struct.unpack(">HHH", msg[:6])
        end, qname = qname_end(msg, 12)
        qtype, qclass = struct.unpack(">HH", msg[end:end + 4])
    except (struct.error, IndexError):
        return
    with lock, open(log_path, "a") as f:
        f.write("%s %d\n" % (qname, qtype))
    question = msg[12:end + 4]
    rd = flags & 0x0100
    if qname.lower() == name.lower() and qtype == T_TXT and qclass == C_IN:
        data = text.encode()
        rdata = bytes([len(data)]) + data
        # the answer's name points back at the question (offset 12)
        rr = struct.pack(">HHHIH", 0xC00C, T_TXT, C_IN, 60, len(rdata)) + rdata
        reply = struct.pack(">HHHHHH", qid, 0x8400 | rd, 1, 1, 0, 0) + question + rr
    else:
        reply = struct.pack(">HHHHHH", qid, 0x8403 | rd, 1, 0, 0, 0) + question
    time.sleep(delay)
    sock.sendto(reply, peer)


sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind((addr, 53))
open(log_path, "a").close()
while True:
    msg, peer = sock.recvfrom(4096)
    threading.Thread(target=answer, args=(sock, msg, peer), daemon=True).start()
