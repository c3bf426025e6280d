#!/usr/bin/env python3
"""Run the reference cost model -- nn_dataflow as modified by the KAPLA authors
(github tsinghua-ideal/kapla) -- and print its results as JSON.

It only drives the reference: every number comes from the reference's own search and
cost model; this script builds arguments, calls it, and copies fields out.

  nn_dataflow_reference.py KAPLA_DIR layer NET LAYER [--batch 64]
      nn_dataflow's per-layer search (nn_dataflow.tools.nn_dataflow_search's setup,
      no inter-layer pipelining) of the one layer LAYER of nn_dataflow/nns/NET.py, run
      as the only layer of a network whose input (in DRAM) is that layer's ifmap.
      Prints the chosen scheme (partition, blocking, orders) and its numbers.
  nn_dataflow_reference.py KAPLA_DIR net NET --tool kapla|nn_dataflow
                           --mode per-layer|inter-layer [--batch 64]
      Whole network; prints one run record of bench/reference/kapla.json.

Hardware: nn_dataflow/hardwares/multi_node.json; options: nn_dataflow/options/
option_inference.json with one process; per-layer also clears partition_interlayer and
hw_gbuf_save_writeback (either one makes multi-layer segments).
The modules `fastcache` and `constraint` are not in Debian: the stand-ins in
nn_dataflow_shims/ next to this script are put first on the path.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HW_FILE = 'nn_dataflow/hardwares/multi_node.json'
OPT_FILE = 'nn_dataflow/options/option_inference.json'


def setup(kapla):
    kapla = os.path.abspath(kapla)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [os.path.join(here, 'nn_dataflow_shims'), kapla]
    os.chdir(kapla)  # the reference opens its json files relative to its root
    with open(HW_FILE) as f:
        hw = json.load(f)
    with open(OPT_FILE) as f:
        opts = json.load(f)['options']
    return kapla, hw, opts


def provenance(kapla):
    commit = subprocess.run(['git', '-C', kapla, 'rev-parse', 'HEAD'],
                            capture_output=True, text=True).stdout.strip()
    return {'repo': 'tsinghua-ideal/kapla', 'commit': commit or 'unknown',
            'hardware': HW_FILE, 'options': OPT_FILE,
            'python': platform.python_version(),
            'shims': 'fastcache (functools.lru_cache), constraint (Problem: '
                     'backtracking, all solutions)'}


MODES = ('per-layer', 'inter-layer', 'temporal-only')


def mode_options(opts, mode):
    """option_inference.json for a mode. nn_dataflow's InterLayerPipeline.gen_segment
    makes multi-layer segments when partition_interlayer (spatial pipelining) OR
    hw_gbuf_save_writeback (temporal pipelining) is set, so per-layer clears both;
    temporal-only clears the first (KAPLA's spatial segments failed under Debian's sympy
    before boolean_segment_rules; the mode stays for comparison)."""
    o = dict(opts, nprocesses=1)
    if mode == 'per-layer':
        o.update(partition_interlayer=False, hw_gbuf_save_writeback=False)
    elif mode == 'temporal-only':
        o.update(partition_interlayer=False)
    return o


def search_argv(net, batch, hw, opts, interlayer):
    """nn_dataflow_search's command line for multi_node.json + option_inference.json."""
    g, r, d = hw['GBUF'], hw['REGF'], hw['DRAM']
    argv = [net, '--batch', str(batch), '--word', str(hw['word_bit']),
            '--nodes', str(g['array'][0]), str(g['array'][1]),
            '--array', str(r['array'][0]), str(r['array'][1]),
            '--regf', str(r['size']), '--gbuf', str(g['size']),
            '--bus-width', str(d['bus_width']), '--dram-bw', repr(d['bandwidth']),
            '--op-cost', repr(hw['op_cost']),
            '--hier-cost', repr(d['access_cost']), repr(g['access_cost']),
            repr(hw['ITCN']['access_cost']), repr(r['access_cost']),
            '--hop-cost', repr(g['hop_cost']),
            '--unit-idle-cost', repr(g['idle_cost']),
            '--mem-type', g['mem_type'], '-g', opts['opt_goal'],
            '-p', '1']
    # option_inference.json: no bypass; hybrid, batch and ifmap partitioning.
    bypass = [c for c, b in zip('iof', opts['sw_gbuf_bypass']) if not b]
    if bypass:
        argv += ['--disable-bypass'] + bypass
    for key, flag in (('hw_access_forwarding', '--enable-access-forwarding'),
                      ('hw_gbuf_sharing', '--enable-gbuf-sharing'),
                      ('hw_gbuf_save_writeback', '--enable-save-writeback'),
                      ('partition_hybrid', '--hybrid-partition'),
                      ('partition_batch', '--batch-partition'),
                      ('partition_ifmaps', '--ifmaps-partition')):
        if opts[key]:
            argv.append(flag)
    if interlayer:
        argv += ['--interlayer-partition',
                 '--layer-pipeline-time-overhead', repr(opts['layer_pipeline_time_ovhd']),
                 '--layer-pipeline-max-degree', repr(opts['layer_pipeline_max_degree'])]
        if not opts['layer_pipeline_opt']:
            argv.append('--disable-interlayer-opt')
    return argv


def components(nndf, cost):
    """The cost split the reference itself prints (nn_dataflow_search.stats_dict,
    kapla_solver.solve_dataflow): access cost per level, remote GBUF accesses at the
    GBUF price, NoC = node hops + memory hops, static = time x idle cost."""
    import nn_dataflow.core.mem_hier_enum as me
    acc = [0] * me.NUM
    rmt = 0
    for sr in nndf.values():
        for m in range(me.NUM):
            acc[m] += sum(sr.scheme['access'][m])
        rmt += sum(sr.scheme['remote_gbuf_access'])
    c = {'op': nndf.total_ops * cost.mac_op,
         'dram': acc[me.DRAM] * cost.mem_hier[me.DRAM],
         'gbuf': (acc[me.GBUF] + rmt) * cost.mem_hier[me.GBUF],
         'itcn': acc[me.ITCN] * cost.mem_hier[me.ITCN],
         'regf': acc[me.REGF] * cost.mem_hier[me.REGF],
         'noc': nndf.total_noc_hops * cost.noc_hop,
         'static': nndf.total_time * cost.idl_unit}
    return c


class _SysWithoutExit:
    """`sys` for nn_dataflow.core.nn_dataflow only, minus exit(): commit 3e8cb87
    ("Open debug print") left a bare `sys.exit(0)` in NNDataflow.schedule_search right
    after listing the segments, so the search never runs. Skipping that one call is the
    parent commit's behaviour; nothing else in the module is touched."""

    def __getattr__(self, name):
        return getattr(sys, name)

    @staticmethod
    def exit(*_args):
        pass


def run_nn_dataflow(net_name, batch, hw, opts, interlayer, network=None):
    from nn_dataflow.tools import nn_dataflow_search as nds
    import nn_dataflow.core.nn_dataflow as nnd_mod
    nnd_mod.sys = _SysWithoutExit()
    argv = search_argv(net_name, batch, hw, opts, interlayer)
    args = nds.argparser().parse_args(argv)
    if network is not None:  # a one-layer network that is not a module under nns/
        nds.import_network = lambda _name: network
    t0 = time.time()
    res = nds.do_scheduling(args)
    return res, time.time() - t0, argv


def one_layer_network(net_name, layer_name):
    from nn_dataflow.nns import import_network
    from nn_dataflow.core import Network, InputLayer, PoolingLayer
    layer = import_network(net_name)[layer_name]
    net = Network('{}:{}'.format(net_name, layer_name))
    net.set_input_layer(InputLayer(layer.nifm, layer.hifm, layer.wifm))
    net.add(layer_name, layer)
    # A second, trivial layer (1x1 pooling of LAYER's ofmap): a segment that covers
    # the whole network has no time multiplexing (pipeline_segment.py, `no_time_mux`),
    # so its filters would be pinned on chip and never read from DRAM. In a real
    # network a one-layer segment is never the whole network; this keeps it so.
    net.add(layer_name + '__sink', PoolingLayer(layer.nofm, (layer.hofm, layer.wofm), 1))
    return net, layer


def jsonable(x):
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if hasattr(x, '_asdict'):
        return {k: jsonable(v) for k, v in x._asdict().items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, float) and x == float('inf'):
        return 'inf'
    if isinstance(x, (int, float, str, bool)) or x is None:
        return x
    return str(x)


def partition_desc(part):
    """PartitionScheme: order of the partition enums and the 2D factor of each."""
    import nn_dataflow.core.parallel_enum as pe
    names = {pe.OUTP: 'OUTP (ofmap channels K)', pe.OFMP: 'OFMP (ofmap rows/cols)',
             pe.BATP: 'BATP (batch N)', pe.INPP: 'INPP (ifmap channels C)'}
    return {'order': [names[p] for p in part.order],
            'pdims': {names[p]: list(part.pdims[p]) for p in range(pe.NUM)},
            'note': 'pdims[p] = (h, w) split of the node array; nodes used = '
                    'product of all'}


def boolean_segment_rules():
    """pipeline_segment.py states its inter-spatial rules as sympy `Eq(x, False)`
    and `Eq(x, True)` on the boolean `fbofm` of the source group (a Python bool
    or the symbol `fbofm_init`). sympy 1.11 (Debian's) no longer takes a boolean
    side in a numeric Eq: building the Piecewise of rule (b) raises
    AttributeError ('BooleanFalse' object has no attribute 'as_coeff_Add'), so
    every segment with spatial pipelining fails. The same rule as a boolean
    equivalence (`Equivalent(x, False)`, i.e. `Not(x)`) is what the older sympy
    computed; only that one name in that one module is replaced."""
    import sympy
    import nn_dataflow.core.pipeline_segment as ps
    numeric = ps.symeq

    def symeq(a, b):
        if isinstance(a, (bool, sympy.logic.boolalg.Boolean)) and isinstance(b, bool):
            return sympy.Equivalent(a, b)
        return numeric(a, b)
    ps.symeq = symeq


def run_kapla(network, batch, hw, opts):
    """KAPLA's solver as nn_dataflow.solver.kapla_solver.solve_dataflow() runs it."""
    if opts['partition_interlayer']:
        boolean_segment_rules()
    from nn_dataflow.parser.kapla_parse_utils import parse_hardware, parse_options
    from nn_dataflow.solver.kapla_solver import KaplaSolver
    from nn_dataflow.array_mapping_templates.tensor_dim_map import \
        ArrayMappingEnum as ame
    resource, cost = parse_hardware(hw)
    options = parse_options({'options': dict(opts)})
    solver = KaplaSolver(network, ame.ROW_STATIONARY, batch, resource, cost, options)
    t0 = time.time()
    top = solver.solve_dataflow()
    secs = time.time() - t0
    return top, cost, secs


def eyeriss_mapping(layer, batch, part, scheme, dim_array):
    """The row-stationary mapping behind the scheme: re-run the reference's
    MapStrategyEyeriss on the partitioned layer and pick the replication whose
    NestedLoopDesc has the scheme's unit accesses."""
    from nn_dataflow.core.map_strategy import MapStrategyEyeriss
    p_layer, p_batch, p_occ = part.part_layer(layer, batch)
    ms = MapStrategyEyeriss(p_layer, p_batch, p_occ, dim_array)
    found = None
    for (lcnt, locc, rsz, rcnt), nld in zip(ms._gen_repl(), ms.gen_nested_loop_desc()):
        if nld.unit_access == scheme['unit_access'] and \
                nld.usize_gbuf == scheme['unit_size'][0]:
            found = {'loopcnt (C, K, N)': list(lcnt), 'loop_occupancy': list(locc),
                     'repl_size': rsz, 'repl_cnt (FIL, IFM, OFM)': list(rcnt),
                     'unit_ops': nld.unit_ops, 'unit_time': nld.unit_time,
                     'usize_gbuf (FIL, IFM, OFM)': list(nld.usize_gbuf),
                     'usize_regf (FIL, IFM, OFM)': list(nld.usize_regf),
                     'regf_reusable (FIL, IFM, OFM)': list(nld.regf_reusable)}
            break
    return {'partitioned_layer': str(p_layer), 'partitioned_batch': p_batch,
            'partition_occupancy': p_occ,
            'dim_lpeset (h=R rows, w=Xo)': list(ms.dim_lpeset),
            'dim_flpeset': list(ms.dim_flpeset), 'repl': list(ms.repl),
            'fold': list(ms.fold), 'ops_per_lpe': ms.ops_lpe,
            'utilization': ms.util, 'procpass': found}


PARTS = ('OUTP', 'OFMP', 'BATP', 'INPP')  # nn_dataflow.core.parallel_enum order


def restrict_partitions(layer, spec):
    """Let nn_dataflow's search see, for LAYER only, just the partitions its own
    gen_partition yields whose splits are SPEC ('OUTP=1x16,BATP=16x1': h x w;
    unnamed kinds 1x1); all orders stay. The rest of the search is unchanged."""
    import nn_dataflow.core.scheduling as sch
    want = {k: (1, 1) for k in PARTS}
    for item in spec.split(','):
        k, v = item.split('=')
        want[k.strip()] = tuple(int(x) for x in v.lower().split('x'))
    want = tuple(want[k] for k in PARTS)
    orig = sch.partition.gen_partition

    class _Partition:  # the module, with gen_partition filtered
        def __getattr__(self, name):
            return getattr(orig_mod, name)

        @staticmethod
        def gen_partition(lyr, *args, **kwargs):
            for part in orig(lyr, *args, **kwargs):
                if lyr != layer or tuple(tuple(pd) for pd in part.pdims) == want:
                    yield part
    orig_mod = sch.partition
    sch.partition = _Partition()


def cmd_layer(a, kapla, hw, opts):
    import nn_dataflow.core.mem_hier_enum as me
    import nn_dataflow.core.data_category_enum as de
    import nn_dataflow.core.loop_enum as le
    net, layer = one_layer_network(a.net, a.layer)
    if a.partition:
        restrict_partitions(layer, a.partition)
    if a.tool == 'nn_dataflow':
        res, secs, argv = run_nn_dataflow(a.net, a.batch, hw,
                                          mode_options(opts, 'per-layer'), False,
                                          network=net)
        sr = res['schedules'][a.layer]
        cost_unit = res['cost']
        inlayout = jsonable(res['input_layout'])
        how_tool = {'nn_dataflow_search_argv': argv}
        how_extra = {}
    else:
        top, cost, secs = run_kapla(net, a.batch, hw, mode_options(opts, 'per-layer'))
        nndf = top[3]
        sr = nndf[a.layer]
        how_extra = {'kapla_directives': jsonable(top[0][a.layer])}
        cost_unit = cost
        inlayout = jsonable(nndf.input_layout)
        how_tool = {'kapla': 'KaplaSolver(one-layer network, ROW_STATIONARY, batch, '
                             '*parse_hardware(multi_node.json), option_inference.json '
                             'with nprocesses=1, partition_interlayer=False, '
                             'hw_gbuf_save_writeback=False)'
                             '.solve_dataflow(); the scheme is its nn_dataflow '
                             'SchedulingResult'}
    s = sr.scheme
    from nn_dataflow.core import PhyDim2
    mapping = eyeriss_mapping(layer, a.batch, s['part'], s,
                              PhyDim2(*hw['REGF']['array']))
    lv = ['DRAM', 'GBUF', 'ITCN', 'REGF']
    dc = ['ifm', 'ofm', 'wgt']
    dce = [de.IFM, de.OFM, de.FIL]
    lpe = {'C (ifmap channels)': le.IFM, 'K (ofmap channels)': le.OFM, 'N (batch)': le.BAT}
    bl = ['GBUF-level (outer, DRAM->GBUF)', 'REGF-level (GBUF->REGF)',
          'inner (in REGF)']
    out = {
        'provenance': dict(provenance(kapla), how=(
            'python3 scripts/nn_dataflow_reference.py KAPLA_DIR layer {} {} --batch {} '
            '--tool {}{}'.format(a.net, a.layer, a.batch, a.tool,
                                 ' --partition ' + a.partition if a.partition else '')),
            partition_restricted_to=a.partition or 'no (the search saw every partition)',
            **how_tool,
            network='InputLayer({}, {}, {}) in DRAM, {}, then a 1x1 pooling of its '
                    'ofmap (only so that the layer is not the whole network)'.format(
                layer.nifm, layer.hifm, layer.wifm, a.layer)),
        'tool': a.tool, 'net': a.net, 'layer': a.layer, 'batch': a.batch,
        'input_layout': inlayout,
        'layer_desc': str(layer),
        'search_seconds': secs,
        'partition': partition_desc(s['part']),
        'array_mapping': mapping,
        'blocking': {
            'bl_ts': {k: [s['tvals'][b][i] for b in range(len(bl))]
                      for k, i in lpe.items()},
            'levels': bl,
            'bl_ords': [{k: o[i] for k, i in lpe.items()} for o in s['orders']],
            'note': 'bl_ts[loop][level]: blocking factor at each level, outermost '
                    'first; bl_ords[level][loop]: loop order at the two buffer '
                    'levels (0 = innermost)'},
        'unit_access': jsonable(s['unit_access']),
        'fetch': jsonable(s['fetch']),
        'access': {lv[m]: {dc[i]: s['access'][m][d] for i, d in enumerate(dce)}
                   for m in range(me.NUM)},
        'remote_gbuf_access': {dc[i]: s['remote_gbuf_access'][d]
                               for i, d in enumerate(dce)},
        'noc_hops': {'mem': {dc[i]: s['mem_nhops'][d] for i, d in enumerate(dce)},
                     'node': {dc[i]: s['node_nhops'][d] for i, d in enumerate(dce)},
                     'unit_nhops': {dc[i]: s['unit_nhops'][d] for i, d in enumerate(dce)}},
        'ops': s['ops'],
        'time': {'total': s['time'], 'proc_time': s['proc_time'],
                 'bus_time': s['bus_time'], 'dram_time': s['dram_time']},
        'num_nodes': s['num_nodes'],
        'cost_pj': {k: s[c] * 1e12 for k, c in (
            ('op', 'cost_op'), ('dram', 'cost_dram'), ('gbuf_local', 'cost_sram'),
            ('itcn', 'cost_itcn'), ('regf', 'cost_regf'),
            ('noc', 'cost_noc'), ('noc_node', 'cost_node_nhops'),
            ('noc_mem', 'cost_mem_nhops'), ('static', 'cost_static'),
            ('access_incl_remote_gbuf', 'cost_access'), ('total', 'cost'))},
        'bufshr': {k: jsonable(s[k]) for k in s if k.startswith('bufshr')
                   or k == 'accfwd_reduction'},
        'size': jsonable(s['size']),
        'unit_size': jsonable(s['unit_size']),
        'unit_cnt': jsonable(s['unit_cnt']),
        'cost_unit': jsonable(cost_unit),
    }
    out.update(how_extra)
    out['cost_pj']['gbuf_remote'] = (out['cost_pj']['access_incl_remote_gbuf']
                                     - out['cost_pj']['dram'] - out['cost_pj']['gbuf_local']
                                     - out['cost_pj']['itcn'] - out['cost_pj']['regf'])
    return jsonable(out)


def cmd_net(a, kapla, hw, opts):
    o = mode_options(opts, a.mode)
    if a.tool == 'nn_dataflow':
        res, secs, argv = run_nn_dataflow(a.net, a.batch, hw, o, o['partition_interlayer'])
        how = 'nn_dataflow.tools.nn_dataflow_search ' + ' '.join(argv)
        energy = res['total_cost']
        latency = res['total_time']
        comp = {'op': res['total_op_cost'], 'dram': res['total_dram_cost'],
                'gbuf': res['total_sram_cost'] + res['total_rmt_gbuf_cost'],
                'itcn': res['total_itcn_cost'], 'regf': res['total_regf_cost'],
                'noc': res['total_noc_cost'], 'static': res['total_static_cost']}
    else:
        from nn_dataflow.nns import import_network
        top, cost, secs = run_kapla(import_network(a.net), a.batch, hw, o)
        _df, _cost, _time, nndf, _total = top
        how = ('KaplaSolver(net, ROW_STATIONARY, batch, *parse_hardware(multi_node.json), '
               'option_inference.json with nprocesses=1, partition_interlayer={}, '
               'hw_gbuf_save_writeback={}).solve_dataflow(), as '
               'nn_dataflow.solver.kapla_solver.solve_dataflow does'.format(
                   o['partition_interlayer'], o['hw_gbuf_save_writeback']))
        energy = nndf.total_cost
        latency = nndf.total_time
        comp = components(nndf, cost)
    to_pj = 1e12
    rec = {'net': {'mlp_l': 'mlp', 'alex_net': 'alexnet', 'vgg_net': 'vgg16'}.get(a.net, a.net),
           'mode': a.mode, 'tool': a.tool, 'batch': a.batch,
           'energy_pj': energy * to_pj, 'latency_cycles': latency,
           'solve_seconds': secs,
           'components_pj': {k: v * to_pj for k, v in comp.items()},
           'how': how}
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('kapla', help='checkout of tsinghua-ideal/kapla')
    sub = ap.add_subparsers(dest='cmd', required=True)
    lp = sub.add_parser('layer')
    lp.add_argument('net')
    lp.add_argument('layer')
    lp.add_argument('--batch', type=int, default=64)
    lp.add_argument('--tool', choices=['kapla', 'nn_dataflow'], default='nn_dataflow')
    lp.add_argument('--partition', help="only this node split for the layer, e.g. "
                    "'OUTP=1x16,BATP=16x1' (h x w per kind; orders still searched)")
    np_ = sub.add_parser('net')
    np_.add_argument('net')
    np_.add_argument('--tool', choices=['kapla', 'nn_dataflow'], required=True)
    np_.add_argument('--mode', choices=MODES, required=True)
    np_.add_argument('--batch', type=int, default=64)
    a = ap.parse_args()
    kapla, hw, opts = setup(a.kapla)
    # The reference prints progress on stdout: send it to stderr, keep stdout for JSON.
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        out = (cmd_layer if a.cmd == 'layer' else cmd_net)(a, kapla, hw, opts)
    finally:
        sys.stdout = real_stdout
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == '__main__':
    main()
