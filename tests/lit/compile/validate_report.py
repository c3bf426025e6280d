#!/usr/bin/env python3
"""validate_report.py SCHEMA REPORT...: each report is valid against the JSON
Schema (docs/report.schema.json); prints one line per report, exits 1 if any
is not. Also importable: errors(schema, report) -> [str].

validate_report.py --mutants SCHEMA REPORT: the schema rejects each edit of a
valid report that a reader would trip on (a key renamed, a key missing, a
stray key, a wrong type), at every depth; prints "N of N mutants rejected"."""
import json
import sys

import jsonschema


def errors(schema, report):
    v = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in v.iter_errors(report)]


def mutants(report):
    """(what, edited copy) pairs: one edit each, the report left as it was."""
    import copy
    layer = lambda r: r["layers"][0]
    level = lambda r: r["layers"][0]["levels"][0]
    edits = [
        ("units_in_use renamed units_used", level, lambda o: o.update(units_used=o.pop("units_in_use"))),
        ("stacked missing", level, lambda o: o.pop("stacked")),
        ("layer energy_pj.total missing", lambda r: layer(r)["energy_pj"], lambda o: o.pop("total")),
        ("layer utilization a string", layer, lambda o: o.update(utilization="24 %")),
        ("totals.latency_cycles renamed latency", lambda r: r["totals"], lambda o: o.update(latency=o.pop("latency_cycles"))),
        ("plots missing", lambda r: r, lambda o: o.pop("plots")),
        ("a stray top-level key", lambda r: r, lambda o: o.update(note="x")),
        ("a stray solver key", lambda r: r["solver"], lambda o: o.update(alternatives=[])),
        ("segment pipelined missing", lambda r: r["segments"][0], lambda o: o.pop("pipelined")),
        ("tile role misspelt", lambda r: level(r)["tiles"], lambda o: o.update(ifmap=o.pop("ifm"))),
    ]
    for what, where, edit in edits:
        r = copy.deepcopy(report)
        edit(where(r))
        yield what, r


def check_mutants(schema, report, mutants):
    """Prints how many of the (what, edited copy) pairs the schema rejects and
    the ones it accepts; returns the exit status (1 if any is accepted)."""
    assert not errors(schema, report), "the report itself must be valid"
    edits = list(mutants(report))
    accepted = [what for what, r in edits if not errors(schema, r)]
    print(f"{len(edits) - len(accepted)} of {len(edits)} mutants rejected")
    for what in accepted:
        print(f"  accepted: {what}")
    return 1 if accepted else 0


if __name__ == "__main__" and sys.argv[1] == "--mutants":
    schema, report = (json.load(open(p)) for p in sys.argv[2:4])
    sys.exit(check_mutants(schema, report, mutants))

if __name__ == "__main__":
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    bad = 0
    for path in sys.argv[2:]:
        found = errors(schema, json.load(open(path)))
        print(f"{path}: {'valid' if not found else 'INVALID'}")
        for e in found[:5]:
            print(f"  {e}")
        bad += bool(found)
    sys.exit(1 if bad else 0)
