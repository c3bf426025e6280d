#!/usr/bin/env python3
"""normalization_share.py DFLC STDLIB OUT: per generated stdlib network, the energy and latency of its
schedule on eyeriss_multinode (OUT/NET-on-eyeriss_multinode/report.json, written by
`dflc stdlib/nets/NET.dfl stdlib/hw/eyeriss_multinode.dfl -o OUT/NET-on-eyeriss_multinode`) and the
share its softmax, layernorm and gelu layers take of both (docs/benchmarks.md)."""
import json, subprocess, sys
dflc, stdlib, out = sys.argv[1:4]
nets = ["bert_base", "bert_base_256", "bert_base_384", "bert_base_512", "vit_b16", "densenet121"]
print(f"{'network':14} {'layers':>6} {'energy [mJ]':>12} {'latency [cycles]':>17} {'softmax+layernorm+gelu: energy':>31} {'latency':>8}")
for n in nets:
    j = json.loads(subprocess.run([dflc, "show", "--json", f"{stdlib}/nets/{n}.dfl"], capture_output=True, text=True).stdout)
    kind = {l["name"]: l["type"] for l in j["networks"][0]["layers"]}
    r = json.load(open(f"{out}/{n}-on-eyeriss_multinode/report.json"))
    E = r["totals"]["energy_pj"]
    new = [l for l in r["layers"] if kind[l["name"]] in ("softmax", "layernorm", "gelu")]
    e = sum(l["energy_pj"]["total"] for l in new)
    lat = sum(l["latency_cycles"] for l in new) / sum(l["latency_cycles"] for l in r["layers"])
    print(f"{n:14} {len(r['layers']):>6} {E / 1e9:>12.3f} {r['totals']['latency_cycles']:>17.0f} {100 * e / E:>30.1f}% {100 * lat:>7.1f}%")
