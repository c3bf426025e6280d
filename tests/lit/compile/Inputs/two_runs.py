#!/usr/bin/env python3
"""two_runs.py DFLC NET HW SPEC OUT: two dflc runs into one OUT at once. The
first (--debug-wait-after-lock) says when it holds OUT's lock and then waits
for its stdin to close; while it waits, a second compile, a sweep merge and a
slice of the sweep SPEC (which only shares the lock) into the same OUT are
refused. Then the first finishes, and a second compile runs.
Prints each run's exit status and the refusals' messages, and what OUT holds
at the end (the lock file must be gone)."""
import os
import subprocess
import sys

dflc, net, hw, spec, out = sys.argv[1:6]
LIMIT = 600   # seconds: the compiles are small; a loaded 2-core machine is slow

first = subprocess.Popen([dflc, net, hw, "-o", out, "--debug-wait-after-lock"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
print("first:", first.stderr.readline().strip())
for name, argv in [("second", [dflc, net, hw, "-o", out]), ("merge", [dflc, "sweep", "--merge", out]),
                   ("slice", [dflc, "sweep", spec, "-o", out, "--slice", "0/2"])]:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=LIMIT)
    print("%s: exit %d" % (name, r.returncode))
    print(r.stderr.strip())
print("while held:", " ".join(sorted(os.listdir(out))))
first.stdin.close()
first.wait(timeout=LIMIT)
print("first: exit %d" % first.returncode)
r = subprocess.run([dflc, net, hw, "-o", out], capture_output=True, text=True, timeout=LIMIT)
print("again: exit %d" % r.returncode)
print("after:", " ".join(sorted(os.listdir(out))))
