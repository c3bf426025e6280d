#!/usr/bin/env python3
"""Two dflc binaries' solve stage side by side (docs/benchmarks.md, "Window
sums kept, shapes first"): each network and mode solved by A and B in turn,
REPS times, timed by the solver's own clock (the "in X s" of its summary
line, so neither process' start-up counts); the medians, B's over A's (above
1: A is faster), and whether the two wrote the same schedule.dfl.

Usage: solve_ab.py A B [--nets mlp,alexnet,vgg16] [--hw HW.dfl] [--batch N]
                   [--modes per-layer,inter-layer] [--reps R] [-- DFLC_ARGS...]
Exits 1 if a run fails or prints no solver summary.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {"per-layer": ["--no-pipelining"], "inter-layer": []}
SOLVED = re.compile(r"^solver kapla: .* in ([0-9.eE+-]+) s ", re.M)


def solve(binary, net, args, out):
    """The solver's seconds and the schedule written, or None."""
    p = subprocess.run([binary, net, *args, "-o", out], capture_output=True, text=True)
    m = SOLVED.search(p.stdout + p.stderr)
    if p.returncode != 0 or not m:
        sys.stderr.write(f"{binary} {net} {' '.join(args)}: exit {p.returncode}\n{p.stderr[-2000:]}")
        return None
    with open(os.path.join(out, "schedule.dfl"), "rb") as f:
        return float(m.group(1)), f.read()


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("Usage: ")[1].split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--nets", default="mlp,alexnet,vgg16")
    ap.add_argument("--hw", default="stdlib/hw/eyeriss_multinode.dfl")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--modes", default="per-layer,inter-layer")
    ap.add_argument("--reps", type=int, default=11)
    argv = sys.argv[1:]   # after "--": dflc's own options, split off here
    cut = argv.index("--") if "--" in argv else len(argv)
    o, extra = ap.parse_args(argv[:cut]), argv[cut + 1:]
    modes = o.modes.split(",")
    if any(m not in MODES for m in modes) or o.reps < 1:
        ap.error(f"modes are {', '.join(MODES)}; reps at least 1")
    hw = o.hw if os.path.isabs(o.hw) else os.path.join(ROOT, o.hw)
    print(f"batch {o.batch} on {o.hw}, median of {o.reps} runs each, A and B in turn")
    print(f"{'net':8} {'mode':11} {'A [ms]':>10} {'B [ms]':>10} {'B/A':>8}  schedules")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name in o.nets.split(","):
            net = os.path.join(ROOT, "stdlib", "nets", name + ".dfl")
            for mode in modes:
                args = [hw, "--batch", str(o.batch), "--no-plots", *MODES[mode], *extra]
                times = {"A": [], "B": []}
                written = {}
                ok = True
                for _ in range(o.reps * 2):
                    tag = "AB"[len(times["A"]) > len(times["B"])]
                    r = solve(o.a if tag == "A" else o.b, net, args, os.path.join(tmp, tag))
                    if r is None:
                        ok = False
                        break
                    times[tag].append(r[0])
                    written[tag] = r[1]
                if not ok:
                    failed = True
                    print(f"{name:8} {mode:11} failed")
                    continue
                a, b = (1e3 * statistics.median(times[t]) for t in ("A", "B"))
                ratio = f"{b / a:8.3f}" if a > 0 else f"{'n/a':>8}"
                same = "same" if written["A"] == written["B"] else "differ"
                print(f"{name:8} {mode:11} {a:10.3f} {b:10.3f} {ratio}  {same}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
