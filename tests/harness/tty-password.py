#!/usr/bin/env python3
"""Drive a password prompt through a real pseudo-terminal (tests/integration/cred-tty.sh).

  tty-password.py MODE SECRET -- COMMAND...

The command runs as a session leader with the pty's slave as its controlling terminal
(stdin, stdout, stderr), so ^C typed on the master is the line discipline's SIGINT to it,
as on a real terminal.  MODE is what is typed once the prompt ("Password: ") shows:
  enter   SECRET then Return
  intr    SECRET (no Return), then ^C
  eof     ^D at the empty prompt
  term    SECRET (no Return), then SIGTERM from outside
The driver keeps the slave open and reads its termios itself: before the command, while
the prompt waits (after the secret is typed), and after the command exits.  Report lines:
  prompt yes|no          the prompt appeared
  echo_during on|off     ECHO of the slave while the prompt waited
  restored yes|no        the termios after exit equals the one before
  echo_after on|off
  status exit N|signal N how the command ended
  secret_shown yes|no    the secret in anything the terminal showed
  output <text>          what the terminal showed (escaped)
"""
import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time


def read_until(fd, needle, buf, timeout):
    end = time.monotonic() + timeout
    while needle not in buf and time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
    return buf


def main():
    mode, secret = sys.argv[1], sys.argv[2].encode()
    cmd = sys.argv[sys.argv.index("--") + 1:]
    master, slave = os.openpty()
    before = termios.tcgetattr(slave)

    def child_setup():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave,
                         preexec_fn=child_setup, close_fds=True)
    out = read_until(master, b"Password: ", b"", 20)
    print("prompt", "yes" if b"Password: " in out else "no")
    # the prompt is written before echo goes off: wait until it is off (or 2 s)
    end = time.monotonic() + 2
    while time.monotonic() < end and termios.tcgetattr(slave)[3] & termios.ECHO:
        time.sleep(0.01)
    if mode == "eof":
        during = termios.tcgetattr(slave)
        os.write(master, b"\x04")
    else:
        os.write(master, secret)
        time.sleep(0.3)
        during = termios.tcgetattr(slave)
        if mode == "enter":
            os.write(master, b"\r")
        elif mode == "intr":
            os.write(master, b"\x03")
        elif mode == "term":
            p.send_signal(signal.SIGTERM)
    print("echo_during", "on" if during[3] & termios.ECHO else "off")
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
        print("# timed out: killed")
    out = read_until(master, b"\0never\0", out, 0.3)
    after = termios.tcgetattr(slave)
    print("restored", "yes" if after == before else "no")
    print("echo_after", "on" if after[3] & termios.ECHO else "off")
    print("status", "exit %d" % rc if rc >= 0 else "signal %d" % -rc)
    print("secret_shown", "yes" if secret and secret in out else "no")
    print("output", out.decode(errors="replace").replace("\r", "\\r").replace("\n", "\\n"))


if __name__ == "__main__":
    main()
