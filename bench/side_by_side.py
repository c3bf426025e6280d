#!/usr/bin/env python3
"""The side-by-side benchmark (issue 18, docs/benchmarks.md): dflc's energy,
latency and solve time on MLP, AlexNet and VGG-16 at batch 64 on the
multi-node template, layer by layer (`--no-pipelining`) and with inter-layer
pipelining, beside KAPLA's and nn_dataflow's figures for the same runs, and
the ratios dflc/KAPLA energy and KAPLA/dflc solve time.

Usage: side_by_side.py [--dflc DFLC] [--reference REF.json] [--batch N]
                       [--nets mlp,alexnet,vgg16] [--hw HW.dfl]
                       [--dflc-results RUNS.json] [--save-dflc RUNS.json]
                       [--kapla KAPLA_DIR [--seeds 1,2,3] [--save-kapla RUNS.json]]

With --kapla, KAPLA itself runs in the same session, each of its runs right
after dflc's on the same network and mode (scripts/nn_dataflow_reference.py
under Debian's /usr/bin/python3, one process per run): per layer once, inter
layer (spatial and temporal segments, option_inference.json as it is) once per
PYTHONHASHSEED in --seeds, since its inter-layer result varies with the hash
seed. The table's KAPLA columns are then its least energy over the seeds and
the median of its solve times; every run, with every energy component and the
whole process's CPU seconds, is listed under the table (and written by
--save-kapla). --reference is not read then.

The reference file (default bench/reference/kapla.json) is
  {"provenance": {...}, "runs": [{"net": "mlp"|"alexnet"|"vgg16",
   "mode": "per-layer"|"inter-layer", "tool": "kapla"|"nn_dataflow",
   "batch": 64, "energy_pj": N, "latency_cycles": N, "solve_seconds": N,
   "components_pj": {...}}]}
A run it lacks (or a figure a run lacks) prints "n/a", and so does a ratio
that needs it. A missing reference file is all "n/a", with a note.
--dflc-results reads dflc's runs in the same schema (tool "dflc") instead of
running dflc; --save-dflc writes the runs measured.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = [("per-layer", ["--no-pipelining"]), ("inter-layer", [])]
NA = "n/a"


def timed(cmd, env=None, timeout=None):
    """Run cmd; its exit code, stdout, stderr and the CPU seconds (user +
    system) of the whole process and its children."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s", None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.returncode, p.stdout, p.stderr, cpu


def run_dflc(dflc, net, hw, batch, flags):
    """One `dflc compile`: energy, latency and every energy component from
    report.json, the solve stage's wall time from --time-passes."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [dflc, os.path.join(ROOT, "stdlib", "nets", net + ".dfl"), hw, "-o", out,
               "--batch", str(batch), "--time-passes"] + flags
        code, _, err, cpu = timed(cmd)
        if code != 0:
            sys.exit(f"side_by_side: {' '.join(cmd)} failed (exit {code}):\n{err}")
        report = json.load(open(os.path.join(out, "report.json")))
    solve = re.search(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+solve$", err, re.M)
    totals = report["totals"]
    components = dict(totals["levels_pj"], mac=totals["mac_pj"], noc=totals["noc_pj"], bus=totals["bus_pj"],
                      static=totals["static_pj"])
    return {"energy_pj": totals["energy_pj"], "latency_cycles": totals["latency_cycles"],
            "solve_seconds": float(solve.group(1)) if solve else None, "components_pj": components,
            "cpu_seconds": cpu}


# dflc's stdlib networks under nn_dataflow's names (nn_dataflow/nns/).
NN_DATAFLOW_NAMES = {"mlp": "mlp_l", "alexnet": "alex_net", "vgg16": "vgg_net"}


def run_kapla(kapla, net, mode, batch, seed, timeout):
    """One KAPLA run in a process of its own (Debian's python3, where numpy
    and sympy are installed), its hash seed fixed: the reference driver's
    record, plus the process's CPU seconds and the seed."""
    cmd = ["/usr/bin/python3", os.path.join(ROOT, "scripts", "nn_dataflow_reference.py"), kapla, "net",
           NN_DATAFLOW_NAMES.get(net, net), "--tool", "kapla", "--mode", mode, "--batch", str(batch)]
    code, out, err, cpu = timed(cmd, env=dict(os.environ, PYTHONHASHSEED=str(seed)), timeout=timeout)
    if code != 0:
        tail = err.strip().splitlines()[-1:] or [""]
        return {"net": net, "mode": mode, "tool": "kapla", "batch": batch, "seed": seed,
                "failed": f"exit {code}: {tail[0]}"}
    return dict(json.loads(out), net=net, seed=seed, cpu_seconds=cpu)


def best_of_seeds(runs):
    """KAPLA's figure for the table: the least energy over the seeds, the
    median solve time."""
    ok = [r for r in runs if "failed" not in r]
    if not ok:
        return None
    best = dict(min(ok, key=lambda r: r["energy_pj"]))
    best["solve_seconds"] = statistics.median(r["solve_seconds"] for r in ok)
    return best


def load_runs(path, tool_filter=None):
    """(net, mode, tool) -> run, of the runs in `path` that look like runs."""
    data = json.load(open(path))
    runs = {}
    for r in data.get("runs", []):
        if not isinstance(r, dict) or not all(k in r for k in ("net", "mode", "tool")):
            continue
        if tool_filter and r["tool"] != tool_filter:
            continue
        runs[(r["net"], r["mode"], r["tool"])] = r
    return runs, data.get("provenance")


def figure(run, key):
    """A run's figure, or None if the run or the figure is missing or not a number."""
    if not run:
        return None
    v = run.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def fmt(v, scale=1.0, digits=3):
    return NA if v is None else f"{v / scale:.{digits}f}"


def print_table(a, nets, ours, reference):
    header = (f"{'net':8} {'mode':11} | {'dflc E':>9} {'lat':>9} {'solve':>8} | {'KAPLA E':>9} {'lat':>9} "
              f"{'solve':>8} | {'nn_df E':>9} {'lat':>9} {'solve':>8} | {'E dflc/':>8} {'solve':>9}")
    units = (f"{'':8} {'':11} | {'[mJ]':>9} {'[Mcyc]':>9} {'[s]':>8} | {'[mJ]':>9} {'[Mcyc]':>9} {'[s]':>8} | "
             f"{'[mJ]':>9} {'[Mcyc]':>9} {'[s]':>8} | {'KAPLA':>8} {'KAPLA/dflc':>9}")
    print(f"batch {a.batch} on {os.path.relpath(a.hw, ROOT)}")
    print(header)
    print(units)
    for n in nets:
        for m, _ in MODES:
            d = ours.get((n, m))
            k = reference.get((n, m, "kapla"))
            r = reference.get((n, m, "nn_dataflow"))
            cells = []
            for run in (d, k, r):
                cells += [fmt(figure(run, "energy_pj"), 1e9), fmt(figure(run, "latency_cycles"), 1e6),
                          fmt(figure(run, "solve_seconds"), 1, 4)]
            e_ratio = ratio(figure(d, "energy_pj"), figure(k, "energy_pj"))
            t_ratio = ratio(figure(k, "solve_seconds"), figure(d, "solve_seconds"))
            print(f"{n:8} {m:11} | {cells[0]:>9} {cells[1]:>9} {cells[2]:>8} | {cells[3]:>9} {cells[4]:>9} "
                  f"{cells[5]:>8} | {cells[6]:>9} {cells[7]:>9} {cells[8]:>8} | {fmt(e_ratio):>8} "
                  f"{fmt(t_ratio, 1, 0):>9}")


def side_by_side_live(a, nets):
    """dflc and KAPLA side by side in this session: on each network and mode,
    dflc's run, then KAPLA's (one per seed inter layer)."""
    seeds = [int(s) for s in a.seeds.split(",") if s]
    ours, reference, kapla_runs = {}, {}, []
    for n in nets:
        for m, flags in MODES:
            ours[(n, m)] = run_dflc(a.dflc, n, a.hw, a.batch, flags)
            runs = [run_kapla(a.kapla, n, m, a.batch, s, a.kapla_timeout)
                    for s in (seeds if m == "inter-layer" else seeds[:1])]
            kapla_runs += runs
            reference[(n, m, "kapla")] = best_of_seeds(runs)
            print(f"# {n} {m}: dflc {ours[(n, m)]['cpu_seconds']:.2f} s CPU, KAPLA "
                  + ", ".join(r.get("failed") or f"{r['cpu_seconds']:.2f} s CPU" for r in runs), flush=True)
    print_table(a, nets, ours, reference)
    print("\nevery run (energies in mJ; solve: the solve stage's wall time; cpu: the whole process's)")
    print(f"{'net':8} {'mode':11} {'tool':6} {'seed':>4} {'energy':>10} {'solve':>9} {'cpu':>9}  components")
    lines = [(n, m, "dflc", "", r) for (n, m), r in ours.items()] + \
            [(r["net"], r["mode"], "kapla", r["seed"], r) for r in kapla_runs]
    for n, m, tool, seed, r in lines:
        if "failed" in r:
            print(f"{n:8} {m:11} {tool:6} {seed:>4} failed: {r['failed']}")
            continue
        comps = " ".join(f"{k}={v / 1e9:.3f}" for k, v in sorted(r["components_pj"].items()))
        print(f"{n:8} {m:11} {tool:6} {seed!s:>4} {r['energy_pj'] / 1e9:>10.3f} {r['solve_seconds']:>9.3f} "
              f"{r['cpu_seconds']:>9.2f}  {comps}")
    if a.save_kapla:
        json.dump({"runs": kapla_runs + [dict(net=n, mode=m, tool="dflc", batch=a.batch, **r)
                                         for (n, m), r in ours.items()]}, open(a.save_kapla, "w"), indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dflc", default=os.path.join(ROOT, "build", "tools", "dflc"))
    ap.add_argument("--reference", default=os.path.join(ROOT, "bench", "reference", "kapla.json"))
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--nets", default="mlp,alexnet,vgg16")
    ap.add_argument("--hw", default=os.path.join(ROOT, "stdlib", "hw", "eyeriss_multinode.dfl"))
    ap.add_argument("--dflc-results")
    ap.add_argument("--save-dflc")
    ap.add_argument("--kapla", help="a checkout of tsinghua-ideal/kapla: run KAPLA in this session")
    ap.add_argument("--seeds", default="1,2,3", help="PYTHONHASHSEEDs of KAPLA's inter-layer runs")
    ap.add_argument("--kapla-timeout", type=int, default=3600)
    ap.add_argument("--save-kapla")
    a = ap.parse_args()
    nets = [n for n in a.nets.split(",") if n]

    reference, provenance = {}, None
    if a.kapla:
        return side_by_side_live(a, nets)
    if os.path.exists(a.reference):
        reference, provenance = load_runs(a.reference)
    else:
        print(f"note: no reference file {a.reference}: KAPLA and nn_dataflow figures are n/a")
    # Only runs at this batch are comparable.
    reference = {k: r for k, r in reference.items() if r.get("batch", a.batch) == a.batch}

    if a.dflc_results:
        ours = {(n, m): r for (n, m, _), r in load_runs(a.dflc_results, "dflc")[0].items()}
    else:
        ours = {(n, m): run_dflc(a.dflc, n, a.hw, a.batch, flags) for n in nets for m, flags in MODES}
    if a.save_dflc:
        runs = [dict(net=n, mode=m, tool="dflc", batch=a.batch, **r) for (n, m), r in sorted(ours.items())]
        json.dump({"provenance": {"tool": "dflc", "hw": os.path.relpath(a.hw, ROOT)}, "runs": runs},
                  open(a.save_dflc, "w"), indent=2)

    print_table(a, nets, ours, reference)
    if provenance is not None:
        print("reference: " + json.dumps(provenance, sort_keys=True))


if __name__ == "__main__":
    main()
