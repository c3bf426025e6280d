"""One compile and its re-check, for the chip benchmarks (run_chip_sweep.py,
run_pspad_bench.py): `dflc NET HW -o OUT [--batch N]`, then `dflc check
OUT/schedule.dfl`, every command an argument list (no shell)."""
import json
import os
import subprocess
import time


def compile_and_check(dflc, net, hw, out, batch=None):
    """Returns a dict: ok (the compile succeeded, the schedule re-checks
    complete and valid with the solver's own totals), why (when not ok), the
    report (report.json) and the solve's wall seconds."""
    args = [dflc, net, hw, "-o", out, "--no-plots"]
    if batch is not None:
        args += ["--batch", str(batch)]
    start = time.monotonic()
    c = subprocess.run(args, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if c.returncode != 0:
        lines = [l for l in c.stderr.splitlines() if "error" in l] or c.stderr.splitlines() or ["(no output)"]
        return {"ok": False, "why": f"compile exited {c.returncode}: {lines[0][:300]}", "seconds": seconds}
    report = json.load(open(os.path.join(out, "report.json")))
    args = [dflc, "check", "--format", "json", os.path.join(out, "schedule.dfl")]
    if batch is not None:
        args += ["--batch", str(batch)]
    k = subprocess.run(args, capture_output=True, text=True)
    if k.returncode != 0:
        return {"ok": False, "why": f"check exited {k.returncode}: {k.stdout[:300]}", "seconds": seconds,
                "report": report}
    checked = json.loads(k.stdout)["schedules"][0]
    if not (checked["valid"] and checked["complete"]):
        return {"ok": False, "why": "the schedule does not re-check complete and valid", "seconds": seconds,
                "report": report}
    if checked["totals"] != report["totals"]:
        return {"ok": False, "why": "the re-check's totals differ from the solver's", "seconds": seconds,
                "report": report}
    return {"ok": True, "seconds": seconds, "report": report}


def roles(report):
    """Each level's buffers and bypassed roles, as report.json's first layer
    gives them: 'LEVEL: buf=ifm,ofm wbuf=wgt; bypass wgt'."""
    parts = []
    for level in report["layers"][0]["levels"]:
        if "buffers" not in level:
            continue
        held = " ".join(f"{b['name']}={','.join(b['holds'])}" for b in level["buffers"])
        bypassed = level.get("bypassed") or []
        parts.append(f"{level['level']}: {held}" + (f"; bypass {','.join(bypassed)}" if bypassed else ""))
    return " | ".join(parts)
