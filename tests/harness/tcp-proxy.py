#!/usr/bin/env python3
# A TCP proxy for fault tests, placed between our code and a real server (slapd, krb5kdc).
# Its behaviour is read from a mode file at every accept and before every chunk, so a test
# switches it while connections are open:
#   forward     pass bytes through
#   delay MS    hold every chunk MS milliseconds, then pass it on
#   hang        accept and read, never answer (open connections stop passing data)
#   refuse      close new connections at once (open ones are closed at their next chunk)
#   hold-match TEXT  forward, but hold a chunk from the client that contains TEXT (e.g.
#               the value of one search filter) until the mode changes: that connection
#               alone stalls, the others pass
# Usage: tcp-proxy.py TARGET_HOST TARGET_PORT MODE_FILE PORT_FILE
# It listens on a free 127.0.0.1 port, writes the port to PORT_FILE and runs until killed.
# What it did goes to stdout, one line an event, so that a test can tell that a fault was
# in the path without timing anything: "accept MODE" for each connection it takes (MODE
# forward, delay, hang or refuse), "delayed N" for each chunk it holds in delay mode (N:
# how many chunks it holds at that moment, this one included: searches that overlap),
# "held" for each chunk it keeps back in hang mode, "refused" for each chunk that closed
# a connection, "held-match" for each chunk it keeps back in hold-match mode.
import os
import socket
import sys
import threading
import time

target = (sys.argv[1], int(sys.argv[2]))
mode_file, port_file = sys.argv[3], sys.argv[4]


def mode():
    try:
        with open(mode_file) as f:
            words = f.read().split()
    except OSError:
        words = []
    if not words:
        return ("forward", 0)
    if words[0] == "delay":
        return ("delay", int(words[1]) / 1000.0)
    if words[0] == "hold-match":
        return ("hold-match", " ".join(words[1:]).encode())
    return (words[0], 0)


lock = threading.Lock()
holding = 0


def event(what):
    with lock:
        sys.stdout.write(what + "\n")
        sys.stdout.flush()


def close(*socks):
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass


def pump(src, dst, peer, upstream):
    global holding
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            m, arg = mode()
            if m == "hold-match" and upstream and arg and arg in data:
                event("held-match")
                held = (m, arg)
                while (m, arg) == held:
                    time.sleep(0.05)
                    m, arg = mode()
            if m == "hang":
                event("held")
            while m == "hang":
                time.sleep(0.05)
                m, arg = mode()
            if m == "refuse":
                event("refused")
                break
            if m == "delay":
                with lock:
                    holding += 1
                    n = holding
                event("delayed %d" % n)
                time.sleep(arg)
                with lock:
                    holding -= 1
            dst.sendall(data)
    except OSError:
        pass
    close(src, dst, peer)


def drain(c):
    try:
        while c.recv(65536):
            pass
    except OSError:
        pass
    close(c)


def serve(c):
    m, _ = mode()
    event("accept " + m)
    if m == "refuse":
        close(c)
        return
    if m == "hang":
        drain(c)
        return
    try:
        s = socket.create_connection(target, 5)
        s.settimeout(None)
    except OSError:
        close(c)
        return
    threading.Thread(target=pump, args=(c, s, c, True), daemon=True).start()
    threading.Thread(target=pump, args=(s, c, s, False), daemon=True).start()


def main():
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(128)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % ls.getsockname()[1])
    os.rename(tmp, port_file)
    while True:
        c, _ = ls.accept()
        serve(c)


main()
