#!/usr/bin/env python3
"""Prices dflc's schedules with timeloop-model and records the figures.

    run_timeloop.py DFLC TIMELOOP_MODEL TIMELOOP_REV SCHEDULE.dfl OUT.json LAYER...

TIMELOOP_REV names the Timeloop build (tag and commit) for the record.

For each LAYER: `dflc export --timeloop LAYER` of SCHEDULE.dfl (copied into a
scratch OUT/ as schedule.dfl, its imports found with -I beside it), then
`timeloop-model OUT/timeloop/LAYER.yaml` in that directory; records Timeloop's
cycles, energy (pJ), computes and per-level energies with the command, the
Timeloop build and the date (README.md says how the recorded figures were
made). Needs no network; nothing is written but OUT.json.
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def stats(text):
    """Cycles, energy and computes from timeloop-model.stats.txt's summary."""
    summary = text[text.index("Summary Stats"):]
    out = {
        "cycles": int(re.search(r"^Cycles: (\d+)", summary, re.M).group(1)),
        "computes": int(re.search(r"^Computes = (\d+)", summary, re.M).group(1)),
    }
    # fJ per compute per component, with more digits than the uJ total.
    per = {}
    block = summary[summary.index("fJ/Compute"):]
    for line in block.splitlines()[1:]:
        m = re.match(r"\s+(\S+)\s+= ([0-9.eE+-]+)", line)
        if m:
            per[m.group(1)] = float(m.group(2))
    out["energy_pj"] = per["Total"] * out["computes"] / 1000
    out["energy_pj_by_component"] = {k: v * out["computes"] / 1000 for k, v in per.items()
                                     if k != "Total" and "<==>" not in k}
    return out


def main():
    dflc, model, revision, schedule, out_json = sys.argv[1:6]
    layers = sys.argv[6:]
    here = os.path.dirname(os.path.abspath(schedule))
    records = []
    for layer in layers:
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out")
            os.mkdir(out)
            shutil.copy(schedule, os.path.join(out, "schedule.dfl"))
            subprocess.run([dflc, "export", "-I", here, "--timeloop", layer, out], check=True,
                           stdout=subprocess.DEVNULL)
            run = os.path.join(out, "timeloop")
            subprocess.run([model, layer + ".yaml"], cwd=run, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            with open(os.path.join(run, "timeloop-model.stats.txt")) as f:
                rec = {"layer": layer}
                rec.update(stats(f.read()))
        rec["how"] = ("dflc export -I bench/reference/timeloop --timeloop %s OUT (OUT/schedule.dfl = %s); "
                      "cd OUT/timeloop && timeloop-model %s.yaml" % (layer, os.path.basename(schedule), layer))
        records.append(rec)
        print(layer, rec["cycles"], rec["energy_pj"], file=sys.stderr)
    doc = {
        "provenance": {
            "tool": "timeloop-model (NVlabs/timeloop), built as README.md says",
            "revision": revision,
            "schedule": os.path.basename(schedule),
            "date": datetime.date.today().isoformat(),
            "how": "bench/reference/timeloop/run_timeloop.py DFLC TIMELOOP_MODEL REV %s OUT.json %s"
                   % (os.path.basename(schedule), " ".join(layers)),
        },
        "layers": records,
    }
    with open(out_json, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
