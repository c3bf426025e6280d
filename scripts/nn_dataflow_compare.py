#!/usr/bin/env python3
"""Compare `dflc check --format json` for one layer with a reference record of
tests/reference/nn_dataflow/ (written by scripts/nn_dataflow_reference.py).

  dflc check --format json SCHED.dfl | nn_dataflow_compare.py REF.json [--layer NAME]

Prints, per level and tensor, the reference's access count and dflc's (reads +
writes + same-level transfers), then hops, cycles and energy by component, with
dflc/reference ratios. Levels: the reference's DRAM/GBUF/REGF are dflc's levels of
the same name; the reference's ITCN (array bus) has no dflc level.
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
    dc = {'op': lay['energy_pj']['mac'], 'noc': lay['energy_pj']['noc'],
          'dram': levels['DRAM']['energy_pj'], 'gbuf': levels['GBUF']['energy_pj'],
          'regf': levels['REGF']['energy_pj'], 'itcn': lay['energy_pj'].get('bus', 0.0),
          'static': lay['energy_pj'].get('static', 0.0),
          'total': lay['energy_pj']['total']}
    rc2 = {'op': rc['op'], 'noc': rc['noc'], 'dram': rc['dram'],
           'gbuf': rc['gbuf_local'] + rc['gbuf_remote'], 'regf': rc['regf'],
           'itcn': rc['itcn'], 'static': rc['static'], 'total': rc['total']}
    print('{:8} {:>16} {:>16} {:>7}'.format('energy', 'reference [pJ]', 'dflc [pJ]', 'ratio'))
    for k in ('op', 'dram', 'gbuf', 'itcn', 'regf', 'noc', 'static', 'total'):
        print('{:8} {:16.0f} {:16.0f} {}'.format(k, rc2[k], dc[k], ratio(dc[k], rc2[k])))


if __name__ == '__main__':
    main()
