#!/usr/bin/env python3
"""Runs one dflc command twice, idle and pinned to one core beside BUSY
CPU-bound processes on that core, and checks that the output directories hold
the same bytes (docs/limits.md, "Determinism"):

    same_under_load.py --busy N DFLC OUTDIR ARGS...

ARGS are dflc's, with `-o` added: OUTDIR/idle and OUTDIR/loaded. The busy
processes are this script's own children and are ended (by their pids)
before it exits. Exit 0 when both runs exit 0 and write the same files with
the same bytes; otherwise the difference is printed."""
import os
import subprocess
import sys


def files(d):
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = f.read()
    return out


def main():
    args = sys.argv[1:]
    busy = 12
    if args[:1] == ["--busy"]:
        busy, args = int(args[1]), args[2:]
    dflc, outdir, rest = args[0], args[1], args[2:]
    core = min(os.sched_getaffinity(0))   # one core this test may use
    runs = {}
    for name in ["idle", "loaded"]:
        hogs = []
        pin = None
        if name == "loaded":
            pin = lambda: os.sched_setaffinity(0, {core})
            hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"], preexec_fn=pin) for _ in range(busy)]
        try:
            p = subprocess.run([dflc] + rest + ["-o", os.path.join(outdir, name)], preexec_fn=pin,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        if p.returncode != 0:
            print("%s run exited %d: %s" % (name, p.returncode, p.stderr.decode(errors="replace")[-2000:]))
            return 1
        runs[name] = files(os.path.join(outdir, name))
    idle, loaded = runs["idle"], runs["loaded"]
    differ = sorted(n for n in set(idle) | set(loaded) if idle.get(n) != loaded.get(n))
    if differ:
        print("different bytes idle and under load (%d busy processes on core %d): %s" % (busy, core, differ))
        return 1
    print("same bytes idle and under load: %d files" % len(idle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
