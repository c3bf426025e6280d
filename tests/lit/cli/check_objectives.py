#!/usr/bin/env python3
"""check_objectives.py WHAT ARGS...: what must hold of `dflc compile`'s
outputs under --batch, --max-latency, --max-energy, --no-pipelining and
--pareto (tests/lit/cli/objectives.test, batch.test).

  batch REPORT N WORK...      the report's batch is N and layer i's work is WORK[i]
  max-latency REPORT CYCLES   the total latency is at most CYCLES
  max-energy REPORT PJ        the total energy is at most PJ
  layer-by-layer REPORT       every segment is one layer, none pipelined
  fastest REPORT OTHER...     REPORT (an --objective latency run) is no slower
                              than the OTHER runs (other objectives)
  front PARETO REPORT         the front is non-dominated, by latency ascending,
                              and holds (marked chosen) or dominates the
                              written schedule
  constrained latency|energy PARETO OUT DFLC ARGS...
                              runs `DFLC ARGS -o OUT --max-latency B` (or
                              --max-energy B), B halfway along the front of
                              the same compile's --pareto run: the result
                              meets B and is the best point of the front that
                              does (by energy for latency, by latency for
                              energy), unless the objective's own best met it
"""
import json
import math
import subprocess
import sys


def fail(msg):
    sys.exit(f"check_objectives: {msg}")


def constrained(kind, pareto, out, command):
    pareto = json.load(open(pareto))
    front = pareto["front"]
    chosen = [p for p in front if p["chosen"]]
    key, other = ("latency_cycles", "energy_pj") if kind == "latency" else ("energy_pj", "latency_cycles")
    bound = (min(p[key] for p in front) + max(p[key] for p in front)) / 2
    flag = "--max-latency" if kind == "latency" else "--max-energy"
    # Rounded up: rounded to nearest, a front of one point would put the
    # bound just below that point.
    bound = float(math.ceil(bound))
    value = f"{bound:.0f}" if kind == "latency" else f"{bound:.0f}pJ"
    run = subprocess.run(command + ["-o", out, flag, value], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{flag} {value}: exit {run.returncode}: {run.stderr}")
    totals = json.load(open(out + "/report.json"))["totals"]
    if not totals[key] <= bound:
        fail(f"{flag} {value}: {key} {totals[key]}")
    if chosen and chosen[0][key] <= bound:
        expected = chosen[0][other]   # the unconstrained schedule meets it: kept
    else:
        expected = min(p[other] for p in front if p[key] <= bound)
    # At least as good as the best front point that meets the bound: the
    # constrained solve starts from another objective, so it may score
    # schedules the front's run did not.
    if totals[other] > expected * (1 + 1e-12):
        fail(f"{flag} {value}: {other} {totals[other]}, expected at most {expected}")


def main():
    what, args = sys.argv[1], sys.argv[2:]
    if what == "constrained":
        return constrained(args[0], args[1], args[2], args[3:])
    report = json.load(open(args[0] if what != "front" else args[1]))
    totals = report["totals"]
    if what == "batch":
        if report["batch"] != int(args[1]):
            fail(f"batch {report['batch']}, expected {args[1]}")
        work = [layer["work"] for layer in report["layers"]]
        if work != [int(w) for w in args[2:]]:
            fail(f"work {work}, expected {args[2:]}")
    elif what == "max-latency":
        if not totals["latency_cycles"] <= float(args[1]):
            fail(f"latency {totals['latency_cycles']} > {args[1]}")
    elif what == "max-energy":
        if not totals["energy_pj"] <= float(args[1]):
            fail(f"energy {totals['energy_pj']} > {args[1]}")
    elif what == "fastest":
        for other in args[1:]:
            theirs = json.load(open(other))["totals"]["latency_cycles"]
            if totals["latency_cycles"] > theirs:
                fail(f"--objective latency: {totals['latency_cycles']} cycles, {other}: {theirs}")
    elif what == "layer-by-layer":
        segments = report["segments"]
        if len(segments) != len(report["layers"]):
            fail(f"{len(segments)} segments for {len(report['layers'])} layers")
        for s in segments:
            if len(s["layers"]) != 1 or s["pipelined"]:
                fail(f"segment {s['layers']} is not one layer alone")
    elif what == "front":
        front = json.load(open(args[0]))["front"]
        if not front:
            fail("empty front")
        for a, b in zip(front, front[1:]):
            if not (a["latency_cycles"] < b["latency_cycles"] and a["energy_pj"] > b["energy_pj"]):
                fail(f"not sorted or dominated: {a} then {b}")
        # The written schedule is on the front (marked chosen) or dominated by
        # a point of it (another objective's solve found better on both).
        written = (totals["energy_pj"], totals["latency_cycles"])
        chosen = [p for p in front if p["chosen"]]
        if len(chosen) > 1 or any((p["energy_pj"], p["latency_cycles"]) != written for p in chosen):
            fail(f"points marked chosen are not the written schedule: {chosen}")
        if not chosen and not any(p["energy_pj"] <= written[0] and p["latency_cycles"] <= written[1] for p in front):
            fail("the written schedule is neither on the front nor dominated by it")
        names = [l["name"] for l in report["layers"]]
        for p in front:
            covered = sorted(l for s in p["segments"] for l in s["layers"])
            if covered != sorted(names):
                fail(f"a point's segments do not cover every layer once: {p['segments']}")
    else:
        fail(f"unknown check {what}")


main()
