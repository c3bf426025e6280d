#!/usr/bin/env python3
"""same_totals.py [--counts] CHECK.json REPORT.json: the totals and per-layer
energies of `dflc check --format json` equal those in the solver's report.json.
With --counts, what must agree across two templates that differ only in their
energies per access: every layer's latency and every level's access counts."""
import json
import sys

args = [a for a in sys.argv[1:] if a != "--counts"]
counts = len(args) < len(sys.argv) - 1
check = json.load(open(args[0]))["schedules"][0]
report = json.load(open(args[1]))
if not counts and check["totals"] != report["totals"]:
    sys.exit(f"totals differ:\n{check['totals']}\n{report['totals']}")
for a, b in zip(check["layers"], report["layers"]):
    if a["latency_cycles"] != b["latency_cycles"]:
        sys.exit(f"layer {a['name']}: latency {a['latency_cycles']} against {b['latency_cycles']}")
    if counts:
        for la, lb in zip(a["levels"], b["levels"]):
            if la["accesses"] != lb["accesses"]:
                sys.exit(f"layer {a['name']} level {la['level']}: accesses differ")
    elif a["energy_pj"] != b["energy_pj"]:
        sys.exit(f"layer {a['name']} differs")
if len(check["layers"]) != len(report["layers"]):
    sys.exit("the layers differ")
if not (check["valid"] and check["complete"]):
    sys.exit("the written schedule is not valid and complete")
