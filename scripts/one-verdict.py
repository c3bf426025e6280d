#!/usr/bin/env python3
"""One verdict over the stdlib (issue "one pipeline, one verdict").

For every stdlib network on every stdlib memory-hierarchy template, inference
and --train:
  batch 1:  `dflc NET HW -o OUT --sim` exits 0: every layer simulated equal to
            the reference with its counts (or skipped with its reason), every
            pipelined segment's LCUs run with 0 RAW/WAR violations. Past the
            simulator's work bound the run goes on layer by layer and seeds
            what it leaves out (docs/simulator.md, "Seeded operands"): a layer
            on seeded operands counts as simulated (it must still be equal),
            one past the bound alone as skipped with its reason (W1308);
  batch 64: the solver's schedule re-checks (`dflc check OUT/schedule.dfl`)
            with the same energy and latency, and its pipelined segments run
            in the pipeline simulator with 0 violations (`dflc sim
            --pipelines-only`: their dependences and LCUs without the kernels,
            whose work at batch 64 would pass E1307's bound).
The TPU-v1-like and Simba-like templates are inference chips and run
without --train (INFERENCE_CHIPS). A decode step (a network named
*_decode or *_decode_L: one token against a KV cache) is inference by
nature and runs without --train (its matmuls of
several second operands do not train, E0311; docs/language.md, "A KV cache");
so does a causal prefill (*_prefill_L: causal layers do not train yet, E0313).
Prints one line per case and a summary; --json FILE writes the details.
Runs each dflc under a per-case timeout (a case that times out is reported as
such, not as a pass). Cases run one after the other unless --jobs is given.

  scripts/one-verdict.py --dflc build/tools/dflc [--nets mlp,alexnet] [--hw eyeriss_multinode]
                         [--modes inference,train] [--batches 1,64] [--timeout 1800] [--jobs 1]
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_HIERARCHY = ["eyeriss_multinode", "eyeriss_multinode_4x4", "edge_systolic", "vta_gemm",
                    "eyeriss_pspad", "tpu_v1", "simba_6x6"]
# Inference chips (their papers say so): their 8-bit registers hold no
# gradient word, so every network's --train is refused whole (E0821, a
# backward layer's smallest tile against a 1 B register); not run.
INFERENCE_CHIPS = {"tpu_v1", "simba_6x6"}


def run(argv, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout, time.monotonic() - start


def load(path):
    with open(path) as f:
        return json.load(f)


def pipelined_segments(report):
    return [s["layers"] for s in report.get("segments", []) if s.get("pipelined")]


def pipeline_problems(pipe, result):
    """A segment with violations or one that could not run (isl's limit) is a problem; a skipped one is listed."""
    for s in pipe.get("segments", []):
        if s.get("violations") or s.get("violations_not_listed") or s.get("error"):
            result["problems"].append("segment %s: %s" % (s.get("layers"), s.get("error") or s["violations"][:1]))
        elif s.get("skipped"):
            result["skipped_segments"].append((s.get("layers"), s["skipped"]))


def first_error(err):
    lines = err.strip().splitlines()
    return next((l for l in lines if "error:" in l), lines[-1] if lines else "")


def sim_findings(sim_out, result):
    """The layers a run skipped (each with its reason) or ran on seeded
    operands, a layer that differs, and its pipelined segments' problems."""
    sim = load(os.path.join(sim_out, "sim.json"))
    for l in sim.get("layers", []):
        if l.get("skipped"):
            result["skipped_layers"].append((l["layer"], l["skipped"]))
            continue
        if l.get("output") != "equal" or l.get("counts") == "differ":
            result["problems"].append("layer %s: output %s, counts %s" % (l["layer"], l.get("output"), l.get("counts")))
        if l.get("operands") == "seeded":
            result["seeded_layers"].append(l["layer"])
    if os.path.exists(os.path.join(sim_out, "pipeline.json")):
        pipeline_problems(load(os.path.join(sim_out, "pipeline.json")), result)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def case(dflc, net, hw, train, batch, timeout, work):
    name = "%s on %s%s, batch %d" % (net, hw, " --train" if train else "", batch)
    out = os.path.join(work, "%s-%s-%s-b%d" % (net, hw, "train" if train else "inf", batch))
    base = [dflc, os.path.join(ROOT, "stdlib/nets/%s.dfl" % net), os.path.join(ROOT, "stdlib/hw/%s.dfl" % hw),
            "-o", out, "--batch", str(batch)] + (["--train"] if train else [])
    result = {"case": name, "ok": False, "seconds": 0.0, "problems": [], "skipped_layers": [], "skipped_segments": [],
              "seeded_layers": []}
    if batch == 1:
        code, _, err, secs = run(base + ["--sim"], timeout)
        result["seconds"] = secs
        if code != 0:
            result["problems"].append("compile --sim exit %s: %s" % (code, first_error(err)))
            return result
        sim_findings(out, result)
        result["ok"] = not result["problems"]
        return result
    code, _, err, secs = run(base, timeout)
    result["seconds"] = secs
    if code != 0:
        result["problems"].append("compile exit %s: %s" % (code, first_error(err)))
        return result
    report = load(os.path.join(out, "report.json"))
    code, stdout, err, secs = run([dflc, "check", "--format", "json", os.path.join(out, "schedule.dfl"), "--batch",
                                   str(batch)] + (["--train"] if train else []), timeout)
    result["seconds"] += secs
    if code != 0:
        result["problems"].append("re-check exit %s: %s" % (code, first_error(err)))
        return result
    again = json.loads(stdout)["schedules"][0]
    for key in ("energy_pj", "latency_cycles"):
        if not close(report["totals"][key], again["totals"][key]):
            result["problems"].append("re-check %s %s, the compile's %s" % (key, again["totals"][key], report["totals"][key]))
    if pipelined_segments(report):
        sim_out = out + "-pipelines"
        code, _, err, secs = run([dflc, "sim", os.path.join(out, "schedule.dfl"), "--batch", str(batch),
                                  "--pipelines-only", "-o", sim_out] + (["--train"] if train else []), timeout)
        result["seconds"] += secs
        if code != 0:
            result["problems"].append("sim --pipelines-only exit %s: %s" % (code, first_error(err)))
        else:
            pipeline_problems(load(os.path.join(sim_out, "pipeline.json")), result)
    result["ok"] = not result["problems"]
    return result


INFERENCE_ONLY = re.compile(r"_(decode|prefill)(_\d+)?$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dflc", default=os.path.join(ROOT, "build/tools/dflc"))
    ap.add_argument("--nets", default=",".join(sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "stdlib/nets")))))
    ap.add_argument("--hw", default=",".join(MEMORY_HIERARCHY))
    ap.add_argument("--modes", default="inference,train")
    ap.add_argument("--batches", default="1,64")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--work", help="output directories (default: a temporary one, removed)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="dflc-verdict-")
    cases = [(n, h, m == "train", int(b)) for n in a.nets.split(",") for h in a.hw.split(",")
             for m in a.modes.split(",") for b in a.batches.split(",")
             if not (m == "train" and (INFERENCE_ONLY.search(n) or h in INFERENCE_CHIPS))]
    start = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(case, a.dflc, n, h, t, b, a.timeout, work) for n, h, t, b in cases]
        for f in futures:
            r = f.result()
            results.append(r)
            notes = r["problems"] + (["%d layers on seeded operands" % len(r["seeded_layers"])]
                                     if r["seeded_layers"] else [])
            print("%-4s %-60s %7.1f s  %s" % ("ok" if r["ok"] else "FAIL", r["case"], r["seconds"],
                                               "; ".join(notes)), flush=True)
    failed = [r for r in results if not r["ok"]]
    print("%d of %d cases hold the verdict in %.0f s" % (len(results) - len(failed), len(results),
                                                         time.monotonic() - start))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
