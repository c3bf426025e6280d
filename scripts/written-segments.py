#!/usr/bin/python3
"""Written segments: does `dflc check --allow-partial` agree with the compile?

For every layer of a stdlib network that reads the layer before it, write the
partial schedule `segment A, B pipelined;` (nothing else) and ask
  1. `dflc check --allow-partial` -- the written directives alone, and
  2. `dflc compile` -- the solver completes them (or says why it cannot),
then re-check the compiled schedule. One verdict (issue "one pipeline, one
verdict") means:
  - check refuses  -> the compile refuses with one of the check's codes;
  - check accepts  -> the compile writes a schedule that re-checks, or refuses
    it with a located rule that only a search over the completions can decide
    (SEARCH_RULES: the buffers a segment's dependences need, E0824; its
    intermediate on chip, E0819; whole rows, E0826; instance splits, E0827;
    a layer with no schedule under any scheme, E0821 naming the rule);
  - never a crash, an uncoded or unlocated error, or a rule broken on tiles
    the solver chose itself (E0814, E0815: the solver must respect its own
    rules).
Each case is one line: the pair, the two verdicts and, for a disagreement,
the compile's first error. Exit 1 if any pair disagrees.

  scripts/written-segments.py --dflc build/tools/dflc --nets gpt2_small_decode \\
      --hw eyeriss_multinode_4x4 [--batch 1] [--json FILE] [--jobs 2]

Not part of `make test` (an hour and more over the stdlib); docs/testing.md.
"""

import argparse
import concurrent.futures
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEARCH_RULES = {"E0819", "E0821", "E0824", "E0826", "E0827"}
DEFAULT_NETS = ("mlp,lstm,alexnet,resnet18,mobilenet_v2,efficientnet_b0,gpt2_small_decode,vit_b16,"
                "bert_base")
DEFAULT_HW = "eyeriss_multinode_4x4,simba_6x6,edge_systolic"


def run(cmd, cpu_seconds):
    """Runs cmd with its CPU time limited (the same verdict under any load)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=limit)
    return p.returncode, p.stdout, p.stderr


def codes(text):
    return sorted(set(re.findall(r"\[([EW]\d{4})\]", text)))


def first_error(text):
    return next((l for l in text.splitlines() if ": error: " in l), text.strip()[:200])


def show(dflc, path):
    code, out, err = run([dflc, "show", "--json", path], 60)
    if code != 0:
        sys.exit("written-segments: dflc show %s failed: %s" % (path, first_error(err)))
    return json.loads(out)


def pairs(net):
    """(A, B) for every layer B that reads the layer A just before it."""
    layers = net["layers"]
    return [(a["name"], b["name"]) for a, b in zip(layers, layers[1:]) if a["name"] in b.get("operands", [])]


def judge(dflc, netfile, hwfile, netname, hwname, a, b, batch, timeout, work):
    """The verdict on one written segment: a dict with "ok" and what was seen."""
    os.makedirs(work, exist_ok=True)
    sched = os.path.join(work, "segment.dfl")
    with open(sched, "w") as f:
        f.write('import "%s";\nimport "%s";\nschedule for %s on %s {\n  segment %s, %s pipelined;\n}\n'
                % (netfile, hwfile, netname, hwname, a, b))
    batch_args = ["--batch", str(batch)]
    check_rc, _, check_err = run([dflc, "check", "--allow-partial", sched] + batch_args, timeout)
    out = os.path.join(work, "out")
    comp_rc, _, comp_err = run([dflc, "compile", netfile, hwfile, sched, "-o", out, "--no-plots"] + batch_args,
                               timeout)
    case = {"net": netname, "hw": hwname, "pair": [a, b], "check": check_rc, "check_codes": codes(check_err),
            "compile": comp_rc, "compile_codes": codes(comp_err)}
    errs = [c for c in case["compile_codes"] if c.startswith("E")]
    located = sched in comp_err
    if check_rc not in (0, 1) or comp_rc not in (0, 1):
        problem = "crashed or was stopped (exit %d / %d)" % (check_rc, comp_rc)
    elif check_rc == 1:
        agreed = comp_rc == 1 and set(errs) & set(case["check_codes"])
        problem = None if agreed else "check refuses %s, the compile %s" % (
            ",".join(case["check_codes"]), "succeeds" if comp_rc == 0 else "refuses " + ",".join(errs))
    elif comp_rc == 1:
        if not errs or not located:
            problem = "the compile refuses without a located, coded rule"
        elif "no valid schedule found for" in comp_err:
            problem = "the compile refuses without naming the rule it could not satisfy"
        elif not set(errs) <= SEARCH_RULES:
            problem = "the check accepts, the compile refuses " + ",".join(errs)
        else:
            problem = None
            case["refused_by_search"] = errs
    else:
        rc, _, recheck_err = run([dflc, "check", os.path.join(out, "schedule.dfl")] + batch_args, timeout)
        problem = None if rc == 0 else "the compiled schedule does not re-check: " + first_error(recheck_err)
    case["ok"] = problem is None
    if problem:
        case["problem"] = problem
        case["first_error"] = first_error(comp_err if comp_rc else check_err)
    return case


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dflc", default=os.path.join(ROOT, "build/tools/dflc"), help="the dflc binary to judge")
    ap.add_argument("--nets", default=DEFAULT_NETS, help="comma-separated stdlib networks (default: %(default)s)")
    ap.add_argument("--hw", default=DEFAULT_HW, help="comma-separated stdlib templates (default: %(default)s)")
    ap.add_argument("--batch", type=int, default=1, help="every network's batch (default 1)")
    ap.add_argument("--timeout", type=int, default=600, help="CPU seconds per dflc run (default 600)")
    ap.add_argument("--jobs", type=int, default=1, help="pairs judged at once (default 1)")
    ap.add_argument("--json", help="write every case here")
    ap.add_argument("--work", help="scratch directory (default: a new temporary one, removed at the end)")
    a = ap.parse_args()
    dflc = os.path.abspath(a.dflc)
    scratch = tempfile.TemporaryDirectory(prefix="dflc-segments-") if not a.work else None
    work = a.work or scratch.name
    cases = []
    for net in a.nets.split(","):
        netfile = os.path.join(ROOT, "stdlib/nets/%s.dfl" % net)
        netinfo = show(dflc, netfile)["networks"][0]
        for hw in a.hw.split(","):
            hwfile = os.path.join(ROOT, "stdlib/hw/%s.dfl" % hw)
            hwname = show(dflc, hwfile)["hardware"][0]["name"]
            cases += [(netfile, hwfile, netinfo["name"], hwname, x, y) for x, y in pairs(netinfo)]
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = [pool.submit(judge, dflc, nf, hf, n, h, x, y, a.batch, a.timeout, os.path.join(work, str(i)))
                   for i, (nf, hf, n, h, x, y) in enumerate(cases)]
        for f in futures:
            r = f.result()
            results.append(r)
            verdict = "ok  " if r["ok"] else "FAIL"
            detail = r.get("problem", "") or ("refused by the search: " + ",".join(r["refused_by_search"])
                                              if "refused_by_search" in r else "")
            print("%s %-18s %-22s %s, %s  check %d %s  compile %d %s  %s" % (
                verdict, r["net"], r["hw"], r["pair"][0], r["pair"][1], r["check"], ",".join(r["check_codes"]),
                r["compile"], ",".join(r["compile_codes"]), detail), flush=True)
            if not r["ok"]:
                print("     " + r["first_error"], flush=True)
            if a.json:
                with open(a.json, "w") as f:
                    json.dump(results, f, indent=2)
    bad = [r for r in results if not r["ok"]]
    print("%d of %d written segments: one verdict; %d refused by the search alone; %d disagree" % (
        len(results) - len(bad), len(results), sum("refused_by_search" in r for r in results), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
