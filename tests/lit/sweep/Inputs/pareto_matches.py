#!/usr/bin/env python3
"""pareto_matches.py OUT: OUT/pareto.svg draws OUT/sweep.json: one circle per
point with a schedule, the filled ones (class "front") exactly the distinct
points sweep.json marks "pareto", each at the point's energy and latency."""
import json
import sys
import xml.etree.ElementTree as ET

out = sys.argv[1]
rows = [r for r in json.load(open(f"{out}/sweep.json"))["rows"] if "energy_pj" in r]
circles = list(ET.parse(f"{out}/pareto.svg").getroot().iter("{http://www.w3.org/2000/svg}circle"))
drawn = lambda cls: sorted((round(float(c.get("data-pj")), 3), round(float(c.get("data-cycles")), 3))
                           for c in circles if c.get("class") == cls)
key = lambda r: (round(r["energy_pj"], 3), round(r["latency_cycles"], 3))
front = sorted({(r.get("network_name", r["network"]), r["batch"], key(r)) for r in rows if r["pareto"]})
errors = []
if drawn("front") != sorted(k for _, _, k in front):
    errors.append(f"front drawn {drawn('front')} != sweep.json's {front}")
if drawn("evaluated") != sorted(key(r) for r in rows if not r["pareto"]):
    errors.append("the other points drawn differ from sweep.json's")
print(f"pareto.svg: {len(drawn('front'))} front and {len(drawn('evaluated'))} other points match sweep.json")
sys.exit("\n".join(errors) if errors else 0)
