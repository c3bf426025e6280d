#!/usr/bin/env python3
"""bounds_hold.py OUT...: in each compile's report.json no layer, and not the
run, is below its lower bound (docs/directives.md §14): energy_pj.total >=
bound.energy_pj and latency_cycles >= bound.cycles, the gaps are what those
give (chosen / bound - 1), and each layer's bound names what binds it
(compute or a level of the template). A bound above a schedule would not be
a bound, so this is the check that it is one. Prints the gap distribution.
`--self-test` first checks that a report doctored to put a bound above its
layer fails the check."""
import json
import os
import sys


def at_least(value, bound):
    return value >= bound * (1 - 1e-9) - 1e-9


def check(out):
    report = json.load(open(os.path.join(out, "report.json")))
    return errors(report, out), [l["gap"] for l in report["layers"] if "gap" in l]


def errors(report, name):
    found = []

    def holds(what, energy, cycles, bound, gap):
        if not at_least(energy, bound["energy_pj"]):
            found.append(f"{name}: {what}: energy {energy} pJ below its bound {bound['energy_pj']}")
        if not at_least(cycles, bound["cycles"]):
            found.append(f"{name}: {what}: {cycles} cycles below its bound {bound['cycles']}")
        for key, value, b in (("energy", energy, bound["energy_pj"]), ("cycles", cycles, bound["cycles"])):
            want = value / b - 1 if b > 0 else None
            off = want is not None and gap[key] is not None and abs(gap[key] - want) > 1e-9 * max(1, want)
            if (want is None) != (gap[key] is None) or off:
                found.append(f"{name}: {what}: gap {key} {gap[key]}, {want} from its figures")

    levels = {l["level"] for layer in report["layers"] for l in layer.get("levels", [])}
    for layer in report["layers"]:
        if not (layer["complete"] and layer["valid"]):
            continue
        holds(layer["name"], layer["energy_pj"]["total"], layer["latency_cycles"], layer["bound"], layer["gap"])
        if layer["bound"]["binding"] != "compute" and layer["bound"]["binding"] not in levels:
            found.append(f"{name}: {layer['name']}: binds {layer['bound']['binding']!r}, no level of the template")
    t = report["totals"]
    if t["bound"] is not None:
        holds("total", t["energy_pj"], t["latency_cycles"], t["bound"], t["gap"])
        summed = sum(l["bound"]["energy_pj"] for l in report["layers"] if "bound" in l)
        if not at_least(t["bound"]["energy_pj"], summed):
            found.append(f"{name}: total energy bound {t['bound']['energy_pj']} below its layers' {summed}")
    return found


def self_test(out):
    report = json.load(open(os.path.join(out, "report.json")))
    layer = next(l for l in report["layers"] if "bound" in l)
    layer["bound"]["energy_pj"] = layer["energy_pj"]["total"] * 1.01
    return len(errors(report, out)) > 0


def quantiles(values):
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
    return f"min {values[0]:.3f}, median {pick(0.5):.3f}, p90 {pick(0.9):.3f}, max {values[-1]:.3f}"


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--self-test":
        args = args[1:]
        if not self_test(args[0]):
            sys.exit("a bound above its layer passed the check")
        print("a doctored bound fails the check")
    failures, gaps = [], []
    for out in args:
        f, g = check(out)
        failures += f
        gaps += g
    print("\n".join(failures) if failures else f"{len(gaps)} layers in {len(args)} reports at or above their bounds")
    if gaps and not failures:
        for key in ("energy", "cycles"):
            print(f"{key} gap: " + quantiles([g[key] for g in gaps if g[key] is not None]))
    sys.exit(1 if failures else 0)
