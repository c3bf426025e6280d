#!/usr/bin/env python3
"""Compare `dflc check --format json` for one layer with a reference record of
tests/reference/nn_dataflow/ (written by scripts/nn_dataflow_reference.py).

  dflc check --format json SCHED.dfl | nn_dataflow_compare.py REF.json [--layer NAME] [--within F]

Prints, per level and tensor, the reference's access count and dflc's (reads +
writes + same-level transfers), then hops, cycles and energy by component, with
dflc/reference ratios. Levels: the reference's DRAM/GBUF/REGF are dflc's levels of
the same name; the reference's ITCN (the array bus, which carries words between
the GBUF and each PE and partial sums between PEs) is dflc's bus energy plus its
REGF same-level transfers (`neighbor_energy_pj`), which leave the REGF column.

--within F: exit 1 unless every energy component, the total and the latency are
within a fraction F of the reference's (0.01: 1 %); prints which are not.
--except C leaves component C (e.g. noc) out of that check: a known difference
(docs/directives.md §12), still printed with its ratio.
"""
import argparse
import json
import sys


def ratio(d, r):
    if r == 0:
        return '   -  ' if d == 0 else '  inf '
    return '{:6.3f}'.format(d / r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('ref')
    ap.add_argument('--layer')
    ap.add_argument('--within', type=float)
    ap.add_argument('--except', dest='skip', action='append', default=[])
    a = ap.parse_args()
    ref = json.load(open(a.ref))
    rep = json.load(sys.stdin)
    layer = a.layer or ref['layer']
    sched = rep['schedules'][0]
    lay = next(l for l in sched['layers'] if l['name'] == layer)
    levels = {lv['level']: lv for lv in lay['levels']}
    print('{:6} {:4} {:>16} {:>16} {:>7}   dflc reads/writes/same-level'.format(
        'level', 'data', 'reference', 'dflc', 'ratio'))
    for lvname in ('DRAM', 'GBUF', 'ITCN', 'REGF'):
        for t in ('ifm', 'ofm', 'wgt'):
            r = ref['access'][lvname][t]
            if lvname in levels:
                acc = levels[lvname]['accesses'].get(t, {'reads': 0, 'writes': 0,
                                                          'same_level': 0})
                d = acc['reads'] + acc['writes'] + acc['same_level']
                detail = '{}/{}/{}'.format(acc['reads'], acc['writes'], acc['same_level'])
            else:
                d, detail = 0, '(no such level)'
            print('{:6} {:4} {:16.0f} {:16.0f} {}   {}'.format(
                lvname, t, r, d, ratio(d, r), detail))
    rh = ref['noc_hops']
    rhops = sum(rh['mem'].values()) + sum(rh['node'].values())
    print('NoC hops: reference mem {:.0f} + node {:.0f} = {:.0f}; dflc {:.0f} ({})'.format(
        sum(rh['mem'].values()), sum(rh['node'].values()), rhops, lay['noc_hops'],
        ratio(lay['noc_hops'], rhops).strip()))
    print('cycles: reference {} (proc {}, bus {}, dram {}); dflc {:.0f} (compute {:.0f}, '
          'bound by {}) ({})'.format(
              ref['time']['total'], ref['time']['proc_time'], ref['time']['bus_time'],
              ref['time']['dram_time'], lay['latency_cycles'], lay['compute_cycles'],
              lay['bound_by'], ratio(lay['latency_cycles'], ref['time']['total']).strip()))
    rc = ref['cost_pj']
    pe_neighbor = levels['REGF'].get('neighbor_energy_pj', 0.0)
    dc = {'op': lay['energy_pj']['mac'], 'noc': lay['energy_pj']['noc'],
          'dram': levels['DRAM']['energy_pj'], 'gbuf': levels['GBUF']['energy_pj'],
          'regf': levels['REGF']['energy_pj'] - pe_neighbor,
          'itcn': lay['energy_pj'].get('bus', 0.0) + pe_neighbor,
          'static': lay['energy_pj'].get('static', 0.0),
          'total': lay['energy_pj']['total']}
    rc2 = {'op': rc['op'], 'noc': rc['noc'], 'dram': rc['dram'],
           'gbuf': rc['gbuf_local'] + rc['gbuf_remote'], 'regf': rc['regf'],
           'itcn': rc['itcn'], 'static': rc['static'], 'total': rc['total']}
    print('{:8} {:>16} {:>16} {:>7}'.format('energy', 'reference [pJ]', 'dflc [pJ]', 'ratio'))
    for k in ('op', 'dram', 'gbuf', 'itcn', 'regf', 'noc', 'static', 'total'):
        print('{:8} {:16.0f} {:16.0f} {}'.format(k, rc2[k], dc[k], ratio(dc[k], rc2[k])))
    if a.within is not None:
        got = dict(dc, latency=lay['latency_cycles'])
        want = dict(rc2, latency=ref['time']['total'])
        off = [k for k in got if k not in a.skip and abs(got[k] - want[k]) > a.within * abs(want[k])]
        for k in off:
            print('off by more than {:g}: {} dflc {:.0f} reference {:.0f}'.format(
                a.within, k, got[k], want[k]))
        print('{}: {}{}'.format(layer, 'not within {:g}'.format(a.within) if off else
                                'every level within {:g}'.format(a.within),
                                ''.join(' but ' + k for k in a.skip)))
        sys.exit(1 if off else 0)


if __name__ == '__main__':
    main()
