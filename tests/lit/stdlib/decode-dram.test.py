# Reads a report.json of gpt2_small_decode (decode-dram.test) and prints what must hold.
import json, sys

r = json.load(open(sys.argv[1]))
words_per_cycle = 51.2 / 2
cache = 768 * 1024
attention = [l for l in r["layers"] if l["name"].endswith(("_scores", "_context"))]
dram = {l["name"]: l["levels"][-1] for l in r["layers"]}
bound = sum(l["bound_by"] == "DRAM" for l in attention)
# At most once: the cache plus the new token's key or value (768), the query
# or probabilities (768 or 12·1,025) and the result (12·1,025 or 768).
at_most = cache + 768 + 768 + 12 * 1025
read = sum(cache <= dram[l["name"]]["traffic_words"] <= at_most and l["latency_cycles"] >= cache / words_per_cycle
           for l in attention)
print(f"{len(attention)} attention matmuls: DRAM-bound {bound}, cache read exactly once {read}")
by_name = {l["name"]: l for l in r["layers"]}
ok = all(s["latency_cycles"] >= sum(dram[n]["cycles"] for n in s["layers"]) - 1e-6
         for s in r["segments"] if s["pipelined"])
print("pipelined segments no shorter than their DRAM channel:", "yes" if ok else "no")
compulsory = (12 * (4 * 768 * 768 + 2 * 768 * 3072) + 24 * cache) / words_per_cycle
assert compulsory == 4055040, compulsory
print("run no faster than its compulsory DRAM traffic:",
      "yes" if r["totals"]["latency_cycles"] >= compulsory else f"no: {r['totals']['latency_cycles']}")
