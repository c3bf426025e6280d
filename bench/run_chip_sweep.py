#!/usr/bin/env python3
"""Every stdlib network on the chip templates of issue 35 (the TPU-v1-like and
the Simba-like by default): compiles each at a batch (default 1), re-checks
the schedule (complete, valid, the solver's totals) and prints one line per
run: network, template, verdict, energy, latency, utilization, solve seconds;
then, per template, which buffer holds which role (report.json's `buffers`
and `bypassed`). Exits 1 when a run fails, naming it and why.

Usage: run_chip_sweep.py [--dflc DFLC] [--batch N] [--nets a,b,...]
                         [--out DIR] [HW.dfl ...]
"""
import argparse
import glob
import os
import sys
import json
import subprocess
import tempfile

sys.dont_write_bytecode = True
from chip_runs import compile_and_check, roles  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dflc", default=os.path.join(ROOT, "build", "tools", "dflc"))
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--nets", help="comma-separated stdlib network names (default: all)")
    p.add_argument("--out", help="where the outputs go (default: a temporary folder)")
    p.add_argument("hw", nargs="*", default=[os.path.join(ROOT, "stdlib", "hw", h)
                                            for h in ("tpu_v1.dfl", "simba_6x6.dfl")])
    a = p.parse_args()
    nets = sorted(glob.glob(os.path.join(ROOT, "stdlib", "nets", "*.dfl")))
    if a.nets:
        wanted = a.nets.split(",")
        nets = [n for n in nets if os.path.basename(n)[:-4] in wanted]
    out = a.out or tempfile.mkdtemp(prefix="chip-sweep-")
    print(f"{'network':<30} {'template':<12} {'verdict':<8} {'energy [mJ]':>12} {'latency [ms]':>13} "
          f"{'util [%]':>9} {'solve [s]':>10}")
    failures, shown = [], {}
    for hw in a.hw:
        shown_hw = subprocess.run([a.dflc, "show", "--json", hw], capture_output=True, text=True, check=True)
        peak = json.loads(shown_hw.stdout)["hardware"][0]["peak_macs_per_cycle"]
        for net in nets:
            name = f"{os.path.basename(net)[:-4]}"
            hwname = os.path.basename(hw)[:-4]
            r = compile_and_check(a.dflc, net, hw, os.path.join(out, f"{name}-on-{hwname}"), a.batch)
            if not r["ok"]:
                failures.append(f"{name} on {hwname}: {r['why']}")
                print(f"{name:<30} {hwname:<12} {'FAIL':<8} {'':>12} {'':>13} {'':>9} {r['seconds']:>10.1f}", flush=True)
                continue
            t = r["report"]["totals"]
            layers = r["report"]["layers"]
            work = sum(l["work"] for l in layers)
            util = 100.0 * work / (peak * t["latency_cycles"])
            print(f"{name:<30} {hwname:<12} {'valid':<8} {t['energy_pj'] / 1e9:>12.3f} "
                  f"{t['latency_seconds'] * 1e3:>13.3f} {util:>9.1f} {r['seconds']:>10.1f}", flush=True)
            shown.setdefault(hwname, roles(r["report"]))
    for hwname, text in shown.items():
        print(f"{hwname} roles: {text}")
    print(f"{len(a.hw) * len(nets) - len(failures)} of {len(a.hw) * len(nets)} valid at batch {a.batch}; outputs in {out}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
