#!/usr/bin/env python3
"""Per-operand scratchpads against one shared register file (issue 35, "Done
when"): the solver's schedules of ResNet-50 and AlexNet on the Eyeriss-like
template with its three scratchpads per PE (stdlib/hw/eyeriss_pspad.dfl: ifmap
24 B, filter 448 B, psum 48 B) and on the same template with one register
file of the same total capacity (520 B) in their place, derived from it here
and priced by the pads' own law (access energy as the square root of the
capacity); nothing else differs (global buffer, bypass, DRAM). Prints a table:
network, batch, energy shared, energy per-operand, their ratio, latency both;
every schedule re-checked (complete, valid, the solver's totals).

Usage: run_pspad_bench.py [--dflc DFLC] [--batches 1,64] [--nets resnet50,alexnet]
                          [--out DIR]
"""
import argparse
import math
import os
import re
import sys
import tempfile

sys.dont_write_bytecode = True
from chip_runs import compile_and_check  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PSPAD = os.path.join(ROOT, "stdlib", "hw", "eyeriss_pspad.dfl")


def shared_variant(text):
    """The template with its REGF's buffer blocks replaced by one buffer of
    their total capacity, priced by the pads' own size law (the template's
    [sram] assumption: energy per access = k x sqrt(capacity), one k for all
    three pads), so that the shared file costs what a file of its size would."""
    block = (r"^ *buffer (\w+) \{\n *holds = \w+;\n *capacity = (\d+) B;\n *access_energy = ([\d.]+) pJ;\n"
             r" *fill_energy = ([\d.]+) pJ;\n *\}\n")
    pads = re.findall(block, text, re.M)
    ks = [float(p[2]) / math.sqrt(int(p[1])) for p in pads]
    if len(pads) != 3 or len({p[3] for p in pads}) != 1 or max(ks) > min(ks) * (1 + 1e-4):
        sys.exit(f"{PSPAD}: expected three scratchpads priced by one square-root law, found {pads}")
    total = sum(int(p[1]) for p in pads)
    energy = sum(ks) / len(ks) * math.sqrt(total)
    one = f"    capacity = {total} B;\n    access_energy = {energy:.6g} pJ;\n    fill_energy = {pads[0][3]} pJ;\n"
    lines = re.sub(block, "\x00", text, flags=re.M)
    lines = lines.replace("\x00", one, 1).replace("\x00", "")
    return lines.replace("hardware eyeriss_pspad", "hardware eyeriss_shared_regf"), total, energy


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dflc", default=os.path.join(ROOT, "build", "tools", "dflc"))
    p.add_argument("--batches", default="1,64")
    p.add_argument("--nets", default="resnet50,alexnet")
    p.add_argument("--out", help="where the outputs go (default: a temporary folder)")
    a = p.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="pspad-bench-")
    os.makedirs(out, exist_ok=True)
    shared_text, total, energy = shared_variant(open(PSPAD).read())
    shared = os.path.join(out, "eyeriss_shared_regf.dfl")
    with open(shared, "w") as f:
        f.write(shared_text)
    print(f"shared REGF: {total} B a PE at {energy:.6g} pJ an access ({shared}); per-operand: {PSPAD}")
    print(f"{'network':<10} {'batch':>5} {'energy shared [mJ]':>19} {'energy per-op [mJ]':>19} "
          f"{'per-op/shared':>14} {'latency shared [ms]':>20} {'latency per-op [ms]':>20}")
    failures = []
    for net in a.nets.split(","):
        for batch in (int(b) for b in a.batches.split(",")):
            runs = {}
            for side, hw in (("shared", shared), ("pspad", PSPAD)):
                r = compile_and_check(a.dflc, os.path.join(ROOT, "stdlib", "nets", f"{net}.dfl"), hw,
                                      os.path.join(out, f"{net}-b{batch}-{side}"), batch)
                if not r["ok"]:
                    failures.append(f"{net} batch {batch} {side}: {r['why']}")
                runs[side] = r["report"]["totals"] if r["ok"] else None
            if None in runs.values():
                print(f"{net:<10} {batch:>5} (failed)", flush=True)
                continue
            s, q = runs["shared"], runs["pspad"]
            print(f"{net:<10} {batch:>5} {s['energy_pj'] / 1e9:>19.3f} {q['energy_pj'] / 1e9:>19.3f} "
                  f"{q['energy_pj'] / s['energy_pj']:>14.3f} {s['latency_seconds'] * 1e3:>20.3f} "
                  f"{q['latency_seconds'] * 1e3:>20.3f}", flush=True)
    print(f"outputs in {out}")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
