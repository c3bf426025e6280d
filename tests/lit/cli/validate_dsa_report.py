#!/usr/bin/env python3
"""validate_dsa_report.py SCHEMA REPORT...: each DSA report (a compile's
report.json, or a `dflc check --format json` output, whose dsa_schedules
entries are reports) is valid against the JSON Schema
(docs/dsa-report.schema.json); one line per report, exit 1 if any is not.

validate_dsa_report.py --mutants SCHEMA REPORT: the schema rejects each edit
a reader would trip on (a key renamed, a key missing, a stray key, a wrong
type or value), at every depth; prints "N of N mutants rejected"."""
import copy
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "compile"))
from validate_report import check_mutants, errors  # noqa: E402


def mutants(report):
    gt = lambda r: r["graphturbo"]
    edits = [
        ("latency_ms renamed latency", lambda r: gt(r)["cost"], lambda o: o.update(latency=o.pop("latency_ms"))),
        ("tensors.GB missing", lambda r: gt(r)["cost"]["tensors"], lambda o: o.pop("GB")),
        ("a stray top-level key", lambda r: r, lambda o: o.update(note="x")),
        ("tvm_like missing", lambda r: r, lambda o: o.pop("tvm_like")),
        ("order misspelt", gt, lambda o: o.update(order="depth-first")),
        ("binding a string", lambda r: gt(r)["instances"][0], lambda o: o.update(binding="8x1x1x1")),
        ("scope lower case", lambda r: gt(r)["instances"][0], lambda o: o.update(scope="lb")),
        ("sub-graph layers missing", lambda r: gt(r)["sub_graphs"][0], lambda o: o.pop("layers")),
        ("a stray speedup", lambda r: r["speedup"], lambda o: o.update(over_graphturbo=1.0)),
        ("schedule a number", lambda r: r, lambda o: o.update(schedule=1)),
    ]
    for what, where, edit in edits:
        r = copy.deepcopy(report)
        edit(where(r))
        yield what, r


def reports(path):
    data = json.load(open(path))
    return data["dsa_schedules"] if "dsa_schedules" in data else [data]


if sys.argv[1] == "--mutants":
    sys.exit(check_mutants(json.load(open(sys.argv[2])), reports(sys.argv[3])[0], mutants))

schema = json.load(open(sys.argv[1]))
bad = 0
for path in sys.argv[2:]:
    found = [e for r in reports(path) for e in errors(schema, r)]
    print(f"{os.path.basename(path)}: {'valid' if not found else 'INVALID'}")
    for e in found[:5]:
        print("  " + e)
    bad += bool(found)
sys.exit(1 if bad else 0)
