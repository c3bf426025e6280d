#!/usr/bin/env python3
"""all_stdlib.py DFLC STDLIB TMP [--only T,... | --except T,...]: the solver's schedule of every stdlib network
on every stdlib template is complete and valid when re-checked, and the
re-check reports the solver's totals (the property the solver must keep),
with no pipelined segment whose buffers the check cannot derive (W0831: the
solver never writes one, docs/directives.md §9);
its plots draw the report's numbers (plots_match_report.py); its account of
the solver's choices agrees with the schedule (check_solver_choices.py); no
layer and not the run is below its lower bound (bounds_hold.py); the
report is valid against docs/report.schema.json (validate_report.py); the
loop-nest view shows every layer; report.html says what report.json says,
with the plots and the loop nests as written (../report/page_matches_report.py);
and `dflc diff` of the schedule against a copy of itself runs and finds
nothing that differs. --only and --except name templates (file names without
.dfl) to take alone or to leave out, so that two lit tests can share the
templates and run side by side."""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
from bounds_hold import errors as bound_errors
from check_solver_choices import check as check_choices
from plots_match_report import check as check_plots
from validate_report import errors as schema_errors
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
from page_matches_report import check as check_page  # noqa: E402

dflc, stdlib, tmp = sys.argv[1:4]
only = set(sys.argv[5].split(",")) if sys.argv[4:5] == ["--only"] else None
leave = set(sys.argv[5].split(",")) if sys.argv[4:5] == ["--except"] else set()


def taken(hw):
    name = os.path.basename(hw)[:-4]
    return (only is None or name in only) and name not in leave


schema = json.load(open(os.path.join(stdlib, "..", "docs", "report.schema.json")))
failures = []
runs = 0
# Known refusals, each a located diagnostic that names the rule (docs/limits.md),
# as (network, template): the expected stderr. None today: Llama 3's decode
# softmax over 8,193 keys, whose input and output rows (32,772 B) do not fit a
# 32 KiB node on the two Eyeriss-like templates, splits its rows there, and so
# does Stable Diffusion v1.5's U-Net its GroupNorm rows at 64 x 64 (80 to 240
# KiB) on all four (docs/directives.md §7, "Rows and the passes").
REFUSED = {}
refused = 0
# The computational-memory templates (cm_*.dfl) take placements, not
# schedules: tests/lit/cm checks them; the DSA templates (dsa_*.dfl)
# GraphTurbo's plans: tests/lit/cli/dsa-compile.test.
for hw in sorted(h for h in glob.glob(os.path.join(stdlib, "hw", "*.dfl"))
                if not os.path.basename(h).startswith(("cm_", "dsa_")) and taken(h)):
    for net in sorted(glob.glob(os.path.join(stdlib, "nets", "*.dfl"))):
        name = f"{os.path.basename(net)[:-4]}-on-{os.path.basename(hw)[:-4]}"
        out = os.path.join(tmp, name)
        runs += 1
        c = subprocess.run([dflc, net, hw, "-o", out], capture_output=True, text=True)
        why = REFUSED.get((os.path.basename(net)[:-4], os.path.basename(hw)[:-4]))
        if why:
            refused += 1
            if c.returncode != 1 or why not in c.stderr or os.path.exists(out):
                failures.append(f"{name}: expected exit 1 with '{why}' and no output, got {c.returncode}: "
                                f"{c.stderr.strip()[:300]}")
            continue
        if c.returncode != 0:
            failures.append(f"{name}: compile exited {c.returncode}: {c.stderr.strip()[:300]}")
            continue
        if "W0831" in c.stderr:
            failures.append(f"{name}: the solver wrote a segment the check cannot derive: {c.stderr.strip()[:300]}")
        k = subprocess.run([dflc, "check", "--format", "json", os.path.join(out, "schedule.dfl")],
                           capture_output=True, text=True)
        if k.returncode != 0:
            failures.append(f"{name}: check exited {k.returncode}: {k.stdout[:300]}")
            continue
        checked = json.loads(k.stdout)["schedules"][0]
        report = json.load(open(os.path.join(out, "report.json")))
        if not (checked["valid"] and checked["complete"]) or checked["totals"] != report["totals"]:
            failures.append(f"{name}: re-check differs from the solver's report")
        loops = subprocess.run([dflc, "show", "--loops", os.path.join(out, "schedule.dfl")], capture_output=True, text=True)
        shown = [l.split(":")[0][len("layer "):] for l in loops.stdout.splitlines() if l.startswith("layer ")]
        if loops.returncode != 0 or shown != [l["name"] for l in report["layers"]]:
            failures.append(f"{name}: show --loops exited {loops.returncode}, showed {len(shown)} layers")
        shutil.copy(os.path.join(out, "schedule.dfl"), os.path.join(out, "again.dfl"))
        d = subprocess.run([dflc, "diff", os.path.join(out, "schedule.dfl"), os.path.join(out, "again.dfl")],
                           capture_output=True, text=True)
        if d.returncode != 0 or "directives that differ (-: A's lines, +: B's)\n  (none)" not in d.stdout:
            failures.append(f"{name}: diff against itself exited {d.returncode}: {d.stdout[-300:]}")
        failures += check_plots(out)
        failures += check_page(out, loops.stdout)
        failures += check_choices(out)
        failures += bound_errors(report, name)
        failures += [f"{name}: report.json: {e}" for e in schema_errors(schema, report)]
print(f"{runs - refused - len(failures)} of {runs - refused} schedules valid; {refused} refused as expected")
if failures:
    sys.exit("\n".join(failures))
