#!/usr/bin/env python3
"""plots_match_report.py OUT...: each compile output's plots, as report.json's
"plots" names them, exist, are well-formed SVG, and draw the report's numbers:
every bar's data-pj / data-utilization is the report's value, a layer's
component bars add up to its total (mac + levels + noc + bus + static, the
report's own decomposition), and bar lengths are proportional to the values
(one scale per chart; utilization: 100 % is the plot's width, 600 px)."""
import json
import os
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def close(a, b, tol):
    """Equal up to the drawn value's 3 decimals and a relative `tol`."""
    return abs(a - b) <= 5e-4 + tol * max(abs(a), abs(b))


def bars(svg):
    return [r for r in ET.parse(svg).getroot().iter(NS + "rect") if "data-pj" in r.attrib or "data-utilization" in r.attrib]


def check(out):
    errors = []
    report = json.load(open(os.path.join(out, "report.json")))
    names = report["plots"]
    base = ["plots/energy_by_layer.svg", "plots/energy_by_level.svg", "plots/utilization.svg"]
    pareto = os.path.join(out, "pareto.json")
    if names != base + ["plots/tradeoff.svg"]:
        return [f"{out}: plots {names}"]
    files = {n: os.path.join(out, n) for n in names}
    for n, f in files.items():
        if not os.path.isfile(f):
            errors.append(f"{out}: {n} missing")
    if errors:
        return errors
    layers = {l["name"]: l for l in report["layers"]}
    # energy by layer: each component is the report's number; the parts sum to the total
    sums, parts, scale = {}, {}, []
    for r in bars(files["plots/energy_by_layer.svg"]):
        layer, comp, pj = r.get("data-layer"), r.get("data-component"), float(r.get("data-pj"))
        e = layers[layer]["energy_pj"]
        want = {"MAC": e["mac"], "NoC": e["noc"], "bus": e["bus"], "static": e["static"]}.get(comp)
        if want is None:
            want = next(l["energy_pj"] for l in layers[layer]["levels"] if l["level"] == comp)
        if not close(pj, want, 1e-9):
            errors.append(f"{out}: {layer} {comp} drawn as {pj} pJ, report {want}")
        sums[layer] = sums.get(layer, 0) + pj
        parts[layer] = parts.get(layer, 0) + 1
        if float(r.get("width")) > 20:   # widths are rounded to 0.1 px
            scale.append(float(r.get("width")) / pj)
    for layer, s in sums.items():
        # Each part is drawn to 3 decimals: their sum is off by up to 5e-4 a part.
        if abs(s - layers[layer]["energy_pj"]["total"]) > 5e-4 * parts[layer] + 1e-9 * abs(s):
            errors.append(f"{out}: {layer} parts add to {s}, total {layers[layer]['energy_pj']['total']}")
    if set(sums) != set(layers):
        errors.append(f"{out}: layers drawn {sorted(sums)} != report {sorted(layers)}")
    if scale and max(scale) > min(scale) * 1.01:
        errors.append(f"{out}: energy_by_layer bar lengths not proportional")
    # energy by level: the totals
    t = report["totals"]
    want = dict(t["levels_pj"], MAC=t["mac_pj"], NoC=t["noc_pj"], bus=t["bus_pj"], static=t["static_pj"])
    drawn = {r.get("data-component"): float(r.get("data-pj")) for r in bars(files["plots/energy_by_level.svg"])}
    if drawn.keys() != want.keys() or any(not close(drawn[k], want[k], 1e-9) for k in want):
        errors.append(f"{out}: energy_by_level {drawn} != report {want}")
    # utilization: 600 px is 100 %
    for r in bars(files["plots/utilization.svg"]):
        u, w = float(r.get("data-utilization")), float(r.get("width"))
        if not close(u, layers[r.get("data-layer")]["utilization"], 1e-6) or abs(w - 600 * u) > 0.051:
            errors.append(f"{out}: utilization of {r.get('data-layer')}: {u}, {w} px")
    errors += check_tradeoff(out, report, json.load(open(pareto)) if os.path.exists(pareto) else None,
                             files["plots/tradeoff.svg"])
    return errors


def check_tradeoff(out, report, pareto, svg):
    """One point per whole schedule the solver evaluated (report.json's
    solver.chains.evaluated); the front is pareto.json's (with --pareto) and
    that of the drawn points; the shown chains are among them; the ring is
    the report's totals."""
    errors = []
    circles = list(ET.parse(svg).getroot().iter(NS + "circle"))
    point = lambda c: (float(c.get("data-pj")), float(c.get("data-cycles")))
    near = lambda a, b: close(a[0], b[0], 1e-9) and close(a[1], b[1], 1e-9)
    front = [point(c) for c in circles if c.get("class") == "front"]
    evaluated = [point(c) for c in circles if c.get("class") == "evaluated"]
    chains = report["solver"]["chains"]
    if pareto:
        want = [(p["energy_pj"], p["latency_cycles"]) for p in pareto["front"]]
        if len(front) != len(want) or any(not near(a, b) for a, b in zip(front, want)):
            errors.append(f"{out}: tradeoff front {front} != pareto.json {want}")
    # The front, recomputed from the drawn points (3 decimals: two points can
    # tie there and not in the solver): each front point is an evaluated one,
    # and every evaluated point is matched or beaten in both by a front point.
    if any(not any(near(f, e) for e in evaluated) for f in front):
        errors.append(f"{out}: a front point {front} is not an evaluated one")
    for e in evaluated:
        if not any(f[0] <= e[0] + 1e-3 and f[1] <= e[1] + 1e-3 for f in front):
            errors.append(f"{out}: evaluated {e} is not matched or beaten by the front")
    for e in evaluated:
        if any(e[0] < f[0] - 1e-3 and e[1] < f[1] - 1e-3 for f in front):
            errors.append(f"{out}: evaluated {e} dominates a front point")
    chosen = [point(c) for c in circles if c.get("class") == "chosen"]
    t = report["totals"]
    if len(chosen) != 1 or not near(chosen[0], (t["energy_pj"], t["latency_cycles"])):
        errors.append(f"{out}: tradeoff chosen {chosen} != report totals")
    if len(evaluated) != chains["evaluated"] or (pareto and len(evaluated) != pareto["alternatives_evaluated"]):
        errors.append(f"{out}: {len(evaluated)} evaluated points, the report says {chains['evaluated']}")
    for b in chains["best"]:
        if not any(near(e, (b["energy_pj"], b["latency_cycles"])) for e in evaluated):
            errors.append(f"{out}: chain {b['energy_pj']} pJ, {b['latency_cycles']} cycles not drawn")
    return errors


if __name__ == "__main__":
    errors = [e for out in sys.argv[1:] for e in check(out)]
    print(f"plots of {len(sys.argv) - 1} reports checked")
    if errors:
        sys.exit("\n".join(errors[:20]))
