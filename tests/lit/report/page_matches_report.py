#!/usr/bin/env python3
"""page_matches_report.py OUT...: each compile's report.html says what its
report.json says: one table row per layer of report.json, in its order, with
its name, its energy_pj.total, latency_cycles, utilization, bound and gap
(the cells' data-v, to their printed decimals); every plot report.json names inline,
byte for byte as in OUT/plots; nothing referenced outside the page.
check(OUT, loops) also compares the loop nests with `dflc show --loops`'s
text (tests/lit/compile/all_stdlib.py runs it on every stdlib compile)."""
import json
import os
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_dom import parse  # noqa: E402


def close(a, b):
    """Equal up to the page's 3 decimals (6 for a fraction) and rounding."""
    return abs(a - b) <= 5e-4 + 1e-12 * max(abs(a), abs(b))


def check(out, loops=None):
    page_path = os.path.join(out, "report.html")
    if not os.path.isfile(page_path):
        return [f"{out}: no report.html"]
    report = json.load(open(os.path.join(out, "report.json")))
    text = open(page_path, encoding="utf-8").read()
    page = parse(page_path)
    errors = []
    if page.refs or len(page.scripts) != 1 or any("url(" in s for s in page.styles):
        errors.append(f"{out}: report.html references something outside it: {page.refs} {page.scripts}")
    cols = {h.get("data-key"): i for i, h in enumerate(page.heads)}
    layers = report["layers"]
    if len(page.rows) != len(layers):
        return errors + [f"{out}: report.html has {len(page.rows)} rows for {len(layers)} layers"]
    for (i, cells), layer in zip(page.rows, layers):
        name = cells[cols["name"]]
        if name != layer["name"]:
            errors.append(f"{out}: row {i} is {name!r}, report.json's layer {layer['name']!r}")
            continue
        for key, want in (("energy", layer["energy_pj"]["total"]), ("latency", layer["latency_cycles"]),
                          ("utilization", layer["utilization"])):
            got = float(cells[cols[key]])
            if not close(got, want):
                errors.append(f"{out}: {name} {key} {got} on the page, {want} in report.json")
        bound, gap = layer.get("bound"), layer.get("gap")
        if bound is not None:
            for key, want in (("energy-bound", bound["energy_pj"]), ("latency-bound", bound["cycles"]),
                              ("energy-gap", gap["energy"]), ("latency-gap", gap["cycles"])):
                if want is not None and not close(float(cells[cols[key]]), want):
                    errors.append(f"{out}: {name} {key} {cells[cols[key]]} on the page, {want} in report.json")
            if cells[cols["binding"]] != bound["binding"]:
                errors.append(f"{out}: {name} binds {cells[cols['binding']]!r} on the page, "
                              f"{bound['binding']!r} in report.json")
    for plot in report["plots"]:
        svg = open(os.path.join(out, plot), encoding="utf-8").read()
        if f'<figure class="plot" data-path="{plot}">\n{svg}' not in text:
            errors.append(f"{out}: report.html does not hold {plot} as written")
    if loops is not None and (not isinstance(page.loops, tuple) or page.loops[0] != loops):
        errors.append(f"{out}: report.html's loop nests are not `dflc show --loops`'s")
    return errors


if __name__ == "__main__":
    failures = [e for out in sys.argv[1:] for e in check(out)]
    print(f"report.html matches report.json in {len(sys.argv) - 1} outputs" if not failures else "\n".join(failures))
    sys.exit(1 if failures else 0)
