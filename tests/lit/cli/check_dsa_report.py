#!/usr/bin/env python3
"""Usage: check_dsa_report.py REPORT_JSON LAYERS

Checks a GraphTurbo report.json (docs/graphturbo.md) independently of dflc:
the sub-graphs partition the network's LAYERS layers; each sub-graph has as
many instances as its best split's factor (1 without a split); the order runs
every instance once, after its producers; every binding divides its output
box and uses at most the cluster's cores; the last sub-graph's output goes to
DDR; the TVM-like baseline puts every layer's output in DDR and nothing in
GB or LB; the speedups are the ratios of the latencies."""
import json
import math
import sys


def fail(msg):
    print("check_dsa_report: " + msg)
    sys.exit(1)


r = json.load(open(sys.argv[1]))
layers = int(sys.argv[2])
gt = r["graphturbo"]
seen = [l for sg in gt["sub_graphs"] for l in sg["layers"]]
if len(seen) != layers or len(set(seen)) != layers:
    fail("sub-graphs hold %d layers (%d distinct), the network %d" % (len(seen), len(set(seen)), layers))
count = {}
for inst in gt["instances"]:
    count[inst["sub_graph"]] = count.get(inst["sub_graph"], 0) + 1
for s, sg in enumerate(gt["sub_graphs"]):
    want = sg["best_split"]["factor"] if sg["best_split"] else 1
    if count.get(s, 0) != want:
        fail("sub-graph %d has %d instances, its split %d" % (s, count.get(s, 0), want))
done = set()
for inst in gt["instances"]:
    for p in inst["producers"]:
        if (p["sub_graph"], p["instance"]) not in done:
            fail("instance %s runs before its producer %s" % ((inst["sub_graph"], inst["instance"]), p))
    key = (inst["sub_graph"], inst["instance"])
    if key in done:
        fail("instance %s runs twice" % (key,))
    done.add(key)
    lo, hi = inst["output_box"]
    for f, a, b in zip(inst["binding"], lo, hi):
        if (b - a) % f:
            fail("binding %s does not divide box %s" % (inst["binding"], inst["output_box"]))
    if math.prod(inst["binding"]) > r["cores_per_cluster"]:
        fail("binding %s uses more than %d cores" % (inst["binding"], r["cores_per_cluster"]))
last = len(gt["sub_graphs"]) - 1
if any(i["scope"] != "DDR" for i in gt["instances"] if i["sub_graph"] == last):
    fail("the network's output is not in DDR")
tvm = r["tvm_like"]["cost"]["tensors"]
if tvm != {"DDR": layers, "GB": 0, "LB": 0}:
    fail("TVM-like tensors %s, expected every one of %d layers in DDR" % (tvm, layers))
lat = {k: r[k]["cost"]["latency_cycles"] for k in ("graphturbo", "astitch_like", "tvm_like")}
for k, name in (("tvm_like", "over_tvm_like"), ("astitch_like", "over_astitch_like")):
    if abs(r["speedup"][name] - lat[k] / lat["graphturbo"]) > 1e-9 * r["speedup"][name]:
        fail("speedup %s is %s, the latencies give %s" % (name, r["speedup"][name], lat[k] / lat["graphturbo"]))
print("ok")
