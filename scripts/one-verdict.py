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
Prints one line per case and a summary; --json FILE writes the details,
after every case, so a run cut short keeps what it found; --resume then
runs only the cases FILE does not hold for the same dflc binary (its
SHA-256), so a verdict is never assembled from two binaries. Each dflc runs
under a limit of CPU seconds (--timeout; a case past it is reported as
such, not as a pass), so the verdict is the same on a loaded machine, and
under a wall-clock guard of ten times that against a hang. Cases run one
after the other unless --jobs is given.

A batch-1 case longer than a session (the U-Net: 406 G MACs) can run in
pieces (--chunk-work POINTS): the compile alone, then `dflc sim
OUT/schedule.dfl --layers L1,L2,...` over consecutive layers of about POINTS
of work each (report.json's `work`), each a process of its own whose sim.json
stays in the work folder, so a case stopped midway resumes at its first
piece without one, on the schedule it compiled (with --work, for the same
binary); the pipelined segments holding a piece's layers run with it. A piece's first layers read their
operands computed by the reference where that fits the simulator's work
bound, else seeded (listed as such). A layer past the bound alone (the Llama
prefill's FFN matmuls, 120 G MACs each, which a whole run skips) is a piece
of its own, simulated under a bound raised to hold it: its points, times
two operands, for the reference and the kernel, to the next power of two.

  scripts/one-verdict.py --dflc build/tools/dflc [--nets mlp,alexnet] [--hw eyeriss_multinode]
                         [--modes inference,train] [--batches 1,64] [--timeout 1800] [--jobs 1]
                         [--json verdict.json [--resume]] [--work DIR]
                         [--chunk-work POINTS]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMORY_HIERARCHY = ["eyeriss_multinode", "eyeriss_multinode_4x4", "edge_systolic", "vta_gemm",
                    "eyeriss_pspad", "tpu_v1", "simba_6x6"]
# Inference chips (their papers say so): their 8-bit registers hold no
# gradient word, so every network's --train is refused whole (E0821, a
# backward layer's smallest tile against a 1 B register); not run.
INFERENCE_CHIPS = {"tpu_v1", "simba_6x6"}


def run(argv, timeout):
    """argv's exit code (None past a limit), stdout, stderr, and its wall and
    CPU seconds. The limit is `timeout` CPU seconds (RLIMIT_CPU: SIGXCPU),
    with ten times that of wall time as a guard against a hang."""
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (timeout, timeout + 5))
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, text=True, preexec_fn=limit)
        guard = threading.Timer(10 * timeout, p.kill)
        guard.start()
        try:
            _, status, usage = os.wait4(p.pid, 0)
        finally:
            guard.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        wall, cpu = time.monotonic() - start, usage.ru_utime + usage.ru_stime
        if p.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
            why = "past %d CPU seconds" % timeout if cpu >= timeout else \
                  "killed after %.0f s of wall time (%.0f CPU seconds)" % (wall, cpu)
            return None, "", why, wall, cpu
        return p.returncode, out.read(), err.read(), wall, cpu


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


def failure(what, code, err):
    if code is None:
        return "%s stopped: %s" % (what, err)
    return "%s exit %s: %s" % (what, code, first_error(err))


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


def case_name(net, hw, train, batch):
    return "%s on %s%s, batch %d" % (net, hw, " --train" if train else "", batch)


def layer_runs(report, chunk_work):
    """The network's layers in order, in runs of consecutive layers of at
    most chunk_work points each (a larger layer alone)."""
    runs, work = [], 0
    for l in report["layers"]:
        if not runs or work + l["work"] > chunk_work:
            runs.append([])
            work = 0
        runs[-1].append(l["name"])
        work += l["work"]
    return runs


WORK_BOUND = 2 ** 36   # the simulator's default work bound (docs/simulator.md, "Limits of the kernels")


def work_limit(report, layers):
    """The bound a run of these layers needs: the default, or raised to hold
    its largest layer alone (two operands, reference and kernel)."""
    work = {l["name"]: l["work"] for l in report["layers"]}
    own = 4 * max(work[n] for n in layers)
    return WORK_BOUND if own <= WORK_BOUND else 2 ** (own - 1).bit_length()


def stamped(out, binary):
    """Whether OUT-sim's pieces (and OUT's compile they ran) are this binary's."""
    stamp = os.path.join(out + "-sim", "dflc_sha256")
    if not os.path.exists(stamp):
        return False
    with open(stamp) as f:
        return f.read() == binary


def kept_compile(out, binary):
    """Whether OUT holds the schedule and report the pieces in OUT-sim ran, compiled by this binary."""
    return stamped(out, binary) and all(os.path.exists(os.path.join(out, f)) for f in ("schedule.dfl", "report.json"))


def chunked_sim(dflc, out, train, chunk_work, binary, timed, result):
    """Batch 1 in pieces (--chunk-work): each run of layers simulated by a
    `dflc sim --layers` of its own, kept in OUT-sim/K (a stamp names the
    binary); its pipelined segments run with it."""
    report = load(os.path.join(out, "report.json"))
    pieces = out + "-sim"
    if not stamped(out, binary):
        shutil.rmtree(pieces, ignore_errors=True)
        os.makedirs(pieces)
        with open(os.path.join(pieces, "dflc_sha256"), "w") as f:
            f.write(binary)
    runs = layer_runs(report, chunk_work)
    for k, layers in enumerate(runs):
        sim_out = os.path.join(pieces, "%04d" % k)
        # Progress on stderr (stdout keeps one line per case): a piece is minutes, a case hours.
        print("  %s: piece %d of %d, %s..%s" % (os.path.basename(out), k + 1, len(runs), layers[0], layers[-1]),
              file=sys.stderr, flush=True)
        times = os.path.join(sim_out, "verdict-times.json")
        if os.path.exists(times):   # done by an earlier run of this case
            t = load(times)
            result["seconds"] += t["seconds"]
            result["cpu_seconds"] += t["cpu_seconds"]
        else:
            before = result["seconds"], result["cpu_seconds"]
            code, _, err = timed([dflc, "sim", os.path.join(out, "schedule.dfl"), "--batch", "1", "--layers",
                                  ",".join(layers), "--work-limit", str(work_limit(report, layers)), "-o", sim_out] +
                                 (["--train"] if train else []))
            if code != 0:
                result["problems"].append(failure("sim --layers %s..%s" % (layers[0], layers[-1]), code, err))
                continue
            write_json(times, {"seconds": result["seconds"] - before[0],
                               "cpu_seconds": result["cpu_seconds"] - before[1]})
        sim_findings(sim_out, result)


def pipelines(dflc, out, train, batch, timed, result):
    """The pipelined segments in the pipeline simulator alone (their isl
    dependences and LCUs, not the kernels)."""
    sim_out = out + "-pipelines"
    code, _, err = timed([dflc, "sim", os.path.join(out, "schedule.dfl"), "--batch", str(batch),
                          "--pipelines-only", "-o", sim_out] + (["--train"] if train else []))
    if code != 0:
        result["problems"].append(failure("sim --pipelines-only", code, err))
    else:
        pipeline_problems(load(os.path.join(sim_out, "pipeline.json")), result)


def case(dflc, net, hw, train, batch, timeout, work, chunk_work=0, binary=""):
    name = case_name(net, hw, train, batch)
    out = os.path.join(work, "%s-%s-%s-b%d" % (net, hw, "train" if train else "inf", batch))
    base = [dflc, os.path.join(ROOT, "stdlib/nets/%s.dfl" % net), os.path.join(ROOT, "stdlib/hw/%s.dfl" % hw),
            "-o", out, "--batch", str(batch)] + (["--train"] if train else [])
    result = {"case": name, "ok": False, "seconds": 0.0, "cpu_seconds": 0.0, "problems": [], "skipped_layers": [],
              "skipped_segments": [], "seeded_layers": []}

    def timed(argv):
        code, stdout, err, wall, cpu = run(argv, timeout)
        result["seconds"] += wall
        result["cpu_seconds"] += cpu
        return code, stdout, err

    if batch == 1 and chunk_work:
        # The compile once: a resumed case keeps the schedule its pieces ran (the stamp names its binary).
        code, err = 0, ""
        if not kept_compile(out, binary):
            code, _, err = timed(base)
        if code != 0:
            result["problems"].append(failure("compile", code, err))
            return result
        chunked_sim(dflc, out, train, chunk_work, binary, timed, result)
        result["ok"] = not result["problems"]
        return result
    if batch == 1:
        code, _, err = timed(base + ["--sim"])
        if code != 0:
            result["problems"].append(failure("compile --sim", code, err))
            return result
        sim_findings(out, result)
        result["ok"] = not result["problems"]
        return result
    code, _, err = timed(base)
    if code != 0:
        result["problems"].append(failure("compile", code, err))
        return result
    report = load(os.path.join(out, "report.json"))
    code, stdout, err = timed([dflc, "check", "--format", "json", os.path.join(out, "schedule.dfl"), "--batch",
                               str(batch)] + (["--train"] if train else []))
    if code != 0:
        result["problems"].append(failure("re-check", code, err))
        return result
    again = json.loads(stdout)["schedules"][0]
    for key in ("energy_pj", "latency_cycles"):
        if not close(report["totals"][key], again["totals"][key]):
            result["problems"].append("re-check %s %s, the compile's %s" % (key, again["totals"][key], report["totals"][key]))
    if pipelined_segments(report):
        pipelines(dflc, out, train, batch, timed, result)
    result["ok"] = not result["problems"]
    return result


INFERENCE_ONLY = re.compile(r"_(decode|prefill)(_\d+)?$")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_json(path, results):
    """Atomically, so a run stopped while writing keeps the last whole file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=2)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dflc", default=os.path.join(ROOT, "build/tools/dflc"), help="the dflc binary to judge")
    ap.add_argument("--nets", default=",".join(sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "stdlib/nets")))),
                    help="comma-separated stdlib network names (default: all)")
    ap.add_argument("--hw", default=",".join(MEMORY_HIERARCHY),
                    help="comma-separated stdlib templates (default: every memory-hierarchy one)")
    ap.add_argument("--modes", default="inference,train", help="inference, train or both (comma-separated)")
    ap.add_argument("--batches", default="1,64", help="comma-separated batch sizes: 1 simulates, others re-check")
    ap.add_argument("--timeout", type=int, default=1800, help="CPU seconds per dflc run (default 1800)")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1)")
    ap.add_argument("--json", help="write every case's details here, after each case")
    ap.add_argument("--resume", action="store_true",
                    help="keep the cases --json already holds for this dflc binary and run the rest")
    ap.add_argument("--work", help="output directories (default: a new temporary directory, kept for inspection)")
    ap.add_argument("--chunk-work", type=int, default=0,
                    help="batch 1: simulate in runs of layers of about this many points each, resumable (default: whole)")
    a = ap.parse_args()
    if a.resume and not a.json:
        ap.error("--resume needs --json")
    binary = sha256(a.dflc)
    work = a.work or tempfile.mkdtemp(prefix="dflc-verdict-")
    cases = [(n, h, m == "train", int(b)) for n in a.nets.split(",") for h in a.hw.split(",")
             for m in a.modes.split(",") for b in a.batches.split(",")
             if not (m == "train" and (INFERENCE_ONLY.search(n) or h in INFERENCE_CHIPS))]
    kept = {}
    if a.resume and os.path.exists(a.json):
        kept = {r["case"]: r for r in load(a.json) if r.get("dflc_sha256") == binary}
    start = time.monotonic()
    results, lock = [r for r in kept.values()], threading.Lock()

    def one(n, h, t, b):
        r = case(a.dflc, n, h, t, b, a.timeout, work, a.chunk_work, binary)
        r["dflc_sha256"] = binary
        with lock:
            results.append(r)
            if a.json:
                write_json(a.json, results)
        return r

    todo = [c for c in cases if case_name(*c) not in kept]
    if kept:
        print("%d cases kept from %s, %d to run" % (len(cases) - len(todo), a.json, len(todo)), flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(one, n, h, t, b) for n, h, t, b in todo]
        for f in futures:
            r = f.result()
            notes = r["problems"] + (["%d layers on seeded operands" % len(r["seeded_layers"])]
                                     if r["seeded_layers"] else [])
            print("%-4s %-60s %7.1f s  %s" % ("ok" if r["ok"] else "FAIL", r["case"], r["seconds"],
                                               "; ".join(notes)), flush=True)
    judged = [r for r in results if r["case"] in {case_name(*c) for c in cases}]
    failed = [r for r in judged if not r["ok"]]
    print("%d of %d cases hold the verdict in %.0f s (%.0f CPU seconds of dflc in all)" % (
        len(judged) - len(failed), len(judged), time.monotonic() - start, sum(r["cpu_seconds"] for r in judged)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
