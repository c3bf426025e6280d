#!/usr/bin/env python3
"""Exports layers of a stored schedule to Timeloop, imports them back, and
compares the imported schedule's analysis with the original layer's.

    roundtrip_timeloop.py DFLC SCHED INCLUDE WORK FIGURES.json

For each layer of FIGURES.json (bench/reference/timeloop/: timeloop-model's
recorded figures): `dflc export --timeloop LAYER` of SCHED, `dflc import
--timeloop` of that YAML into WORK/LAYER/imported, `dflc check --format json`
of the imported schedule. One line a layer: its cycles against the
original's and Timeloop's recorded ones, its energy (total and per level)
against the original's (within 10^-9: the same directives give the same
numbers; else the difference and the levels that differ), its DRAM energy against Timeloop's recorded one (within 10^-4, as
agree_timeloop.py) and its MACs. Exit 0 (FileCheck judges); a command that fails is
printed as such.
"""
import json
import os
import shutil
import subprocess
import sys


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return p.stdout


def layers(report):
    return {l["name"]: l for l in json.loads(report)["schedules"][0]["layers"]}


def same(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1)


def main():
    dflc, sched, include, work, figures = sys.argv[1:6]
    original = layers(run(dflc, "check", "--format", "json", sched))
    for rec in json.load(open(figures))["layers"]:
        name = rec["layer"]
        out = os.path.join(work, name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        shutil.copy(sched, os.path.join(out, "schedule.dfl"))
        try:
            run(dflc, "export", "-I", include, "--timeloop", name, out)
            imported_dir = os.path.join(out, "imported")
            run(dflc, "import", "--timeloop", os.path.join(out, "timeloop", name + ".yaml"), imported_dir)
            mine = layers(run(dflc, "check", "--format", "json", os.path.join(imported_dir, "schedule.dfl")))[name]
        except RuntimeError as e:
            print("%s: FAILED %s" % (name, e))
            continue
        orig = original[name]
        cycles = round(mine["compute_cycles"])
        c = "cycles %s %d" % ("equal" if cycles == round(orig["compute_cycles"]) else
                              "DIFFER from %d" % round(orig["compute_cycles"]), cycles)
        t = "timeloop's %s" % ("equal" if cycles == rec["cycles"] else "DIFFER %d" % rec["cycles"])
        levels = {lv["level"]: lv["energy_pj"] for lv in orig["levels"]}
        differ = [lv["level"] for lv in mine["levels"] if not same(lv["energy_pj"], levels.get(lv["level"], -1))]
        delta = mine["energy_pj"]["total"] - orig["energy_pj"]["total"]
        e = ("energy equal" if same(mine["energy_pj"]["total"], orig["energy_pj"]["total"]) and not differ
             else "energy DIFFERS by %+.1f pJ at %s" % (delta, ",".join(differ) or "no level"))
        dram = [lv["energy_pj"] for lv in mine["levels"] if lv["level"] == "DRAM"][0]
        tdram = rec["energy_pj_by_component"]["DRAM"]
        td = "timeloop's DRAM %s" % ("equal" if abs(dram / tdram - 1) <= 1e-4 else "DIFFERS %.6f" % (dram / tdram))
        w = "work %s" % ("equal" if same(mine["work"], orig["work"]) else "DIFFERS")
        print("%s: %s, %s, %s, %s, %s" % (name, c, t, e, td, w))


if __name__ == "__main__":
    main()
