#!/usr/bin/env python3
# Watches every process's command line and environment for given strings until a stop
# file appears, then prints "NEEDLE_INDEX PID FILE" for each sighting (tests/integration/
# cred-secrets.sh).  The needles come from a file, one per line, never from argv.
#   proc-sampler.py NEEDLES_FILE STOP_FILE OUT_FILE
import os
import sys
import time

needles = [line.rstrip("\n").encode() for line in open(sys.argv[1]) if line.strip()]
stop, out = sys.argv[2], sys.argv[3]
me = str(os.getpid())
seen = set()
open(out + ".ready", "w").close()
while not os.path.exists(stop):
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or pid == me:
            continue
        for f in ("cmdline", "environ"):
            try:
                with open("/proc/%s/%s" % (pid, f), "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            for i, n in enumerate(needles):
                if n in data:
                    seen.add((i, pid, f))
    time.sleep(0.002)
with open(out, "w") as fh:
    for i, pid, f in sorted(seen):
        fh.write("%d %s %s\n" % (i, pid, f))
