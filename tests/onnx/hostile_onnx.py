#!/usr/bin/env python3
"""Usage: hostile_onnx.py DFLC MODELS_DIR WORK_DIR

Feeds `dflc import` broken ONNX files made from the models in MODELS_DIR
(make_models.py's): truncations at many lengths, bit flips and byte
overwrites at seeded random places, random bytes, an empty file, a text
file, a directory named .onnx. Each must end in exit 0 (a mutation can leave
a readable model) or exit 1 with a located `MODEL.onnx: error:` diagnostic
and no output file; never a crash, a hang, or an internal compiler error."""
import os
import random
import subprocess
import sys

dflc, models, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = random.Random(17)
cases = []


def case(name, data):
    path = os.path.join(work, name + ".onnx")
    with open(path, "wb") as f:
        f.write(data)
    cases.append(path)


sources = {m: open(os.path.join(models, m + ".onnx"), "rb").read()
           for m in ("conv_asym", "eltwise", "pools", "gemm", "bert_base")}
for m, data in sources.items():
    for i in range(12):   # truncations, from 1 byte to all but the last
        case(f"{m}_cut{i}", data[:max(1, len(data) * i // 12 - 1)])
    for i in range(16):   # bit flips
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        case(f"{m}_flip{i}", bytes(b))
    for i in range(8):    # overwritten runs: lengths and tags become anything
        b = bytearray(data)
        at = rng.randrange(len(b))
        for k in range(at, min(len(b), at + rng.randint(1, 16))):
            b[k] = rng.choice((0x00, 0xff, 0x7f, 0x80, rng.randrange(256)))
        case(f"{m}_over{i}", bytes(b))
for i in range(8):
    case(f"random{i}", bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096))))
case("empty", b"")
case("text", b"network n { input x [C=1]; }\n")
os.makedirs(os.path.join(work, "dir.onnx"), exist_ok=True)
cases.append(os.path.join(work, "dir.onnx"))

bad = 0
outcomes = {0: 0, 1: 0}
for path in cases:
    out = path + ".dfl"
    if os.path.exists(out):
        os.remove(out)
    try:
        p = subprocess.run([dflc, "import", path, "-o", out], capture_output=True, text=True, errors="replace", timeout=20)
    except subprocess.TimeoutExpired:
        print(f"{path}: hang")
        bad += 1
        continue
    ok = p.returncode in (0, 1) and "internal compiler error" not in p.stderr
    if p.returncode == 1:
        ok &= path in p.stderr.splitlines()[0] and "error:" in p.stderr and not os.path.exists(out)
    if p.returncode == 0:
        ok &= os.path.exists(out)
    if not ok:
        print(f"{path}: exit {p.returncode}\n{p.stderr}")
        bad += 1
    else:
        outcomes[p.returncode] += 1
print(f"{len(cases)} hostile files: {outcomes[1]} refused, {outcomes[0]} still readable, {bad} bad")
sys.exit(1 if bad else 0)
