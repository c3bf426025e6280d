#!/usr/bin/env python3
"""Usage: check_dsa_roundtrip.py REPORT_JSON SCHEDULE_DFL CHECK_JSON

The round trip of a GraphTurbo schedule (docs/graphturbo.md, "The schedule in
DFL"), checked independently of dflc:

1. SCHEDULE_DFL (what `dflc NET DSA_HW -o OUT` wrote) says what REPORT_JSON
   (the compile's report) describes: its samples per iteration, every
   sub-graph's name and layers in order and its number of instances (the split's F,
   1 without one), the order (bfs or dfs), and every instance's binding, read
   from the `instance SG[*]` and `instance SG[I]` items with the specific one
   first.
2. CHECK_JSON (`dflc check --format json` of SCHEDULE_DFL) gives the same
   numbers as the compile: every cost of the three approaches (latency,
   throughput, tensors per scope, traffic, spills; all but the wall time), the
   ops and peaks, and every instance (output box, binding, scope after
   spilling, producers and moves).
Prints "ok NETWORK"; otherwise what differs, and exits 1."""
import json
import re
import sys

DIMS = ["N", "C", "X", "Y"]


def fail(msg):
    print("check_dsa_roundtrip: " + msg)
    sys.exit(1)


report = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
checked = json.load(open(sys.argv[3]))
if checked["diagnostics"]:
    fail("the check reported %s" % [d["message"] for d in checked["diagnostics"]])
if len(checked["dsa_schedules"]) != 1:
    fail("the check rebuilt %d DSA schedules, not one" % len(checked["dsa_schedules"]))
again = checked["dsa_schedules"][0]
gt = report["graphturbo"]

# 1. The DFL text against the report.
text = re.sub(r"//[^\n]*", "", text)
m = re.search(r"batch_per_iteration\s*=\s*(\d+)\s*;", text)
if not m or int(m.group(1)) != gt["cost"]["batch_per_iteration"]:
    fail("batch_per_iteration %s, the report %d" % (m and m.group(1), gt["cost"]["batch_per_iteration"]))
subgraphs = []   # (name, layers, factor)
for m in re.finditer(r"subgraph\s+(\w+)\s*=\s*([\w\s,]+?)\s*(;|\{([^}]*)\})", text):
    layers = [l.strip() for l in m.group(2).split(",")]
    factor = 1
    if m.group(4):
        s = re.search(r"split\s+(\w+)\s+by\s+(\d+)\s*;", m.group(4))
        factor = int(s.group(2)) if s else 1
    subgraphs.append((m.group(1), layers, factor))
if [s[:2] for s in subgraphs] != [(sg["name"], sg["layers"]) for sg in gt["sub_graphs"]]:
    fail("the sub-graphs written are not the report's")
count = {}
for inst in gt["instances"]:
    count[inst["sub_graph"]] = count.get(inst["sub_graph"], 0) + 1
for k, (name, layers, factor) in enumerate(subgraphs):
    if factor != count.get(k, 0):
        fail("%s is split into %d instances, the report has %d" % (name, factor, count.get(k, 0)))
m = re.search(r"order\s+(\w+)\s*;", text)
if not m or m.group(1) != gt["order"]:
    fail("order %s, the report's %s" % (m and m.group(1), gt["order"]))
names = {name: k for k, (name, _, _) in enumerate(subgraphs)}
bind = {}
for m in re.finditer(r"instance\s+(\w+)\[(\*|\d+)\]\s*\{([^}]*)\}", text):
    b = re.search(r"bind\s+([^;]*);", m.group(3))
    if b:
        v = [1, 1, 1, 1]
        for part in b.group(1).split(","):
            dim, cores = part.split()
            v[DIMS.index(dim)] = int(cores)
        bind[(names[m.group(1)], m.group(2))] = v
for inst in gt["instances"]:
    key = (inst["sub_graph"], str(inst["instance"]))
    written = bind.get(key, bind.get((inst["sub_graph"], "*")))
    if written != inst["binding"]:
        fail("sg%d[%d] is bound %s in the schedule, %s in the report" % (key[0], inst["instance"], written, inst["binding"]))

# 2. The check's numbers against the compile's.
for approach in ["graphturbo", "astitch_like", "tvm_like"]:
    a, b = report[approach]["cost"], again[approach]["cost"]
    for key in a:
        if key != "scheduling_seconds" and a[key] != b[key]:
            fail("%s %s: compile %s, check %s" % (approach, key, a[key], b[key]))
for key in ["order", "peak_lb_bytes_bfs", "peak_lb_bytes_dfs", "concat_ops", "copy_ops", "redistribution_ops",
            "instances"]:
    if gt[key] != again["graphturbo"][key]:
        fail("graphturbo %s differs between the compile and the check" % key)
if report["speedup"] != again["speedup"]:
    fail("speedups differ: %s, %s" % (report["speedup"], again["speedup"]))
print("ok " + report["network"])
