"""For verdict-pieces.test: OUT's runs (OUT-sim/NNNN/sim.json) against its
report.json: each layer in exactly one run, every one equal; or, with
--plant K --drop J, mark run K's first layer as differing and delete run J."""
import glob
import json
import os
import shutil
import sys

out = sys.argv[1]
runs = sorted(glob.glob(os.path.join(out + "-sim", "[0-9]" * 4)))
if "--plant" in sys.argv:
    k, j = sys.argv[sys.argv.index("--plant") + 1], sys.argv[sys.argv.index("--drop") + 1]
    path = os.path.join(out + "-sim", k, "sim.json")
    sim = json.load(open(path))
    sim["layers"][0]["output"] = "planted"
    json.dump(sim, open(path, "w"))
    shutil.rmtree(os.path.join(out + "-sim", j))
    sys.exit(0)
layers = [l["name"] for l in json.load(open(os.path.join(out, "report.json")))["layers"]]
seen = [l for r in runs for l in json.load(open(os.path.join(r, "sim.json")))["layers"]]
names = [l["layer"] for l in seen]
assert sorted(names) == sorted(layers), (names, layers)
assert all(l["output"] == "equal" and l["counts"] == "equal" for l in seen), seen
print("runs: %d; every layer once, equal" % len(runs))
