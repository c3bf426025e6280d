"""Reads `dflc --list-diagnostics` on stdin; fails unless every E08xx/W08xx
code has a test file named after it in the directory given (CODE-*.dfl) that
pins it as `[CODE]`."""
import os
import re
import sys

directory = sys.argv[1]
codes = [line.split("\t")[0] for line in sys.stdin if re.match(r"[EW]08\d\d\t", line)]
missing = []
for code in codes:
    files = [f for f in os.listdir(directory) if f.startswith(code + "-")]
    if not any("[" + code + "]" in open(os.path.join(directory, f)).read() for f in files):
        missing.append(code)
print("%d codes, %d without a test%s" % (len(codes), len(missing), (": " + " ".join(missing)) if missing else ""))
sys.exit(1 if missing else 0)
