#!/usr/bin/env python3
"""Simulates every stdlib network at batch 1 on a template: the solver's
schedule, then, in `dflc sim`, the first layer of every kind the network has
(with each kind's first fused activation list) in its JIT-compiled kernel,
against the reference and the analysis. Exits 1 on the first failure.

  sim_stdlib.py DFLC STDLIB HW WORKDIR
"""
import json
import os
import subprocess
import sys


def main():
    dflc, stdlib, hw, work = sys.argv[1:5]
    nets = sorted(f for f in os.listdir(os.path.join(stdlib, 'nets')) if f.endswith('.dfl'))
    failed = False
    for f in nets:
        net = os.path.join(stdlib, 'nets', f)
        show = json.loads(subprocess.run([dflc, 'show', '--json', '--batch', '1', net], check=True,
                                         capture_output=True, text=True).stdout)
        seen, layers = set(), []
        for layer in show['networks'][0]['layers']:
            key = (layer['type'], len(layer['operands']), tuple(layer.get('activations', [])))
            if key not in seen:
                seen.add(key)
                layers.append(layer['name'])
        out = os.path.join(work, f[:-4])
        run = subprocess.run([dflc, net, os.path.join(stdlib, 'hw', hw), '--batch', '1', '--no-pipelining',
                              '-o', out, '--sim', '--layers', ','.join(layers)], capture_output=True, text=True)
        verdict = [l for l in run.stdout.splitlines() if 'layers simulated' in l]
        print(f[:-4], run.returncode, verdict[0] if verdict else run.stderr.strip()[-300:])
        failed = failed or run.returncode != 0
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
