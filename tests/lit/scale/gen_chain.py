#!/usr/bin/env python3
"""Writes a chain network of N layers to stdout (issue 20: show and check stay
near-linear in the number of layers).

  gen_chain.py N [--schedule HW]

The network `chain` has one input [C=8, X=4, Y=4] and N 3x3 convs (K=8,
pad 1, so the shape never changes), each reading the one before; every second
one has a fused relu, which the next reads by its alias. With --schedule HW it
imports stdlib/hw/HW.dfl and adds `schedule for chain on HW` with an empty
`layer lI { }` block per layer (every layer is looked up by name; no
directives: an incomplete schedule, W0830).
"""
import sys


def main():
    n = int(sys.argv[1])
    out = []
    if len(sys.argv) > 3 and sys.argv[2] == "--schedule":
        out.append('import "stdlib/hw/%s.dfl";' % sys.argv[3])
    out += ["network chain {", "  batch N = 1;", "  input x [C=8, X=4, Y=4];"]
    prev = "x"
    for i in range(n):
        name = "l%d" % i
        out.append("  %s = conv(%s, K=8, R=3, pad=1);" % (name, prev))
        prev = name
        if i % 2:   # a fused activation: the next layer reads its alias
            out.append("  r%d = relu(%s);" % (i, name))
            prev = "r%d" % i
    out.append("}")
    if len(sys.argv) > 3 and sys.argv[2] == "--schedule":
        out.append("schedule for chain on %s {" % sys.argv[3])
        out += ["  layer l%d { }" % i for i in range(n)]
        out.append("}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
