#!/usr/bin/env python3
"""Usage: import_chain.py DIR N [cycle] -- writes DIR/f0.dfl .. DIR/f{N-1}.dfl,
each f{i} importing f{i+1}; the last declares network `deepest`, or with
`cycle` imports f0 again. `dflc show DIR/f0.dfl` then loads an import chain
N files deep (docs/cli.md, "Limits")."""
import os
import sys

d, n = sys.argv[1], int(sys.argv[2])
cycle = len(sys.argv) > 3 and sys.argv[3] == "cycle"
os.makedirs(d, exist_ok=True)
for i in range(n):
    with open(os.path.join(d, f"f{i}.dfl"), "w") as f:
        if i + 1 < n:
            f.write(f'import "f{i + 1}.dfl";\n')
        elif cycle:
            f.write('import "f0.dfl";\n')
        else:
            f.write("network deepest { input x [C=1, X=2, Y=2]; y = relu(x); }\n")
