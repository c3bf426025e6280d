#!/usr/bin/env python3
"""Usage: odd_names.py DFLC NET HW DIR -- copies NET and HW into DIR under file
names that need every escape of a DFL string (docs/language.md, "Lexical
structure"), compiles them into DIR/out, and prints the written schedule's
import lines, then `check: EXIT` for `dflc check DIR/out/schedule.dfl`."""
import os
import shutil
import subprocess
import sys

dflc, net, hw, d = sys.argv[1:5]
os.makedirs(d, exist_ok=True)
# A quote, a backslash, a line break, a carriage return, a tab, a control
# character, a byte that is not UTF-8, and a UTF-8 letter kept as it is.
odd_net = os.path.join(os.fsencode(d), b'net "q" back\\slash\nline\rcr\ttab\x01ctl\xffbyte \xc3\xa9.dfl')
odd_hw = os.path.join(os.fsencode(d), b"hw 'single' \\\\two.dfl")
shutil.copyfile(net, odd_net)
shutil.copyfile(hw, odd_hw)
out = os.path.join(d, "out")
subprocess.run([os.fsencode(dflc), odd_net, odd_hw, b"-o", os.fsencode(out)], check=True,
               stdout=subprocess.DEVNULL)
with open(os.path.join(out, "schedule.dfl"), "rb") as f:
    for line in f:
        if line.startswith(b"import "):
            sys.stdout.buffer.write(line)
sys.stdout.flush()
check = subprocess.run([dflc, "check", os.path.join(out, "schedule.dfl")], stdout=subprocess.DEVNULL)
print(f"check: {check.returncode}")
