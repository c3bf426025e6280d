#!/usr/bin/env python3
"""check_trace.py SCHEMA TRACE...: each OUT/trace.json is a Chrome trace as
docs/trace.schema.json says, and keeps the rules a schema cannot state:
every pid an event uses has a process_name, every (pid, tid) a thread_name;
on one track the events do not overlap (each starts at or after the previous
one's end); otherData.events counts the X events. Prints, per trace,
"FILE: valid, N events" and per track, in the metadata's order,
"  PROCESS / THREAD: N events, FIRST .. LAST, busy B" (the first start,
the last end and the sum of the durations, in cycles); exits 1 at the first trace that is not valid.

check_trace.py --dsa-report REPORT SCHEMA TRACE: also, against the compile's
report.json (written apart from the trace): a track per cluster with a
share of the batch, each running the report's instance order once per
iteration, back to back, the last ending at its latency; prints
"matches report.json: T tracks of N instances x I iterations".

check_trace.py --mutants SCHEMA TRACE: the checks reject each edit of a valid
trace that would mislead a viewer; prints "N of N mutants rejected"."""
import copy
import json
import os
import sys

import jsonschema


def num(x):
    return str(int(x)) if float(x).is_integer() else f"{x:.3f}"


def errors(schema, trace):
    """The trace's faults, [] if none; and its tracks' summary lines."""
    v = jsonschema.Draft202012Validator(schema)
    out = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in v.iter_errors(trace)]
    if out:
        return out, []
    processes, threads, order = {}, {}, []
    for e in trace["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
            order.append((e["pid"], e["tid"]))
    events = {}
    for i, e in enumerate(trace["traceEvents"]):
        if e["ph"] != "X":
            continue
        if e["pid"] not in processes:
            out.append(f"traceEvents/{i}: pid {e['pid']} has no process_name")
        if (e["pid"], e["tid"]) not in threads:
            out.append(f"traceEvents/{i}: track ({e['pid']}, {e['tid']}) has no thread_name")
        events.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["dur"], i))
    written = sum(len(v) for v in events.values())
    if written != trace["otherData"]["events"]:
        out.append(f"otherData/events: {trace['otherData']['events']}, but {written} X events")
    lines = []
    for track in order:
        steps = sorted(events.get(track, []))
        for (ts, dur, i), (ts2, _, j) in zip(steps, steps[1:]):
            if ts2 < ts + dur - 1e-9 * max(1.0, ts + dur):
                out.append(f"traceEvents/{j}: starts at {ts2}, before traceEvents/{i} ends at {ts + dur}")
        if steps:
            last = max(ts + dur for ts, dur, _ in steps)
            lines.append(f"  {processes.get(track[0], '?')} / {threads[track]}: {len(steps)} events, "
                         f"{num(steps[0][0])} .. {num(last)}, busy {num(sum(dur for _, dur, _ in steps))}")
        else:
            lines.append(f"  {processes.get(track[0], '?')} / {threads[track]}: 0 events")
    return out, lines


def mutants(trace):
    """(what, edited copy) pairs: one edit each, the trace left as it was."""
    xs = [i for i, e in enumerate(trace["traceEvents"]) if e["ph"] == "X"]
    first, second = xs[0], next(i for i in xs[1:] if trace["traceEvents"][i]["tid"] == trace["traceEvents"][xs[0]]["tid"])
    ev = lambda i: lambda t: t["traceEvents"][i]
    edits = [
        ("a step overlapping the one before", ev(second),
         lambda e, t: e.update(ts=t["traceEvents"][first]["ts"] + t["traceEvents"][first]["dur"] / 2)),
        ("a step on an unnamed track", ev(first), lambda e, t: e.update(tid=99)),
        ("a step in an unnamed process", ev(first), lambda e, t: e.update(pid=99)),
        ("a negative dur", ev(first), lambda e, t: e.update(dur=-1)),
        ("a negative ts", ev(first), lambda e, t: e.update(ts=-1)),
        ("ts missing", ev(first), lambda e, t: e.pop("ts")),
        ("ts a string", ev(first), lambda e, t: e.update(ts="0")),
        ("args missing", ev(first), lambda e, t: e.pop("args")),
        ("a step without its layer", ev(first), lambda e, t: [e["args"].pop(k, None) for k in ("layer", "sub_graph")]),
        ("ph misspelt", ev(first), lambda e, t: e.update(ph="x")),
        ("a stray top-level key", lambda t: t, lambda e, t: e.update(displayTimeUnit="cycles")),
        ("the time unit missing", lambda t: t["otherData"], lambda e, t: e.pop("time_unit")),
        ("the event count off by one", lambda t: t["otherData"], lambda e, t: e.update(events=e["events"] + 1)),
        ("a thread_name without its name", lambda t: next(e for e in t["traceEvents"] if e["name"] == "thread_name"),
         lambda e, t: e.update(args={"sort_index": 1})),
    ]
    for what, where, edit in edits:
        t = copy.deepcopy(trace)
        edit(where(t), t)
        yield what, t


def dsa_faults(report, trace):
    """Where the trace of a DSA compile departs from its report.json."""
    gt = report["graphturbo"]
    names = [sg["name"] for sg in gt["sub_graphs"]]
    plan = [(names[i["sub_graph"]], i["instance"]) for i in gt["instances"]] * gt["cost"]["iterations"]
    share = report["batch_per_cluster"]
    clusters = min(report["clusters"], -(-report["batch"] // share))
    tracks = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    out = []
    if len(tracks) != clusters:
        out.append(f"{len(tracks)} tracks, but {clusters} clusters with a share of the batch")
    latency = gt["cost"]["latency_cycles"]
    for track, events in tracks.items():
        if [(e["args"]["sub_graph"], e["args"]["instance"]) for e in events] != plan:
            out.append(f"track {track}: not the report's order of {len(gt['instances'])} instances")
        for a, b in zip(events, events[1:]):
            if abs(b["ts"] - (a["ts"] + a["dur"])) > 1e-9 * latency:
                out.append(f"track {track}: a gap or overlap at {b['ts']}")
                break
        end = events[-1]["ts"] + events[-1]["dur"]
        if events[0]["ts"] != 0 or abs(end - latency) > 1e-9 * latency:
            out.append(f"track {track}: {events[0]['ts']} .. {end}, but the latency is {latency}")
    return out, f"{len(tracks)} tracks of {len(gt['instances'])} instances x {gt['cost']['iterations']} iterations"


def main(argv):
    report = None
    if argv[1] == "--dsa-report":
        report = json.load(open(argv[2]))
        argv = argv[:1] + argv[3:]
    if argv[1] == "--mutants":
        schema, trace = (json.load(open(p)) for p in argv[2:4])
        assert not errors(schema, trace)[0], "the trace itself must be valid"
        edits = list(mutants(trace))
        accepted = [what for what, t in edits if not errors(schema, t)[0]]
        print(f"{len(edits) - len(accepted)} of {len(edits)} mutants rejected")
        for what in accepted:
            print(f"  accepted: {what}")
        return 1 if accepted else 0
    schema = json.load(open(argv[1]))
    for path in argv[2:]:
        trace = json.load(open(path))
        faults, lines = errors(schema, trace)
        if faults:
            print(f"{os.path.basename(path)}: not valid")
            for f in faults[:20]:
                print(f"  {f}")
            return 1
        print(f"{os.path.basename(path)}: valid, {trace['otherData']['events']} events")
        for line in lines:
            print(line)
        if report:
            faults, what = dsa_faults(report, trace)
            print(f"matches report.json: {what}" if not faults else "does not match report.json")
            for f in faults[:20]:
                print(f"  {f}")
            if faults:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
