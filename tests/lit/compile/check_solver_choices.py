#!/usr/bin/env python3
"""check_solver_choices.py OUT...: report.json's account of why the solver
chose its segments agrees with the schedule it wrote, as the analysis priced
it, recomputed here from the report's own per-layer table:
- segment_choices are exactly the written segments of two or more layers, in
  order, with the written kind (pipelined: spatial; split into instances:
  instances, with the written split; else temporal);
- the chosen kind's price is what the analysis charges the written segment:
  the sum of its layers' energy_pj.total;
- a null price carries its reason (*_why), and no price is below its bound;
- under the energy objective, the chosen kind costs no more than any other
  kind priced for the same layers (the DP over segment costs picks the least);
- chains are best first by the objective, their segments of two or more layers
  are named, and the chain marked chosen has the report's totals and segments."""
import json
import os
import sys


def close(a, b):
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1.0)


def value(objective, e, l):
    return {"energy": e, "latency": l, "edp": e * l}[objective]


def check(out):
    r = json.load(open(os.path.join(out, "report.json")))
    s, errors = r["solver"], []
    energy = {l["name"]: l["energy_pj"]["total"] for l in r["layers"]}
    order = [l["name"] for l in r["layers"]]
    def kind(g):
        return "spatial" if g["pipelined"] else "instances" if g["split"] else "temporal"
    written = [(g["layers"][0], g["layers"][-1], kind(g), g["layers"], g["split"])
               for g in r["segments"] if len(g["layers"]) > 1]
    choices = s["segment_choices"]
    if [(c["first"], c["last"], c["chosen"]) for c in choices] != [w[:3] for w in written]:
        errors.append(f"{out}: segment_choices {[(c['first'], c['last'], c['chosen']) for c in choices]} != written {[w[:3] for w in written]}")
        return errors
    for c, w in zip(choices, written):
        name = f"{out}: {c['first']} .. {c['last']}"
        if c["layers"] != len(w[3]) or w[3] != order[order.index(c["first"]):order.index(c["last"]) + 1]:
            errors.append(f"{name}: layers {c['layers']} != the written segment's {w[3]}")
        price = {"layer_by_layer": c["layer_by_layer_pj"], "temporal": c["temporal_pj"], "spatial": c["spatial_pj"],
                 "instances": c["instances_pj"]}
        if c["chosen"] == "instances" and c["split"] != w[4]:
            errors.append(f"{name}: priced split {c['split']} != the written {w[4]}")
        if (c["instances_pj"] is None) != (c["split"] is None):
            errors.append(f"{name}: an instances price without its split, or a split without a price")
        charged = sum(energy[l] for l in w[3])
        if price[c["chosen"]] is None or not close(price[c["chosen"]], charged):
            errors.append(f"{name}: chosen {c['chosen']} priced {price[c['chosen']]}, the analysis charges {charged}")
        for k in ("temporal", "spatial", "instances"):
            if price[k] is None and not c.get(f"{k}_why"):
                errors.append(f"{name}: no {k} price and no reason")
        if c["spatial_pj"] is not None and c["spatial_bound_pj"] is not None and c["spatial_pj"] < c["spatial_bound_pj"] * (1 - 1e-9):
            errors.append(f"{name}: spatial {c['spatial_pj']} below its lower bound {c['spatial_bound_pj']}")
        if s["objective"] == "energy":
            cheaper = [k for k, p in price.items() if p is not None and p < price[c["chosen"]] * (1 - 1e-9)]
            if cheaper:
                errors.append(f"{name}: chose {c['chosen']} ({price[c['chosen']]}) over cheaper {cheaper} {[price[k] for k in cheaper]}")
    chains = s["chains"]
    best = chains["best"]
    values = [value(s["objective"], b["energy_pj"], b["latency_cycles"]) for b in best]
    if values != sorted(values) or chains["shown"] != len(best) or chains["evaluated"] < len(best):
        errors.append(f"{out}: chains not best first or miscounted")
    chosen = [b for b in best if b["chosen"]]
    t = r["totals"]
    if len(chosen) > 1 or (chosen and not (close(chosen[0]["energy_pj"], t["energy_pj"]) and close(chosen[0]["latency_cycles"], t["latency_cycles"]))):
        errors.append(f"{out}: chosen chain {chosen} != totals")
    elif "max_latency_cycles" not in s and "max_energy_pj" not in s and best and not best[0]["chosen"]:
        errors.append(f"{out}: unconstrained, yet the best chain by {s['objective']} is not the one written")
    elif chosen and [(g["first"], g["last"], g["kind"], g["split"]) for g in chosen[0]["segments"]] != [w[:3] + w[4:] for w in written]:
        errors.append(f"{out}: chosen chain's segments != the written ones")
    return errors


if __name__ == "__main__":
    errors = [e for out in sys.argv[1:] for e in check(out)]
    print(f"solver choices of {len(sys.argv) - 1} reports checked")
    if errors:
        sys.exit("\n".join(errors[:20]))
