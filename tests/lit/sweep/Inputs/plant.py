"""Plants something dflc did not write in a copy of a sweep's OUT.

usage: plant.py GOOD BAD KIND
Copies GOOD to BAD, then, by KIND:
  energy-text  point 0's "energy_pj" becomes "x" (the rest of its file as dflc wrote it)
  fifo-point   point 0's file becomes a FIFO
  id-number    spec.json's first id becomes the number 1
  id-path      spec.json's first id becomes a path climbing four levels to etc/passwd
  zero-spec    spec.json becomes a symlink to /dev/zero
"""
import json, os, re, shutil, sys

good, bad, kind = sys.argv[1:4]
shutil.rmtree(bad, ignore_errors=True)
shutil.copytree(good, bad)
record = json.load(open(os.path.join(bad, "spec.json")))
first = os.path.join(bad, "points", record["points"][0] + ".json")
if kind == "energy-text":
    text = open(first).read()
    open(first, "w").write(re.sub(r'"energy_pj": [^,\n]+', '"energy_pj": "x"', text))
elif kind == "fifo-point":
    os.remove(first)
    os.mkfifo(first)
elif kind in ("id-number", "id-path"):
    p = os.path.join(bad, "spec.json")
    text = open(p).read()
    open(p, "w").write(text.replace('"%s"' % record["points"][0], "1" if kind == "id-number" else '"%s"' % "/".join([".."] * 4 + ["etc", "passwd"])))
elif kind == "zero-spec":
    os.remove(os.path.join(bad, "spec.json"))
    os.symlink("/dev/zero", os.path.join(bad, "spec.json"))
else:
    sys.exit("plant.py: unknown kind " + kind)
