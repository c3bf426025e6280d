"""Checks OUT/sim.json of `dflc sim` on a computational-memory chip
(docs/cm.md, "sim.json") independently of dflc: the run is bit-exact and
free of RAW/WAR violations; its numbers agree with each other (busy = MxV +
DPU cycles, utilization = busy / cycles, the steady state from the images'
completion cycles, layer by layer = its parts); every core runs on the core
placement.json gives its tile and has its LCU as C in OUT/lcu; the buffers
fit the SRAM; and, where the test derives them by hand, the cycles per image.

usage: check_sim.py OUT [--sram BYTES] [--cycles-per-image N] [--min-cycles-per-image N]
"""
import argparse
import json
import os
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sram", type=int)
    ap.add_argument("--cycles-per-image", type=float)
    ap.add_argument("--min-cycles-per-image", type=float)
    a = ap.parse_args()
    sim = json.load(open(os.path.join(a.out, "sim.json")))
    placement = json.load(open(os.path.join(a.out, "placement.json")))
    errors = []

    def expect(cond, what):
        if not cond:
            errors.append(what)

    expect(sim["ok"] and sim["bit_exact"], "the run is not ok")
    expect(sim["violations"] == [] and sim["violations_not_listed"] == 0, "violations: %s" % sim["violations"][:3])
    expect(all(l["equal"] for l in sim["layers"]), "layers differ from the reference")
    done, cycles, batch = sim["image_done"], sim["cycles"], sim["batch"]
    expect(len(done) == batch, "one completion per image")
    expect(all(x <= y for x, y in zip(done, done[1:])), "images complete in order")
    expect(sim["fill_cycles"] == done[0], "fill = the first image's completion")
    expect(done[-1] <= cycles, "the last image completes within the run")
    steady = (done[-1] - done[0]) / (batch - 1) if batch > 1 else cycles
    expect(abs(sim["cycles_per_image"] - steady) < 1e-9, "cycles per image %s, from the completions %s" % (sim["cycles_per_image"], steady))
    if a.cycles_per_image is not None:
        expect(sim["cycles_per_image"] == a.cycles_per_image,
               "cycles per image %s, by hand %s" % (sim["cycles_per_image"], a.cycles_per_image))
    if a.min_cycles_per_image is not None:
        expect(sim["cycles_per_image"] >= a.min_cycles_per_image,
               "cycles per image %s below the bound %s" % (sim["cycles_per_image"], a.min_cycles_per_image))

    # Tiles on their placed cores: `L_rR_cC` is tile L[R,C], an untiled L is L.
    placed = {}
    for p in placement["partitions"]:
        for t in p["tiles"]:
            placed[t["name"]] = t["core"]
    regions = set()
    for c in sim["cores"]:
        name = c["region"]
        regions.add(name)
        m = re.fullmatch(r"(.*)_r(\d+)_c(\d+)", name)
        tile = "%s[%s,%s]" % m.groups() if m else name
        if name.startswith("gcu_"):
            expect(c["core"] == -1, "%s is the GCU" % name)
        else:
            expect(placed.get(tile) == c["core"], "%s on core %s, placed on %s" % (name, c["core"], placed.get(tile)))
        expect(c["busy_cycles"] == c["mvm_cycles"] + c["dpu_cycles"], "%s: busy = MxV + DPU" % name)
        expect(c["busy_cycles"] <= cycles and c["last_end"] <= cycles, "%s busy beyond the run" % name)
        expect(abs(c["utilization"] - c["busy_cycles"] / cycles) < 1e-9, "%s: utilization" % name)
        expect(sum(c["stalls"].values()) == c["stall_cycles"], "%s: stalls add up" % name)
        expect(c["busy_cycles"] + c["stall_cycles"] <= cycles, "%s: busy and stalled beyond the run" % name)
        if a.sram is not None:
            expect(c["sram_bytes"] <= a.sram, "%s: %d bytes of SRAM" % (name, c["sram_bytes"]))
        lcu = os.path.join(a.out, c["lcu"])
        expect(os.path.exists(lcu) and ("void lcu_%s(" % name) in open(lcu).read(), "%s: no LCU in %s" % (name, lcu))
    expect(len(placed) + len([r for r in regions if r.startswith("gcu_")]) == len(regions), "a region per tile and GCU input")

    lbl = sim["layer_by_layer"]
    expect(lbl["cycles"] == sum(p["program_cycles"] + p["compute_cycles"] for p in lbl["partitions"]), "layer by layer adds up")
    expect(abs(sim["speedup_over_layer_by_layer"] - lbl["cycles"] / (cycles + sim["pipelined_program_cycles"])) < 1e-9,
           "the speedup")

    for e in errors:
        print("check_sim: " + e, file=sys.stderr)
    sys.exit(1 if errors else 0)


main()
