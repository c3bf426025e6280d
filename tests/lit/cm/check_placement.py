#!/usr/bin/env python3
"""Usage: check_placement.py PLACEMENT_JSON ROWS COLS IN OUT [--brute]
       [--partitions P] [--tiles T] [--mvms M]

Checks a placement.json of `dflc compile` for a CM mesh of ROWS x COLS cores
(GCU input at core IN, output at core OUT) independently of dflc: distances
are Manhattan distances on the mesh (a GCU port is one hop from its core).
  - every tile on its own core (injective), on the mesh;
  - every edge routed: its endpoints' distance >= 1;
  - words x hops summed here equals the reported traffic, and the reported
    cost is at least the reported lower bound (equal when optimal);
  --brute: enumerates every injective assignment of the tiles to the cores,
    and the reported cost must be the minimum and the status optimal;
  --partitions 'a;b,c': the partitions' layers, in order;
  --tiles 'a=3x1,b=1x2': row x column tiles of the named crossbar layers;
  --mvms 'a=64,b=16': MxVs per image of the named crossbar layers;
  --edges 'a>b[0,0]=2048;...': words per image on the named edges (summed
    over kinds), and no other edge."""
import itertools
import json
import sys


def fail(msg):
    sys.exit("check_placement.py: " + msg)


def main():
    args = sys.argv[1:]
    path, rows, cols, port_in, port_out = args[0], *map(int, args[1:5])
    opts = dict(zip(args[5::2], args[6::2])) if "--brute" not in args else {}
    brute = "--brute" in args
    if brute:
        rest = [a for a in args[5:] if a != "--brute"]
        opts = dict(zip(rest[0::2], rest[1::2]))
    j = json.load(open(path))
    cores = rows * cols
    tile_core = {}
    for p in j["partitions"]:
        for t in p["tiles"]:
            tile_core[t["name"]] = t["core"]
    used = list(tile_core.values())
    if len(set(used)) != len(used):
        fail(f"two tiles share a core: {sorted(used)}")
    if any(not 0 <= c < cores for c in used):
        fail(f"a core off the mesh: {used}")
    if j["cores_used"] != len(used):
        fail(f"cores_used {j['cores_used']} but {len(used)} tiles")

    def dist(a, b):
        return abs(a // cols - b // cols) + abs(a % cols - b % cols)

    names = sorted(tile_core)
    edges = [(e["from"], e["to"], e["words_per_image"]) for e in j["edges"]]

    def cost(assign):
        total = 0
        for f, t, w in edges:
            if f == "gcu.input":
                h = 1 + dist(port_in, assign[t])
            elif t == "gcu.output":
                h = 1 + dist(assign[f], port_out)
            else:
                h = dist(assign[f], assign[t])
            if h < 1:
                fail(f"edge {f} -> {t} has no route")
            total += w * h
        return total

    pl = j["placement"]
    traffic = cost(tile_core)
    if traffic != pl["traffic_word_hops_per_image"]:
        fail(f"traffic recomputed {traffic}, reported {pl['traffic_word_hops_per_image']}")
    if pl["objective"] == "traffic" and pl["cost"] != traffic:
        fail(f"cost {pl['cost']} is not the traffic {traffic}")
    if pl["cost"] < pl["lower_bound"]:
        fail(f"cost {pl['cost']} below the lower bound {pl['lower_bound']}")
    if pl["status"] == "optimal" and pl["cost"] != pl["lower_bound"]:
        fail("optimal but the bound differs")
    if pl["status"] not in ("optimal", "feasible"):
        fail(f"status {pl['status']}")
    if brute:
        best = min(cost(dict(zip(names, perm))) for perm in itertools.permutations(range(cores), len(names)))
        if pl["status"] != "optimal" or pl["cost"] != best:
            fail(f"brute force finds {best}; dflc reports {pl['cost']} ({pl['status']})")
        print(f"brute force over {cores} cores and {len(names)} tiles: optimum {best}")
    if "--partitions" in opts:
        want = [p.split(",") for p in opts["--partitions"].split(";")]
        got = [p["layers"] for p in j["partitions"]]
        if want != got:
            fail(f"partitions {got}, expected {want}")
    by_layer = {p["crossbar_layer"]: p for p in j["partitions"] if p["crossbar_layer"]}
    for key, field in (("--tiles", "tiles_grid"), ("--mvms", "mvms_per_image")):
        for item in opts.get(key, "").split(",") if key in opts else []:
            layer, value = item.split("=")
            want = [int(v) for v in value.split("x")] if key == "--tiles" else int(value)
            if by_layer[layer][field] != want:
                fail(f"{layer}: {field} {by_layer[layer][field]}, expected {want}")
    if "--edges" in opts:
        want = {}
        for item in opts["--edges"].split(";"):
            ends, words = item.split("=")
            want[tuple(ends.split(">"))] = int(words)
        got = {}
        for f, t, w in edges:
            got[(f, t)] = got.get((f, t), 0) + w
        if want != got:
            fail(f"edges {got}, expected {want}")
    print(f"ok: {len(names)} tiles on {cores} cores, {len(edges)} edges, traffic {traffic}, {pl['status']}")


main()
