#!/usr/bin/env python3
"""all_stdlib.py DFLC STDLIB TMP: the solver's schedule of every stdlib network
on every stdlib template is complete and valid when re-checked, and the
re-check reports the solver's totals (the property the solver must keep);
its plots draw the report's numbers (plots_match_report.py); its account of
the solver's choices agrees with the schedule (check_solver_choices.py); the
report is valid against docs/report.schema.json (validate_report.py); the
loop-nest view shows every layer, and `dflc diff` of the schedule against a
copy of itself runs and finds nothing that differs."""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
from check_solver_choices import check as check_choices
from plots_match_report import check as check_plots
from validate_report import errors as schema_errors

dflc, stdlib, tmp = sys.argv[1:4]
schema = json.load(open(os.path.join(stdlib, "..", "docs", "report.schema.json")))
failures = []
runs = 0
# Known refusals, each a located diagnostic that names the rule (docs/limits.md):
# Llama 3's decode softmax over 8,193 keys keeps its row whole on chip (E0826's
# rule), its input and output rows 2 x 8,193 x 2 B = 32,772 B, 4 B more than a
# node's 32 KiB GBUF on the two Eyeriss-like templates.
REFUSED = {("llama3_8b_layer_decode_8192", "eyeriss_multinode"): "error: no valid schedule for layer 'probs': "
           "layer 'probs' does not fit level GBUF: even its smallest tiles need 32772 B of 32768 B [E0821]",
           ("llama3_8b_layer_decode_8192", "eyeriss_multinode_4x4"): "error: no valid schedule for layer 'probs': "
           "layer 'probs' does not fit level GBUF: even its smallest tiles need 32772 B of 32768 B [E0821]"}
# Stable Diffusion v1.5's U-Net keeps each GroupNorm row whole on chip (E0826's
# rule): a group's channels at all 64 x 64 positions, input and output rows.
# On the Eyeriss-like templates the first, down0_res0_norm1 over conv_in's 320
# channels (10 a group), needs 2 x 10 x 4,096 x 2 B = 163,840 B of a node's 32
# KiB GBUF; on the two larger buffers the widest, up3_res0_norm1 over 960
# channels (30 a group, 122,880 words a row), needs 2 x 122,880 x 2 B =
# 491,520 B of edge_systolic's 256 KiB GBUF and 122,880 x (1 + 4) B = 614,400 B
# of vta_gemm's 416 KiB SRAM (its input row in 8-bit words, the output row held
# as 32-bit psum words). A row split with its statistics re-read would lift
# all four.
SD15_EYERISS = ("error: no valid schedule for layer 'down0_res0_norm1': layer 'down0_res0_norm1' does not fit "
                "level GBUF: even its smallest tiles need 163840 B of 32768 B [E0821]")
REFUSED.update({("sd15_unet", "eyeriss_multinode"): SD15_EYERISS,
                ("sd15_unet", "eyeriss_multinode_4x4"): SD15_EYERISS,
                ("sd15_unet", "edge_systolic"): "error: no valid schedule for layer 'up3_res0_norm1': layer "
                "'up3_res0_norm1' does not fit level GBUF: even its smallest tiles need 491520 B of 262144 B [E0821]",
                ("sd15_unet", "vta_gemm"): "error: no valid schedule for layer 'up3_res0_norm1': layer "
                "'up3_res0_norm1' does not fit level SRAM: even its smallest tiles need 614400 B of 425984 B [E0821]"})
refused = 0
# The computational-memory templates (cm_*.dfl) take placements, not
# schedules: tests/lit/cm checks them; the DSA templates (dsa_*.dfl)
# GraphTurbo's plans: tests/lit/cli/dsa-compile.test.
for hw in sorted(h for h in glob.glob(os.path.join(stdlib, "hw", "*.dfl")) if not os.path.basename(h).startswith(("cm_", "dsa_"))):
    for net in sorted(glob.glob(os.path.join(stdlib, "nets", "*.dfl"))):
        name = f"{os.path.basename(net)[:-4]}-on-{os.path.basename(hw)[:-4]}"
        out = os.path.join(tmp, name)
        runs += 1
        c = subprocess.run([dflc, net, hw, "-o", out], capture_output=True, text=True)
        why = REFUSED.get((os.path.basename(net)[:-4], os.path.basename(hw)[:-4]))
        if why:
            refused += 1
            if c.returncode != 1 or why not in c.stderr or os.path.exists(out):
                failures.append(f"{name}: expected exit 1 with '{why}' and no output, got {c.returncode}: "
                                f"{c.stderr.strip()[:300]}")
            continue
        if c.returncode != 0:
            failures.append(f"{name}: compile exited {c.returncode}: {c.stderr.strip()[:300]}")
            continue
        k = subprocess.run([dflc, "check", "--format", "json", os.path.join(out, "schedule.dfl")],
                           capture_output=True, text=True)
        if k.returncode != 0:
            failures.append(f"{name}: check exited {k.returncode}: {k.stdout[:300]}")
            continue
        checked = json.loads(k.stdout)["schedules"][0]
        report = json.load(open(os.path.join(out, "report.json")))
        if not (checked["valid"] and checked["complete"]) or checked["totals"] != report["totals"]:
            failures.append(f"{name}: re-check differs from the solver's report")
        loops = subprocess.run([dflc, "show", "--loops", os.path.join(out, "schedule.dfl")], capture_output=True, text=True)
        shown = [l.split(":")[0][len("layer "):] for l in loops.stdout.splitlines() if l.startswith("layer ")]
        if loops.returncode != 0 or shown != [l["name"] for l in report["layers"]]:
            failures.append(f"{name}: show --loops exited {loops.returncode}, showed {len(shown)} layers")
        shutil.copy(os.path.join(out, "schedule.dfl"), os.path.join(out, "again.dfl"))
        d = subprocess.run([dflc, "diff", os.path.join(out, "schedule.dfl"), os.path.join(out, "again.dfl")],
                           capture_output=True, text=True)
        if d.returncode != 0 or "directives that differ (-: A's lines, +: B's)\n  (none)" not in d.stdout:
            failures.append(f"{name}: diff against itself exited {d.returncode}: {d.stdout[-300:]}")
        failures += check_plots(out)
        failures += check_choices(out)
        failures += [f"{name}: report.json: {e}" for e in schema_errors(schema, report)]
print(f"{runs - refused - len(failures)} of {runs - refused} schedules valid; {refused} refused as expected")
if failures:
    sys.exit("\n".join(failures))
