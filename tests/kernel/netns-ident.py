#!/usr/bin/python3
# netns-ident.py SYSDIR NAME...: write each named network namespace's NFS client identifier
# (/sys/fs/nfs/net/nfs_client/identifier: "kbed-NAME") in one process.  sysfs shows the
# netns of whoever mounts it, so a child per namespace enters it (/run/netns/NAME), mounts
# its own sysfs privately on SYSDIR and writes there.  Exit 1 when one failed (named on
# standard error).
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWNET, MS_REC, MS_PRIVATE = 0x00020000, 0x40000000, 0x4000, 0x40000
def check(r, what):
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))
sysdir, bad = sys.argv[1], 0
for name in sys.argv[2:]:
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open("/run/netns/" + name, os.O_RDONLY)
            check(libc.setns(fd, CLONE_NEWNET), "setns")
            check(libc.unshare(CLONE_NEWNS), "unshare")
            check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private /")
            check(libc.mount(b"sysfs", sysdir.encode(), b"sysfs", 0, None), "mount sysfs")
            with open(sysdir + "/fs/nfs/net/nfs_client/identifier", "w") as f:
                f.write("kbed-" + name)
            os._exit(0)
        except Exception as e:
            print("%s: %s" % (name, e), file=sys.stderr)
            os._exit(1)
    bad += os.waitpid(pid, 0)[1] != 0
sys.exit(1 if bad else 0)
