#!/usr/bin/env python3
"""Usage: compare_twins.py IMPORTED.json STDLIB.json MACS_FILE
          compare_twins.py --energy IMPORTED/report.json STDLIB/report.json

The first form: two `dflc show --json` outputs (an imported ONNX model, its
stdlib DFL twin) must list the same layers, in order, with the same type,
operands, shapes, windows, weights, bounds and MACs, and both total the MACs
in MACS_FILE (make_models.py's own count from the architecture's shapes). The second: two `dflc compile` reports must have the
same totals (energy by component, latency): the solver saw the same network."""
import json
import sys


def fail(msg):
    print("compare_twins: " + msg)
    sys.exit(1)


if sys.argv[1] == "--energy":
    a, b = (json.load(open(p)) for p in sys.argv[2:4])
    if a["totals"] != b["totals"]:
        fail(f"totals differ:\n  imported {a['totals']}\n  stdlib   {b['totals']}")
    print(f"same energy: {a['totals']['energy_pj']:.3f} pJ")
    sys.exit(0)

imported, stdlib = (json.load(open(p))["networks"][0] for p in sys.argv[1:3])
macs = int(open(sys.argv[3]).read())
la, lb = imported["layers"], stdlib["layers"]
if len(la) != len(lb):
    fail(f"{len(la)} layers imported, {len(lb)} in the stdlib")
for x, y in zip(la, lb):
    for k in sorted(set(x) | set(y)):
        if x.get(k) != y.get(k):
            fail(f"layer {y['name']}: {k} is {x.get(k)} imported, {y.get(k)} in the stdlib")
if imported["inputs"] != stdlib["inputs"] or imported["batch"] != stdlib["batch"]:
    fail("inputs or batch differ")
for name, net in (("imported", imported), ("stdlib", stdlib)):
    if net["total_macs"] != macs:
        fail(f"{name} total MACs {net['total_macs']}, expected {macs}")
print(f"{len(la)} layers equal, {macs} MACs")
