"""An installed dflc finds its stdlib next to itself, wherever the prefix is moved.

usage: install_test.py CMAKE BUILD_DIR [PYTHON]

Installs BUILD_DIR into a fresh temporary directory (outside the source
tree) with `cmake --install`, moves the prefix, and from there:

  1. schedules resnet50 on eyeriss_multinode from the moved prefix's stdlib;
  2. `dflc check`s that schedule with its imports rewritten to the stdlib
     import path ("stdlib/nets/resnet50.dfl"): the same report;
  3. shows, through a redefinition's note, that the stdlib file read is the
     moved prefix's;
  4. runs a copy of the binary with no stdlib beside it: the import is E0101
     and the note names where dflc looked -- the copy's own share/dflc, never
     the source tree (nothing is compiled in);
  5. the search order: that copy finds the stdlib through DFLC_PATH (empty
     and missing entries skipped); -I comes before DFLC_PATH, and DFLC_PATH
     before the stdlib next to the binary.
  6. with PYTHON (the build has the Python package): `import dflc` from the
     moved prefix's lib/python3/site-packages finds the moved stdlib and
     schedules mlp with the figures of the moved binary.

Prints one line per step; exits 1 on the first failure, leaving the
temporary directory for a look.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

cmake, build = sys.argv[1], sys.argv[2]
python = sys.argv[3] if len(sys.argv) > 3 else None
tmp = os.path.realpath(tempfile.mkdtemp(prefix="dflc-install-"))
env = {k: v for k, v in os.environ.items() if k != "DFLC_PATH"}
env["NO_COLOR"] = "1"


def fail(msg):
    sys.stdout.flush()
    sys.exit("FAIL: %s (work directory kept: %s)" % (msg, tmp))


def run(args, cwd, extra_env=None, expect=0):
    p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=dict(env, **(extra_env or {})))
    if p.returncode != expect:
        fail("%s exited %d, expected %d\nstdout:\n%s\nstderr:\n%s" % (" ".join(args), p.returncode, expect,
                                                                       p.stdout, p.stderr))
    return p


def previous_definition(dflc, cwd, extra_env=None, args=()):
    """Where dup.dfl's redefinition of resnet50 says the first one is: the stdlib file read."""
    p = run([dflc, "show", "--format", "json", *args, "dup.dfl"], cwd, extra_env, expect=1)
    diags = json.loads(p.stderr)["diagnostics"]
    if len(diags) != 1 or diags[0]["code"] != "E0201":
        fail("expected one E0201, got %s" % p.stderr)
    return os.path.realpath(os.path.join(cwd, diags[0]["notes"][0]["file"]))


def inside(path, root):
    return os.path.commonpath([os.path.realpath(path), root]) == root


# Install, then move the prefix.
a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
subprocess.run([cmake, "--install", build, "--prefix", a], check=True, stdout=subprocess.DEVNULL)
for rel in ("bin/dflc", "share/dflc/stdlib/nets/resnet50.dfl", "share/dflc/stdlib/hw/eyeriss_multinode.dfl"):
    if not os.path.isfile(os.path.join(a, rel)):
        fail("cmake --install did not write %s" % rel)
os.rename(a, b)
dflc = os.path.join(b, "bin", "dflc")
stdlib = os.path.join(b, "share", "dflc", "stdlib")
print("installed and moved to %s" % b)

# 1. Schedule resnet50 from the moved stdlib.
out = os.path.join(tmp, "out")
p = run([dflc, os.path.join(stdlib, "nets/resnet50.dfl"), os.path.join(stdlib, "hw/eyeriss_multinode.dfl"),
         "-o", out], tmp)
if "schedule for resnet50 on eyeriss_multinode: valid" not in p.stdout:
    fail("no valid schedule:\n" + p.stdout)
schedule = open(os.path.join(out, "schedule.dfl")).read()
imports = re.findall(r'^import "([^"]+)";$', schedule, re.M)
if len(imports) != 2 or not all(inside(os.path.join(out, i), b) for i in imports):
    fail("schedule.dfl imports %s, not the moved stdlib" % imports)
print("1. scheduled resnet50 on eyeriss_multinode from %s" % stdlib)

# 2. The same schedule importing the stdlib by its import path, checked from outside the source tree.
proj = os.path.join(tmp, "proj")
os.makedirs(proj)
by_path = schedule.replace('import "%s";' % imports[0], 'import "stdlib/nets/resnet50.dfl";') \
                  .replace('import "%s";' % imports[1], 'import "stdlib/hw/eyeriss_multinode.dfl";')
open(os.path.join(proj, "schedule.dfl"), "w").write(by_path)
direct = run([dflc, "check", os.path.join(out, "schedule.dfl")], tmp).stdout
through = run([dflc, "check", "schedule.dfl"], proj).stdout
if direct != through or "valid" not in through:
    fail("checking through the stdlib import path differs:\n%s\n---\n%s" % (direct, through))
print("2. dflc check through import \"stdlib/...\": the same report")

# 3. The stdlib file read is the moved prefix's.
open(os.path.join(proj, "dup.dfl"), "w").write(
    'import "stdlib/nets/resnet50.dfl";\nnetwork resnet50 { input x [C=1]; }\n')
open(os.path.join(proj, "use.dfl"), "w").write('import "stdlib/nets/resnet50.dfl";\n')
first = previous_definition(dflc, proj)
if first != os.path.join(stdlib, "nets", "resnet50.dfl"):
    fail("the stdlib read was %s" % first)
print("3. stdlib/nets/resnet50.dfl read from %s" % first)

# 4. A binary without a stdlib beside it finds none (and says where it looked).
lonely = os.path.join(tmp, "lonely", "bin", "dflc")
os.makedirs(os.path.dirname(lonely))
shutil.copy2(dflc, lonely)
p = run([lonely, "show", "use.dfl"], proj, expect=1)
# (use.dfl is named without a directory: its own directory shows as stdlib/nets.)
searched = "searched stdlib/nets, %s" % os.path.join(tmp, "lonely", "share", "dflc", "stdlib", "nets")
if "[E0101]" not in p.stderr or searched not in p.stderr:
    fail("expected E0101 with the note '%s':\n%s" % (searched, p.stderr))
print("4. a binary without a stdlib: E0101, %s" % searched)

# 5. DFLC_PATH, and the order -I, DFLC_PATH, the stdlib next to the binary.
share = os.path.join(b, "share", "dflc")
path_env = {"DFLC_PATH": ":%s::%s" % (os.path.join(tmp, "nowhere"), share)}
run([lonely, "show", "use.dfl"], proj, path_env)
if previous_definition(lonely, proj, path_env) != os.path.join(stdlib, "nets", "resnet50.dfl"):
    fail("DFLC_PATH did not lead to %s" % share)
shadow = os.path.join(tmp, "shadow")
os.makedirs(os.path.join(shadow, "stdlib", "nets"))
shadow_net = os.path.join(shadow, "stdlib", "nets", "resnet50.dfl")
open(shadow_net, "w").write("network resnet50 { input x [C=1]; }\n")
if previous_definition(dflc, proj, {"DFLC_PATH": shadow}) != shadow_net:
    fail("DFLC_PATH does not come before the stdlib next to the binary")
if previous_definition(lonely, proj, path_env, ["-I", shadow]) != shadow_net:
    fail("-I does not come before DFLC_PATH")
print("5. found through DFLC_PATH; -I before DFLC_PATH before the binary's stdlib")

# 6. The Python package beside the binary.
if python:
    site = os.path.join(b, "lib", "python3", "site-packages")
    script = ("import dflc, json\n"
              "r = dflc.compile(dflc.Network.from_file('stdlib/nets/mlp.dfl'),\n"
              "                 dflc.Hardware.from_file('stdlib/hw/eyeriss_multinode.dfl'), plots=False)\n"
              "print(json.dumps([dflc.stdlib_root(), r.energy_pj, r.latency_cycles]))\n")
    p = run([python, "-c", script], proj, {"PYTHONPATH": site})
    root, energy, latency = json.loads(p.stdout)
    if root != share:
        fail("the installed package's stdlib root is %s, not %s" % (root, share))
    out6 = os.path.join(tmp, "out6")
    run([dflc, os.path.join(stdlib, "nets/mlp.dfl"), os.path.join(stdlib, "hw/eyeriss_multinode.dfl"),
         "--no-plots", "-o", out6], tmp)
    totals = json.load(open(os.path.join(out6, "report.json")))["totals"]
    if (energy, latency) != (totals["energy_pj"], totals["latency_cycles"]):
        fail("import dflc scheduled mlp at %s pJ, %s cycles; the binary at %s pJ, %s cycles"
             % (energy, latency, totals["energy_pj"], totals["latency_cycles"]))
    print("6. import dflc from %s: stdlib %s, mlp as the binary schedules it" % (site, root))

shutil.rmtree(tmp)
