#!/usr/bin/env python3
"""Compares dflc's numbers with recorded timeloop-model figures.

    dflc check --format json SCHED | agree_timeloop.py FIGURES.json --within TOL --idle-pj E

Per layer of FIGURES.json (bench/reference/timeloop/timeloop.json): dflc's
compute cycles against Timeloop's; dflc's DRAM energy against Timeloop's
(within 10^-4); Timeloop's computes beyond the layer's MACs (the idle PEs of
an imperfect spatial factor, which Timeloop counts and dflc does not); and
the energy ratio dflc / Timeloop, as is and with those idle computes taken
out of Timeloop's at E pJ each (a MAC and its 4 register-file accesses),
`ok` within TOL, `OFF` beyond (docs/timeloop.md). One line a layer; exit 0
(FileCheck judges).
"""
import json
import sys


def main():
    figures = json.load(open(sys.argv[1]))
    tol = float(sys.argv[sys.argv.index("--within") + 1])
    per_idle = float(sys.argv[sys.argv.index("--idle-pj") + 1])
    layers = {l["name"]: l for l in json.load(sys.stdin)["schedules"][0]["layers"]}
    judge = lambda r: "%s %.4f" % ("ok" if abs(r - 1) <= tol else "OFF", r)
    for rec in figures["layers"]:
        mine = layers[rec["layer"]]
        cycles = round(mine["compute_cycles"])
        c = ("cycles equal %d" % cycles if cycles == rec["cycles"]
             else "cycles differ dflc %d timeloop %d" % (cycles, rec["cycles"]))
        dram = [lv for lv in mine["levels"] if lv["level"] == "DRAM"][0]["energy_pj"]
        dram /= rec["energy_pj_by_component"]["DRAM"]
        d = "DRAM %s" % ("equal" if abs(dram - 1) <= 1e-4 else "differs %.6f" % dram)
        idle = rec["computes"] - round(mine["work"])
        total = mine["energy_pj"]["total"]
        print("%s: %s, %s, idle computes %d, energy %s, without idle computes %s"
              % (rec["layer"], c, d, idle, judge(total / rec["energy_pj"]),
                 judge(total / (rec["energy_pj"] - idle * per_idle))))


if __name__ == "__main__":
    main()
