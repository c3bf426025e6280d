#!/usr/bin/env python3
"""same_totals.py CHECK.json REPORT.json: the totals and per-layer energies of
`dflc check --format json` equal those in the solver's report.json."""
import json
import sys

check = json.load(open(sys.argv[1]))["schedules"][0]
report = json.load(open(sys.argv[2]))
if check["totals"] != report["totals"]:
    sys.exit(f"totals differ:\n{check['totals']}\n{report['totals']}")
for a, b in zip(check["layers"], report["layers"]):
    if a["energy_pj"] != b["energy_pj"] or a["latency_cycles"] != b["latency_cycles"]:
        sys.exit(f"layer {a['name']} differs")
if not (check["valid"] and check["complete"]):
    sys.exit("the written schedule is not valid and complete")
