#!/usr/bin/env python3
"""Play the kernel's side of knfsd's idmap cache channels and the NFS client's rpc_pipefs
idmap pipe for nfskeys-idmapd, without nfsd or an NFS mount (the host kernel has neither).

A channel is a pseudo-terminal in canonical mode: the daemon opens the slave (named by a
symlink at DIR/nfs4.idtoname/channel), each line the test writes to the master is one
read() for the daemon, as the kernel's cache_read hands out one request per read, and the
daemon's one-line reply comes back on the master.  A client pipe is a raw pty linked at
PIPEFS/nfs/clntN/idmap, made after the daemon started (so its inotify watch must find it).

Usage: fake-kernel.py DIR PIPEFS SCRIPT
(creates DIR/ready once the channels exist, then waits for DIR/go before the script)
SCRIPT lines (# comments):
  chan idtoname|nametoid LINE    write LINE (Python escapes, e.g. \\n) and print the reply;
                                 then what came unasked on the other channel, as a line
                                 "PN CHANNEL 'LINES'" (N: the command's line number)
  chanraw idtoname|nametoid LINE write LINE, expect no reply within 1 s ("noreply")
  flush                          print the flush files' contents
  pipe N                         create clntN/idmap
  rmpipe N                       remove clntN (the client went away)
  msg N TYPE CONV NAME ID        send a 140-byte idmap_msg (TYPE user|group, CONV
                                 name2id|id2name) and print the reply's fields
  msgint N TYPE CONV NAME ID      as msg with TYPE and CONV as numbers (malformed ones)
  rawmsg N HEX                   send raw bytes, print the reply or "noreply"
  sleep S
Outputs one line per command, prefixed with the command's line number.
"""
import os, select, struct, sys, termios, time, tty

IDMAP_MSG = struct.Struct("=BB128s2xIB3x")
assert IDMAP_MSG.size == 140


def make_pty(canonical):
    master, slave = os.openpty()
    attrs = termios.tcgetattr(slave)
    iflag, oflag, cflag, lflag, ispeed, ospeed, cc = attrs
    iflag &= ~(termios.ICRNL | termios.INLCR | termios.IGNCR | termios.IXON | termios.ISTRIP)
    oflag &= ~termios.OPOST
    lflag &= ~(termios.ECHO | termios.ISIG | termios.IEXTEN | termios.ECHONL)
    if canonical:
        lflag |= termios.ICANON
        for c in (termios.VEOF, termios.VERASE, termios.VKILL, termios.VWERASE,
                  termios.VREPRINT, termios.VLNEXT, termios.VEOL, termios.VEOL2):
            cc[c] = b"\0"
    else:
        lflag &= ~termios.ICANON
        cc[termios.VMIN] = 1
        cc[termios.VTIME] = 0
    termios.tcsetattr(slave, termios.TCSANOW, [iflag, oflag, cflag, lflag, ispeed, ospeed, cc])
    return master, slave


def read_reply(fd, timeout=5.0, want=None):
    buf = b""
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], max(0, end - time.time()))
        if not r:
            break
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        buf += data
        if want is None and buf.endswith(b"\n"):
            break
        if want is not None and len(buf) >= want:
            break
    return buf


def main():
    d, pipefs, script = sys.argv[1:4]
    chans = {}
    for name in ("idtoname", "nametoid"):
        os.makedirs(f"{d}/nfs4.{name}", exist_ok=True)
        m, s = make_pty(True)
        link = f"{d}/nfs4.{name}/channel"
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(os.ttyname(s), link)
        open(f"{d}/nfs4.{name}/flush", "w").close()
        chans[name] = (m, s)
    os.makedirs(f"{pipefs}/nfs", exist_ok=True)
    pipes = {}
    # the daemon opens the channels at start: say they are there, then wait for "go"
    open(f"{d}/ready", "w").close()
    while not os.path.exists(f"{d}/go"):
        time.sleep(0.05)
    out = sys.stdout
    for no, line in enumerate(open(script), 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        cmd, _, rest = line.partition(" ")
        if cmd in ("chan", "chanraw"):
            which, _, payload = rest.partition(" ")
            data = payload.encode().decode("unicode_escape").encode("latin-1")
            os.write(chans[which][0], data)
            rep = read_reply(chans[which][0], 1.0 if cmd == "chanraw" else 5.0)
            out.write(f"{no} {rep.decode('latin-1')!r}\n" if rep else f"{no} noreply\n")
            # lines the daemon wrote unasked to the other channel (Prime-Reverse): they
            # came before the reply, so they are there now
            other = "idtoname" if which == "nametoid" else "nametoid"
            extra = read_reply(chans[other][0], 0.05, want=1 << 20)
            if extra:
                out.write(f"P{no} {other} {extra.decode('latin-1')!r}\n")
        elif cmd == "flush":
            vals = [open(f"{d}/nfs4.{n}/flush").read().strip() for n in ("idtoname", "nametoid")]
            out.write(f"{no} {' '.join(vals)}\n")
        elif cmd == "pipe":
            n = rest.strip()
            os.makedirs(f"{pipefs}/nfs/clnt{n}", exist_ok=True)
            time.sleep(0.2)  # the kernel makes the directory first, then the pipe
            m, s = make_pty(False)
            os.symlink(os.ttyname(s), f"{pipefs}/nfs/clnt{n}/idmap")
            pipes[n] = (m, s)
            out.write(f"{no} ok\n")
        elif cmd == "rmpipe":
            n = rest.strip()
            os.unlink(f"{pipefs}/nfs/clnt{n}/idmap")
            os.rmdir(f"{pipefs}/nfs/clnt{n}")
            out.write(f"{no} ok\n")
        elif cmd in ("msg", "msgint", "rawmsg"):
            if cmd in ("msg", "msgint"):
                n, typ, conv, name, ident = rest.split(" ")
                if cmd == "msg":
                    typ = 0 if typ == "user" else 1
                    conv = 1 if conv == "name2id" else 0
                data = IDMAP_MSG.pack(int(typ), int(conv),
                                      b"" if name == "-" else name.encode(), int(ident), 0)
            else:
                n, hexdata = rest.split(" ")
                data = bytes.fromhex(hexdata)
            os.write(pipes[n][0], data)
            rep = read_reply(pipes[n][0], 5.0, want=140)
            if len(rep) != 140:
                out.write(f"{no} noreply {len(rep)}\n")
            else:
                t, c, nm, i, st = IDMAP_MSG.unpack(rep)
                nm = nm.split(b"\0")[0].decode("latin-1")
                out.write(f"{no} type={t} conv={c} name={nm} id={i} status={st:#x}\n")
        elif cmd == "sleep":
            time.sleep(float(rest))
            out.write(f"{no} ok\n")
        else:
            sys.exit(f"line {no}: unknown command {cmd}")
        out.flush()


if __name__ == "__main__":
    main()
