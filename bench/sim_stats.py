#!/usr/bin/env python3
"""Count statistics over sim.json files: layers whose counts the analysis
claims exact (and how many equal the kernel's), the others, and the range of
analysis/kernel over the counts that differ.

  sim_stats.py SIM.json...
"""
import collections
import json
import sys

layers = exact = exact_equal = approx = approx_equal = 0
ratios = []
where = collections.Counter()
for path in sys.argv[1:]:
    for l in json.load(open(path))['layers']:
        if 'accesses' not in l:
            continue
        layers += 1
        if l['counts_exact_claimed']:
            exact += 1
            exact_equal += l['counts'] == 'equal'
            continue
        approx += 1
        approx_equal += l['counts'] == 'equal'
        for a in l['accesses']:
            if not a['equal'] and a['kernel'] > 0:
                ratios.append(a['analysis'] / a['kernel'])
                where[(a['level'], a['tensor'], a['kind'])] += 1
print(f'{layers} layers simulated: {exact} with counts claimed exact ({exact_equal} equal), '
      f'{approx} approximated ({approx_equal} equal anyway)')
if ratios:
    print(f'approximated counts that differ: analysis/kernel {min(ratios):.3f} to {max(ratios):.3f}, '
          f'median {sorted(ratios)[len(ratios) // 2]:.3f}; most often:',
          ', '.join(f'{lv} {t} {k} ({n})' for (lv, t, k), n in where.most_common(5)))
