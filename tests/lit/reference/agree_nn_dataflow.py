#!/usr/bin/env python3
"""Check `dflc check --format json` on a schedule of tests/reference/nn_dataflow/
against the reference's own numbers for the same scheme (REF.json, produced by
nn_dataflow; tests/reference/nn_dataflow/README.md).

Usage: dflc check --format json SCHED.dfl | agree_nn_dataflow.py REF.json [--except T] [--ifm-hops H]

--except T leaves out the DRAM count of tensor T (a known difference; the test
says which). --ifm-hops H puts H word-hops in place of the reference's ifm
memory hops (a known difference, derived by hand in the test).

Only what dflc and the reference count the same way is checked, exactly: the
DRAM accesses per tensor, the work (MACs; a pool's comparisons), the compute
cycles (the reference's proc_time: one PE's pass times the loop count) and the
NoC hops (the reference's memory and node hops, all tensors). The
remaining differences are listed, with their causes, in that README; a cost
model change that closes one should add it here.
"""
import json
import sys


def main():
    ref = json.load(open(sys.argv[1]))
    args = sys.argv[2:]
    skip = {args[args.index('--except') + 1]} if '--except' in args else set()
    hops = {t: ref['noc_hops']['mem'][t] + ref['noc_hops']['node'][t] for t in ('ifm', 'wgt', 'ofm')}
    if '--ifm-hops' in args:
        hops['ifm'] = float(args[args.index('--ifm-hops') + 1])
    rep = json.load(sys.stdin)
    sched = rep['schedules'][0]
    assert sched['valid'] and sched['complete'], 'schedule not valid and complete'
    lay = next(l for l in sched['layers'] if l['name'] == ref['layer'])
    dram = next(lv for lv in lay['levels'] if lv['level'] == 'DRAM')
    bad = []
    for t in ('ifm', 'wgt', 'ofm'):
        if t in skip:
            continue
        acc = dram['accesses'].get(t, {'reads': 0, 'writes': 0, 'same_level': 0})
        got = acc['reads'] + acc['writes'] + acc['same_level']
        want = ref['access']['DRAM'][t]
        if got != want:
            bad.append('DRAM {}: dflc {} reference {}'.format(t, got, want))
    if lay['work'] != ref['ops']:
        bad.append('work: dflc {} reference {}'.format(lay['work'], ref['ops']))
    if lay['compute_cycles'] != ref['time']['proc_time']:
        bad.append('compute cycles: dflc {} reference {}'.format(
            lay['compute_cycles'], ref['time']['proc_time']))
    if lay['noc_hops'] != sum(hops.values()):
        bad.append('NoC hops: dflc {} reference {}'.format(lay['noc_hops'], sum(hops.values())))
    if bad:
        print('\n'.join(bad))
        sys.exit(1)
    print('agree: {}'.format(ref['layer']))


if __name__ == '__main__':
    main()
