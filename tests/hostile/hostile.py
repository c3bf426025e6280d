#!/usr/bin/env python3
"""The hostile corpus (issue "Hostile input"): crafted inputs that once
crashed, hung or misled dflc and its language server, generated afresh and
run against a dflc binary. Every case must end in bounded time with a
diagnostic, a clean protocol error or a correct result, and leave the file
system as documented (docs/limits.md). Run it on the sanitized build
(tests/fuzz) to catch what does not crash outright:

    hostile.py --dflc PATH/TO/dflc --work DIR [--slow F] [--small] [--onnx-python PY] [-k SUBSTRING]

--slow multiplies every time bound (ASan and UBSan at -O1 run a few times
slower); --small runs smaller instances of the cases that test an algorithm
rather than memory safety (determinism). Exit 0 when every case passes; otherwise each failure is printed
with the command, the exit status and the tail of its output."""
import argparse
import json
import os
import re
import select
import shutil
import stat
import subprocess
import sys
import time

SANITIZER = re.compile(r"(AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:)")
ERROR_LINE = re.compile(r"^(?P<where>\S.*?): error: ", re.M)
STDLIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "stdlib")

NET = """network tiny {
  batch N = 2;
  input image [C=3, X=8, Y=8];
  conv1 = conv(image, K=8, R=3, pad=1);
  pool1 = maxpool(conv1, R=2);
  fc1 = fc(pool1, K=10);
}
"""
HW = """hardware tinyhw {
  word = 16 bit;
  frequency = 500 MHz;
  mac { energy = 1 pJ; }
  level REGF { capacity = 64 B; array = 4 x 4; access_energy = 0.1 pJ; transfer = multicast, systolic; }
  level GBUF { capacity = 16 KiB; access_energy = 3 pJ; bandwidth = 16 B/cycle; }
  level DRAM { access_energy = 400 pJ; bandwidth = 12.8 GB/s; }
}
"""


class Failure(Exception):
    pass


class Case:
    def __init__(self, args, name):
        self.dflc = args.dflc
        self.slow = args.slow
        self.small = args.small
        self.onnx_python = args.onnx_python
        self.dir = os.path.join(args.work, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def write(self, name, text):
        p = self.path(name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        return p

    def run(self, argv, seconds, stdin=None, env=None):
        """Runs dflc ARGV within SECONDS (times --slow); returns (status, stdout, stderr)."""
        limit = seconds * self.slow
        cmd = [self.dflc] + argv
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, cwd=self.dir, input=stdin, capture_output=True, timeout=limit, env=env)
        except subprocess.TimeoutExpired:
            raise Failure("no answer within %.0f s: %s" % (limit, " ".join(cmd)))
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        self.last = "%s\n  exit %d after %.1f s\n  stderr: %s" % (
            " ".join(a if len(a) < 80 else a[:77] + "..." for a in cmd), p.returncode,
            time.monotonic() - t0, err[-1500:])
        if p.returncode < 0:
            raise Failure("killed by signal %d: %s" % (-p.returncode, self.last))
        if SANITIZER.search(err):
            raise Failure("sanitizer report: " + self.last)
        if "internal compiler error" in err or p.returncode == 3:
            raise Failure("internal compiler error: " + self.last)
        return p.returncode, out, err

    def run_measured(self, argv, seconds, megabytes):
        """Runs dflc ARGV within SECONDS (times --slow) and MEGABYTES of peak resident
        memory (times --slow: a sanitized dflc uses more); returns (status, stdout, stderr)."""
        limit = seconds * self.slow
        cmd = [self.dflc] + argv
        t0 = time.monotonic()
        with open(self.path(".out"), "wb") as out, open(self.path(".err"), "wb") as err:
            p = subprocess.Popen(cmd, cwd=self.dir, stdout=out, stderr=err)
            while True:
                pid, status, usage = os.wait4(p.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - t0 > limit:
                    p.kill()
                    os.wait4(p.pid, 0)
                    raise Failure("no answer within %.0f s: %s" % (limit, " ".join(cmd)))
                time.sleep(0.05)
        p.returncode = os.waitstatus_to_exitcode(status)
        out, err = (open(self.path(n), "rb").read().decode(errors="replace") for n in (".out", ".err"))
        self.last = "%s\n  exit %d after %.1f s, %d MB resident at most\n  stderr: %s" % (
            " ".join(a if len(a) < 80 else a[:77] + "..." for a in cmd), p.returncode,
            time.monotonic() - t0, usage.ru_maxrss // 1024, err[-1500:])
        if p.returncode < 0:
            raise Failure("killed by signal %d: %s" % (-p.returncode, self.last))
        if "internal compiler error" in err or p.returncode == 3 or SANITIZER.search(err):
            raise Failure("internal compiler error or sanitizer report: " + self.last)
        if usage.ru_maxrss > megabytes * 1024 * self.slow:
            raise Failure("more than %d MB resident: %s" % (megabytes * self.slow, self.last))
        return p.returncode, out, err

    def diagnosed(self, argv, seconds, mentions=None):
        """dflc ARGV must exit 1 with an error diagnostic that names MENTIONS (a regex)."""
        rc, out, err = self.run(argv, seconds)
        if rc != 1 or not ERROR_LINE.search(err):
            raise Failure("expected exit 1 with an error diagnostic: " + self.last)
        if mentions and not re.search(mentions, err):
            raise Failure("the diagnostic does not mention %r: %s" % (mentions, self.last))
        return err

    def finishes(self, argv, seconds):
        """dflc ARGV must end cleanly: exit 0, or exit 1 with an error diagnostic."""
        rc, out, err = self.run(argv, seconds)
        if rc == 1 and ERROR_LINE.search(err):
            return rc, out, err
        if rc != 0:
            raise Failure("expected exit 0, or exit 1 with a diagnostic: " + self.last)
        return rc, out, err


def finite_report(case, report):
    """Every number in REPORT (report.json) is finite: json.dump writes no inf/NaN and
    nothing reported as a number is null."""
    text = open(report).read()
    if re.search(r"\b(Infinity|NaN|inf|nan)\b", text):
        raise Failure("non-finite number in %s" % report)
    totals = json.loads(text).get("totals", {})
    for k, v in totals.items():
        if v is None:
            raise Failure("report totals.%s is null in %s" % (k, report))


# --- Deep nesting ------------------------------------------------------------------

def deep_imports(case):
    """An import chain 20,000 files deep (once SIGSEGV in `dflc show`)."""
    depth = 20000
    for i in range(depth):
        case.write("chain/f%d.dfl" % i, 'import "f%d.dfl";\n' % (i + 1) if i + 1 < depth else NET)
    rc, out, err = case.finishes(["show", case.path("chain/f0.dfl")], 60)
    if rc == 1 and not re.search(r"import", err):
        raise Failure("the diagnostic does not name the import chain: " + case.last)


# --- Values, not structure ------------------------------------------------------------

def huge_batch(case):
    """A batch of 2^31 (once an endless solve): solves or is refused, within the budget."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    case.finishes(["net.dfl", "hw.dfl", "-o", "out", "--batch", "2147483648", "--time-limit", "20"], 60)


def huge_dimension(case):
    """A dimension of 2^31 - 1 (a prime: no divisor but 1 and itself)."""
    case.write("net.dfl", NET.replace("K=10", "K=2147483647"))
    case.write("hw.dfl", HW)
    rc, _, _ = case.finishes(["net.dfl", "hw.dfl", "-o", "out", "--time-limit", "20"], 60)
    if rc == 0:
        finite_report(case, case.path("out", "report.json"))


def causal_huge(case):
    """A causal matmul and softmax over 2^26 queries and keys (2^52 MACs, the
    triangle counted over its shorter side), and one query over 2^31 - 1
    keys: counted in bounded time, shown or refused."""
    case.write("net.dfl", """network big {
  input q [C=1, X=67108864];
  input k [C=1, X=67108864];
  s = matmul(q, k, causal=true);
}
network wide {
  input q [C=1, X=1];
  input k [C=1, X=2147483647];
  s = matmul(q, k, causal=true);
  p = softmax(s, causal=true);
}
""")
    case.finishes(["show", "net.dfl"], 30)


def huge_resample(case):
    """upsample by 2^31 - 1 along X (a prime K of phases) solves or is refused
    within the budget; by 2^31 - 1 on both axes of a 2 x 2 map it is too large (E0308); a
    depth_to_space block whose square overflows is E0314 or E0308, never a wrapped product."""
    case.write("net.dfl", "network h {\n  input x [C=1, X=1, Y=1];\n  u = upsample(x, scale=2147483647 x 1);\n}\n")
    case.write("hw.dfl", HW)
    rc, _, _ = case.finishes(["net.dfl", "hw.dfl", "-o", "out", "--no-plots", "--time-limit", "20"], 60)
    if rc == 0:
        finite_report(case, case.path("out", "report.json"))
    case.write("big.dfl", "network b {\n  input x [C=1, X=2, Y=2];\n  u = upsample(x, scale=2147483647);\n}\n")
    case.diagnosed(["check", "big.dfl"], 10, mentions=r"E0308")
    case.write("block.dfl", "network d {\n  input x [C=4, X=2, Y=2];\n  d = depth_to_space(x, block=2147483647);\n}\n")
    case.diagnosed(["check", "block.dfl"], 10, mentions=r"E0308|E0314")


def huge_bilinear(case):
    """a bilinear upsample by 2^31 - 1 along X (weights 2p + 1 + s past 32 bits, taken in 64;
    its guard's points solved, not enumerated) solves or is refused within the budget; a
    small one at scale 7 x 5 on a 1 x 1 map (every tap at the edge) simulates equal to the
    reference; by 2^31 - 1 on both axes of a 2 x 2 map it is too large (E0308)."""
    case.write("net.dfl", "network h {\n  input x [C=1, X=1, Y=1];\n"
               "  u = upsample(x, scale=2147483647 x 1, mode=bilinear);\n}\n")
    case.write("hw.dfl", HW)
    rc, _, _ = case.finishes(["net.dfl", "hw.dfl", "-o", "out", "--no-plots", "--time-limit", "20"], 60)
    if rc == 0:
        finite_report(case, case.path("out", "report.json"))
    case.write("edge.dfl", "network e {\n  input x [C=2, X=1, Y=1];\n"
               "  u = upsample(x, scale=7 x 5, mode=bilinear);\n}\n")
    rc, out, _ = case.finishes(["edge.dfl", "hw.dfl", "-o", "edge", "--sim", "--no-plots"], 60)
    if rc != 0 or "1 of 1 layers simulated equal the reference" not in out:
        raise Failure("a bilinear upsample of a 1 x 1 map did not simulate equal: " + case.last)
    case.write("big.dfl", "network b {\n  input x [C=1, X=2, Y=2];\n"
               "  u = upsample(x, scale=2147483647, mode=bilinear);\n}\n")
    case.diagnosed(["check", "big.dfl"], 10, mentions=r"E0308")


def conv_transpose_extremes(case):
    """conv_transpose at the edges of its integers: stride 2^31 - 1 along X on a 2-wide
    input (an output 2^31 + 1 wide, every tap of a window in its own column) solves or is
    refused within the budget; on both axes of a wide input the output is too large
    (E0308), never a wrapped product; pads past the output are E0318; a 1 x 1 input whose
    5 x 5 window lands all but its centre in the padding simulates equal to the reference."""
    case.write("net.dfl", "network t {\n  input x [C=1, X=2, Y=1];\n"
               "  u = conv_transpose(x, K=1, R=3, S=1, stride=2147483647 x 1);\n}\n")
    case.write("hw.dfl", HW)
    rc, _, _ = case.finishes(["net.dfl", "hw.dfl", "-o", "out", "--no-plots", "--time-limit", "20"], 60)
    if rc == 0:
        finite_report(case, case.path("out", "report.json"))
    case.write("big.dfl", "network b {\n  input x [C=1, X=2147483647, Y=2147483647];\n"
               "  u = conv_transpose(x, K=2147483647, R=2, stride=2147483647);\n}\n")
    case.diagnosed(["check", "big.dfl"], 10, mentions=r"E0308")
    case.write("pad.dfl", "network p {\n  input x [C=1, X=2, Y=2];\n"
               "  u = conv_transpose(x, K=1, R=1, pad=2147483647);\n}\n")
    case.diagnosed(["check", "pad.dfl"], 10, mentions=r"E0318")
    case.write("edge.dfl", "network e {\n  input x [C=2, X=1, Y=1];\n"
               "  u = conv_transpose(x, K=3, R=5, stride=3, pad=2);\n}\n")
    rc, out, _ = case.finishes(["edge.dfl", "hw.dfl", "-o", "edge", "--sim", "--no-plots"], 60)
    if rc != 0 or "1 of 1 layers simulated equal the reference" not in out:
        raise Failure("a conv_transpose of a 1 x 1 map did not simulate equal: " + case.last)


def rope_extremes(case):
    """rope at the edges of its integers: a position of 2^31 - 1 (t + pos past 32 bits, so
    the angle is taken in 64; pairs j past 62 shift by 62) simulates equal to the reference;
    a position past it is E0006, heads of 2^31 - 1 (2·heads past 32 bits) E0315, never a
    wrapped product."""
    case.write("net.dfl", "network r {\n  input x [C=136, X=3];\n"
               "  r = rope(x, pos=2147483647);\n}\n")
    case.write("hw.dfl", HW)
    rc, out, _ = case.run(["net.dfl", "hw.dfl", "-o", "out", "--sim", "--time-limit", "20"], 120)
    if rc != 0 or "1 of 1 layers simulated equal the reference" not in out:
        raise Failure("rope at pos 2^31 - 1 does not simulate equal: " + case.last)
    case.write("far.dfl", "network f {\n  input x [C=4, X=3];\n  r = rope(x, pos=2147483648);\n}\n")
    case.diagnosed(["check", "far.dfl"], 10, mentions=r"E0006")
    case.write("heads.dfl", "network h {\n  input x [C=4, X=3];\n  r = rope(x, heads=2147483647);\n}\n")
    case.diagnosed(["check", "heads.dfl"], 10, mentions=r"2 x heads = 4294967294.*\[E0315\]")


def thousand_levels(case):
    """A hardware template with 1,000 levels."""
    levels = "".join(
        "  level L%d { capacity = %d B; access_energy = %g pJ; }\n" % (i, 64 * (i + 1), 0.1 + i)
        for i in range(999))
    hw = HW.replace(HW[HW.index("  level REGF"):HW.index("  level DRAM")], levels)
    case.write("net.dfl", NET)
    case.write("hw.dfl", hw)
    case.finishes(["net.dfl", "hw.dfl", "-o", "out", "--time-limit", "20"], 60)


def many_layers(case):
    """`dflc show` and `dflc check` on a 100,000-layer network (once over a minute)."""
    n = 100000
    lines = ["network chain {", "  batch N = 1;", "  input x [C=4, X=4, Y=4];", "  l0 = conv(x, K=4, R=1);"]
    lines += ["  l%d = conv(l%d, K=4, R=1);" % (i, i - 1) for i in range(1, n)]
    case.write("net.dfl", "\n".join(lines + ["}", ""]))
    rc, out, _ = case.finishes(["show", "net.dfl"], 30)
    if rc != 0 or "l99999" not in out:
        raise Failure("show does not list the last layer: " + case.last)


def long_identifiers(case):
    """"Did you mean" between two 300,000-character identifiers one letter apart."""
    a = "a" * 300000
    case.write("net.dfl", NET.replace("conv1 = conv(image", a + "x = conv(image")
               .replace("maxpool(conv1", "maxpool(" + a + "y"))
    case.diagnosed(["show", "net.dfl"], 20, mentions="unknown|undefined|not declared")


def overflowing_arrays(case):
    """array = 2147483647 x 2147483647 at two levels (once signed overflow), 65536 x 65536
    (once "0 in all" and utilization inf), a bandwidth of 1e-300 (once latency null)."""
    case.write("net.dfl", NET)
    for name, hw in [
        ("big", HW.replace("array = 4 x 4;", "array = 2147483647 x 2147483647;")
                  .replace("capacity = 16 KiB;", "capacity = 16 KiB; array = 2147483647 x 2147483647;")),
        ("wide", HW.replace("array = 4 x 4;", "array = 65536 x 65536;")
                   .replace("capacity = 16 KiB;", "capacity = 16 KiB; array = 65536 x 65536;")),
        ("slow", HW.replace("bandwidth = 12.8 GB/s", "bandwidth = 1e-300 GB/s")),
    ]:
        case.write(name + ".dfl", hw)
        rc, out, err = case.finishes(["net.dfl", name + ".dfl", "-o", name, "--time-limit", "20"], 60)
        if rc == 0:
            finite_report(case, case.path(name, "report.json"))
            if re.search(r"\b(inf|nan)\b", out):
                raise Failure("non-finite number on stdout: " + case.last)


def partial_occupancy_huge_stacks(case):
    """A written REGF whose stacks repeat 2^31 - 1 times each, the GBUF above it not
    written: the occupancy every completion of the GBUF has at least (docs/directives.md
    §11) must neither overflow nor crash; E0801 "at least" at the REGF block (a 1 KiB
    GBUF: capped at the layer, the tiles need 2.01 KiB)."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW.replace("capacity = 16 KiB", "capacity = 1 KiB"))
    case.write("sched.dfl", """import "net.dfl";
import "hw.dfl";
schedule for tiny on tinyhw {
  layer conv1 {
    REGF {
      tensor ifm [N=1, C=3, Xi=10, Yi=10];
      tensor wgt [K=8, C=3, R=3, S=3];
      tensor ofm [N=1, K=8, Xo=8, Yo=8];
      stack K += 8 repl 2147483647;
      stack C += 3 repl 2147483647;
      stack Xo += 8, Xi += 8 repl 2147483647;
    }
  }
}
""")
    rc, _, err = case.finishes(["check", "--allow-partial", "sched.dfl"], 30)
    if rc != 1 or not re.search(r"GBUF overflow in layer 'conv1': the tensors need at least .* \[E0801\]", err):
        raise Failure("no E0801 'at least' for the GBUF: " + case.last)
    # The REGF's units, (2^31 - 1)^3 = 9.9035e27, past 64 bits: counted, not wrapped (UBSan once saw it).
    if not re.search(r"stacks 9\.90[34]e\+27 units, but the array has 16 .*\[E0802\]", err):
        raise Failure("E0802 does not count (2^31 - 1)^3 units: " + case.last)


# --- Inputs that are not files ---------------------------------------------------------

def not_files(case):
    """A directory, a FIFO, /dev/zero and a 4 GiB (sparse) file as inputs: a diagnostic
    naming the path, never a blocking read or bad_alloc."""
    os.mkdir(case.path("adir.dfl"))
    os.mkfifo(case.path("fifo.dfl"))
    with open(case.path("huge.dfl"), "wb") as f:
        f.truncate(4 << 30)
    case.write("hw.dfl", HW)
    for p in ["adir.dfl", "fifo.dfl", "/dev/zero", "huge.dfl"]:
        case.diagnosed(["show", p], 10, mentions=re.escape(p))
        case.diagnosed(["check", p, "hw.dfl"], 10, mentions=re.escape(p))
    # The same through an import.
    case.write("imports_fifo.dfl", 'import "fifo.dfl";\n' + NET)
    case.diagnosed(["show", "imports_fifo.dfl"], 10, mentions="fifo.dfl")


def symlink_loop_import(case):
    """An import through a symlink loop: E0005 with the real reason, ELOOP (once "cannot
    find imported file", as if it did not exist)."""
    os.symlink("loop2.dfl", case.path("loop.dfl"))
    os.symlink("loop.dfl", case.path("loop2.dfl"))
    case.write("net.dfl", 'import "loop.dfl";\n' + NET)
    err = case.diagnosed(["show", "net.dfl"], 10, mentions="Too many levels of symbolic links")
    if "cannot find" in err:
        raise Failure("the loop is reported as a missing file: " + case.last)


def onnx_external_data(case):
    """ONNX external data: read beside the model from any working directory (once the
    working directory's file of that name); a location leaving the model's directory, a
    FIFO and a symlink to /dev/zero in its place are refused with E0113, never opened, never
    a blocking read."""
    models = case.path("models")
    subprocess.run([case.onnx_python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "onnx",
                                                   "make_external.py"), models], check=True)
    # A decoy where the working directory would have found it: Clip(-1, 1) would be refused.
    with open(case.path("bounds.bin"), "wb") as f:
        f.write(b"\x00\x00\x80\xbf\x00\x00\x80\x3f")
    rc, out, _ = case.finishes(["import", os.path.join("models", "relu6.onnx")], 20)
    if rc != 0 or "relu6(" not in out:
        raise Failure("the bounds beside the model were not read: " + case.last)
    for model in ["absolute", "parent", "missing", "past_end"]:
        case.diagnosed(["import", os.path.join("models", model + ".onnx")], 20, mentions=r"E0113")
    os.remove(os.path.join(models, "bounds.bin"))
    os.mkfifo(os.path.join(models, "bounds.bin"))
    case.diagnosed(["import", os.path.join("models", "relu6.onnx")], 10,
                   mentions=r"is a FIFO, not a regular file.*E0113")
    os.remove(os.path.join(models, "bounds.bin"))
    os.symlink("/dev/zero", os.path.join(models, "bounds.bin"))
    case.diagnosed(["import", os.path.join("models", "relu6.onnx")], 10,
                   mentions=r"is a character device, not a regular file.*E0113")


ONNX_FUSIONS = r"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out, n = sys.argv[1], int(sys.argv[2])
nodes, x = [], "x"
for i in range(n):   # a chain of x*Sigmoid(x), the Mul's operands in turn
    nodes.append(helper.make_node("Sigmoid", [x], ["s%d" % i], name="sig%d" % i))
    ins = [x, "s%d" % i] if i % 2 else ["s%d" % i, x]
    nodes.append(helper.make_node("Mul", ins, ["m%d" % i], name="mul%d" % i))
    x = "m%d" % i
nodes.append(helper.make_node("Sigmoid", [x], ["ss"], name="self_sig"))   # Mul(s, s): no SiLU
nodes.append(helper.make_node("Mul", ["ss", "ss"], ["sq"], name="self_mul"))
nodes.append(helper.make_node("Sigmoid", ["sq"], ["gs"], name="out_sig"))   # a graph output too: no SiLU
nodes.append(helper.make_node("Mul", ["sq", "gs"], ["y"], name="out_mul"))
io = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 4, 8, 8])
g = helper.make_graph(nodes, "chain", [io("x")], [io("y"), io("gs")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), out + "/chain.onnx")
# An Erf GELU dividing by NaN, by a row of 8 values, and by sqrt(2) from an int tensor (1): none fuses.
for name, value in (("nan", [float("nan")]), ("row", [1.4142135] * 8), ("int", None)):
    c = numpy_helper.from_array(np.array([1] if value is None else value,
                                         dtype=np.int64 if value is None else np.float32), "c")
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    half = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")
    nodes = [helper.make_node("Div", ["x", "c"], ["d"], name="div"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["a"], name="add"),
             helper.make_node("Mul", ["x", "a"], ["m"], name="mul"),
             helper.make_node("Mul", ["m", "half"], ["y"], name="mul_1")]
    g = helper.make_graph(nodes, "gelu", [io("x")], [io("y")], [c, one, half])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), out + "/gelu_%s.onnx" % name)
"""


def onnx_fusion_patterns(case):
    """The exporters' patterns (docs/onnx.md, "Fused patterns") on adversarial graphs: a
    chain of thousands of x*Sigmoid(x) fuses in linear time; Mul(s, s) and a Sigmoid that
    is also a graph output do not fuse; an Erf GELU whose divisor is NaN, a row of √2 or an
    integer is refused at the Erf, never fused."""
    n = 500 if case.small else 5000
    subprocess.run([case.onnx_python, "-c", ONNX_FUSIONS, case.dir, str(n)], check=True)
    rc, out, _ = case.finishes(["import", "chain.onnx"], 30)
    if rc != 0 or out.count(" = silu(") != n or out.count(" = sigmoid(") != 2 or out.count(" = mul(") != 2:
        raise Failure("expected %d silu, 2 sigmoid and 2 mul layers: %s" % (n, case.last))
    for name in ("nan", "row", "int"):
        case.diagnosed(["import", "gelu_%s.onnx" % name], 10,
                       mentions=r"node 'erf' \(Erf\): not supported \(no GELU pattern: the Div 'div' divides by")


ONNX_BROADCASTS = r"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out, n = sys.argv[1], int(sys.argv[2])
io = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
shape = numpy_helper.from_array(np.array([1, 4, 8, 8], dtype=np.int64), "shape")
# One Expand read by a chain of n Muls, in both operand orders.
nodes, y = [helper.make_node("Expand", ["s", "shape"], ["e"], name="expand")], "x"
for i in range(n):
    nodes.append(helper.make_node("Mul", [y, "e"] if i % 2 else ["e", y], ["m%d" % i], name="mul%d" % i))
    y = "m%d" % i
g = helper.make_graph(nodes, "fan", [io("x", [1, 4, 8, 8]), io("s", [1, 4, 1, 1])], [io(y, [1, 4, 8, 8])], [shape])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), out + "/fan.onnx")
# An Expand of an Expand, and an Expand that is a graph output: neither folds.
nodes = [helper.make_node("Expand", ["s", "shape"], ["e1"], name="outer"),
         helper.make_node("Expand", ["e1", "shape"], ["e2"], name="inner"),
         helper.make_node("Mul", ["x", "e2"], ["y"], name="mul")]
g = helper.make_graph(nodes, "nested", [io("x", [1, 4, 8, 8]), io("s", [1, 4, 1, 1])], [io("y", [1, 4, 8, 8])], [shape])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), out + "/nested.onnx")
nodes = [helper.make_node("Expand", ["s", "shape"], ["e"], name="exported"),
         helper.make_node("Mul", ["x", "e"], ["y"], name="mul")]
g = helper.make_graph(nodes, "output", [io("x", [1, 4, 8, 8]), io("s", [1, 4, 1, 1])],
                      [io("y", [1, 4, 8, 8]), io("e", [1, 4, 8, 8])], [shape])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), out + "/output.onnx")
"""


def gqa_groups(case):
    """Grouped-query attention at the extremes: 4,096 query heads sharing one K/V head
    (a group member dim of 4,096, the nest's output row) solves within the budget or is
    refused; kv_heads of 2^31 - 1 or one not dividing the heads is E0304 at the layer."""
    case.write("net.dfl", """network g {
  input q [C=4096, X=2];
  input k [C=1, X=2];
  s = matmul(q, k, heads=4096, kv_heads=1);
}
""")
    case.write("hw.dfl", HW)
    rc, _, _ = case.finishes(["net.dfl", "hw.dfl", "-o", "out", "--time-limit", "20"], 60)
    if rc == 0:
        finite_report(case, case.path("out", "report.json"))
    case.write("bad.dfl", """network b {
  input q [C=16, X=2];
  input k [C=8, X=2];
  s = matmul(q, k, heads=4, kv_heads=2147483647);
  t = matmul(q, k, heads=4, kv_heads=3);
}
""")
    case.diagnosed(["show", "bad.dfl"], 10, mentions=r"kv_heads=2147483647 must divide heads=4 \[E0304\]")


def onnx_broadcasts(case):
    """Broadcast Mul through Expand (docs/onnx.md) on adversarial graphs: one Expand read by
    thousands of Muls folds in linear time into as many broadcast muls; an Expand of an
    Expand, and an Expand that is a graph output, are refused at that Expand."""
    n = 500 if case.small else 5000
    subprocess.run([case.onnx_python, "-c", ONNX_BROADCASTS, case.dir, str(n)], check=True)
    rc, out, _ = case.finishes(["import", "fan.onnx"], 30)
    if rc != 0 or out.count(" = mul(") != n:
        raise Failure("expected %d mul layers: %s" % (n, case.last))
    case.diagnosed(["import", "nested.onnx"], 10, mentions=r"node 'outer' \(Expand\): an Expand is folded only")
    case.diagnosed(["import", "output.onnx"], 10, mentions=r"node 'exported' \(Expand\): an Expand is folded only")


ONNX_RMSNORMS = r"""
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out, n = sys.argv[1], int(sys.argv[2])
consts = [numpy_helper.from_array(np.array(v, dtype=np.float32), name)
          for name, v in (("two", 2.0), ("eps", 1e-6), ("nan", float("nan")), ("one", 1.0))]
def rms(nodes, x, p, eps="eps", axes=(-1,), out=None):
    nodes += [helper.make_node("Pow", [x, "two"], [p + "p"], name=p + "pow"),
              helper.make_node("ReduceMean", [p + "p"], [p + "r"], name=p + "mean", axes=list(axes)),
              helper.make_node("Add", [p + "r", eps], [p + "a"], name=p + "add"),
              helper.make_node("Sqrt", [p + "a"], [p + "s"], name=p + "sqrt"),
              helper.make_node("Div", [x, p + "s"], [out or p + "y"], name=p + "div")]
    return out or p + "y"
io = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 16, 8])
nodes, x = [], "x"
for i in range(n):   # a chain of RMSNorms, each normalizing the last
    x = rms(nodes, x, "n%d_" % i)
rms(nodes, x, "last_", out="y")
g = helper.make_graph(nodes, "chain", [io("x")], [io("y")], consts)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), out + "/chain.onnx")
# An epsilon of NaN, a mean over two axes, a mean square that is a graph output too: none fuses.
for name, kw, outs in (("nan", {"eps": "nan"}, []), ("axes", {"axes": (1, 2)}, []), ("shared", {}, ["m_r"])):
    nodes = []
    rms(nodes, "x", "m_", out="y", **kw)
    outputs = [io("y")] + [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs]
    g = helper.make_graph(nodes, "rms", [io("x")], outputs, consts)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), out + "/rms_%s.onnx" % name)
"""


def onnx_rmsnorm_patterns(case):
    """torch.onnx's RMSNorm (docs/onnx.md, "Fused patterns") on adversarial graphs: a chain
    of thousands fuses in linear time; an epsilon of NaN, a mean over two axes and a mean
    square that is also a graph output do not fuse: the Pow is refused with why."""
    n = 500 if case.small else 5000
    subprocess.run([case.onnx_python, "-c", ONNX_RMSNORMS, case.dir, str(n)], check=True)
    rc, out, _ = case.finishes(["import", "chain.onnx"], 30)
    if rc != 0 or out.count(" = rmsnorm(") != n + 1:
        raise Failure("expected %d rmsnorm layers: %s" % (n + 1, case.last))
    for name in ("nan", "axes", "shared"):
        case.diagnosed(["import", "rms_%s.onnx" % name], 10,
                       mentions=r"node 'm_pow' \(Pow\): not supported \(no RMSNorm pattern: ")


def dsa_limits_stated(case):
    """`cores = 0` on a DSA: the diagnostic states the real range, 1 to 1024 (once 10^9)."""
    case.write("dsa.dfl", "hardware d { word = 16 bit; frequency = 1 GHz;\n"
               "  cluster { count = 1; cores = 0; gb = 1 MiB; gb_bandwidth = 16 B/cycle; }\n"
               "  core { lb = 4 KiB; }\n  unit m { kind = matrix; rate = 8; }\n"
               "  unit v { kind = vector; rate = 8; }\n  ddr { bandwidth = 10 GB/s; }\n}\n")
    case.diagnosed(["show", "dsa.dfl"], 10, mentions=r"'cores' must be from 1 to 1024, got 0")


def schedule_other_network(case):
    """`dflc other.dfl hw.dfl sched.dfl` where the schedule is for another network: E0828,
    nothing written (once the schedule's network compiled, other.dfl silently unused)."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    case.write("other.dfl", NET.replace("network tiny", "network other"))
    case.write("sched.dfl", 'import "net.dfl";\nimport "hw.dfl";\nschedule for tiny on tinyhw {\n}\n')
    case.diagnosed(["other.dfl", "hw.dfl", "sched.dfl", "-o", "out", "--time-limit", "20"], 60,
                   mentions=r"network 'other'.*E0828")
    if os.path.exists(case.path("out")):
        raise Failure("out/ was written: %s" % files_under(case.path("out")))


# --- Outputs ------------------------------------------------------------------------------

def listing(d):
    return sorted(os.listdir(d))


def files_under(d):
    """Every file below d (OUT/plots/... included), as paths relative to d."""
    return sorted(os.path.relpath(os.path.join(root, n), d) for root, _, names in os.walk(d) for n in names)


def timeloop_export_names(case):
    """`dflc export --timeloop NAME OUT` with a NAME that is a path (it names the file written,
    OUT/timeloop/NAME.yaml): no such layer, E1501, and nothing written anywhere."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    case.write("out/schedule.dfl", 'import "../net.dfl";\nimport "../hw.dfl";\nschedule for tiny on tinyhw {\n}\n')
    before = files_under(case.dir)
    for name in ["../PWNED", "/tmp/PWNED", "a/b", "conv1/../../PWNED", "conv1\n"]:
        case.diagnosed(["export", "--timeloop", name, "out"], 30, mentions=r"\[E1501\]")
    if files_under(case.dir) != before or os.path.exists("/tmp/PWNED.yaml"):
        raise Failure("export wrote %s" % sorted(set(files_under(case.dir)) - set(before)))


def output_is_directory(case):
    """OUT/report.json is a directory: exit 1, the previous schedule.dfl untouched, no
    temporary left (once exit 0, "wrote", one file replaced and a temporary left)."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    case.write("out/schedule.dfl", "// previous\n")
    os.mkdir(case.path("out", "report.json"))
    rc, out, err = case.run(["net.dfl", "hw.dfl", "-o", "out"], 60)
    if rc == 0 or "wrote" in out + err:
        raise Failure("an unwritable output was not reported: " + case.last)
    if open(case.path("out", "schedule.dfl")).read() != "// previous\n":
        raise Failure("the previous schedule.dfl was replaced")
    if listing(case.path("out")) != ["report.json", "schedule.dfl"]:
        raise Failure("left behind in out/: %s" % listing(case.path("out")))


def planted_symlinks(case):
    """Symlinks planted in OUT at every name dflc might write: no file outside OUT changes."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    victim = case.write("victim.txt", "keep me\n")
    os.mkdir(case.path("out"))
    names = ["schedule.dfl.dflc-tmp-%d" % pid for pid in range(1, 1 << 16, 97)]
    for n in names:
        os.symlink(victim, case.path("out", n))
    case.finishes(["net.dfl", "hw.dfl", "-o", "out", "--time-limit", "20"], 60)
    if open(victim).read() != "keep me\n":
        raise Failure("a planted symlink was followed: victim.txt changed")


def snapshot(d):
    """Every entry below d, with a file's text and a link's target: what must not change."""
    out = {}
    for root, dirs, names in os.walk(d):
        for n in dirs + names:
            p = os.path.join(root, n)
            out[os.path.relpath(p, d)] = (os.readlink(p) if os.path.islink(p) else
                                          open(p, "rb").read() if os.path.isfile(p) else "dir")
    return out


def planted_output_entries(case):
    """A symbolic link at OUT/plots, OUT/kernels (sim), OUT/lcu (a CM chip), OUT/trace.json
    (a CM chip's run), OUT/points (sweep), OUT/report.json, OUT/report.html or OUT/schedule.dfl, and a FIFO at
    OUT/report.json or OUT/report.html (once the
    links were followed and the files behind them overwritten, exit 0): exit 1 with a
    diagnostic naming the entry, nothing outside OUT changed, no output written."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    case.write("outside/victim.txt", "keep me\n")
    case.write("outside/plots/energy.svg", "keep me\n")
    case.write("spec.json", json.dumps({"hardware": os.path.abspath(case.path("hw.dfl")),
                                        "networks": [os.path.abspath(case.path("net.dfl"))],
                                        "set": {"GBUF.capacity": ["16 KiB"]}, "time_limit": 20}))
    # A complete schedule to simulate: the compile's own.
    case.finishes(["net.dfl", "hw.dfl", "-o", "sched", "--time-limit", "20"], 60)
    compile_ = ["net.dfl", "hw.dfl", "-o", "out", "--time-limit", "20"]
    cm_inputs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lit", "cm", "Inputs")
    cm = [os.path.join(cm_inputs, "fig2.dfl"), os.path.join(cm_inputs, "mesh.dfl"), "-o", "out"]   # 3 LCUs
    outside = case.path("outside")
    for name, target, argv in [
        ("plots", outside, compile_),
        ("report.json", os.path.join(outside, "victim.txt"), compile_),
        ("schedule.dfl", os.path.join(outside, "victim.txt"), compile_),
        ("report.json", None, compile_),   # a FIFO
        ("report.html", os.path.join(outside, "victim.txt"), compile_),
        ("report.html", None, compile_),   # a FIFO
        ("kernels", outside, ["sim", "sched/schedule.dfl", "-o", "out"]),
        ("lcu", outside, cm),
        ("trace.json", os.path.join(outside, "victim.txt"), ["sim"] + cm),
        ("points", outside, ["sweep", "spec.json", "-o", "out", "--jobs", "1"]),
    ]:
        before = snapshot(outside)
        shutil.rmtree(case.path("out"), ignore_errors=True)
        os.mkdir(case.path("out"))
        if target:
            os.symlink(target, case.path("out", name))
        else:
            os.mkfifo(case.path("out", name))
        case.diagnosed(argv, 120, mentions=re.escape(os.path.join("out", name)) + r"': is a (symbolic link|FIFO), not a")
        if snapshot(outside) != before:
            raise Failure("a file outside OUT changed (%s planted at out/%s): %s" % (
                "a link" if target else "a FIFO", name, case.last))
        if listing(case.path("out")) != [name]:
            raise Failure("left in out/ beside %s: %s" % (name, listing(case.path("out"))))


def odd_input_names(case):
    """Input names with a quote, a backslash and a line break: the written schedule imports
    them by escaped paths and re-checks."""
    net = case.write('n"e\\t\nx.dfl', NET)
    hw = case.write("h'w \\\".dfl", HW)
    case.finishes([os.path.basename(net), os.path.basename(hw), "-o", "out", "--time-limit", "20"], 60)
    rc, _, _ = case.run(["check", "out/schedule.dfl"], 30)
    if rc != 0:
        raise Failure("the written schedule does not re-check: " + case.last)


def html_in_input_paths(case):
    """Inputs under a directory named like markup (`<script>alert(1)</script>`, `&`, a
    quote): report.html shows the paths as text, escaped, and holds no script but its
    own (DFL names are identifiers, so a path is the user string that reaches the page)."""
    hostile = '<script>alert(1)</script>&"x'
    case.write(os.path.join(hostile, "net.dfl"), NET)
    case.write(os.path.join(hostile, "hw.dfl"), HW)
    rc, _, _ = case.finishes([os.path.join(hostile, "net.dfl"), os.path.join(hostile, "hw.dfl"), "-o", "out",
                              "--time-limit", "20"], 60)
    if rc != 0:
        raise Failure("the compile failed: " + case.last)
    page = open(case.path("out", "report.html"), encoding="utf-8").read()
    if "alert(1)</script>" in page or '&"x' in page:
        raise Failure("report.html holds the path unescaped: " + case.last)
    if "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;x/net.dfl" not in page:
        raise Failure("report.html does not show the escaped input path: " + case.last)
    if page.count("<script") != 1:
        raise Failure("report.html holds %d scripts, not its one" % page.count("<script"))


def output_over_input(case):
    """-o DIR where DIR/schedule.dfl is the input schedule: refused, the input untouched."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    sched = case.write("schedule.dfl", 'import "net.dfl";\nimport "hw.dfl";\nschedule for tiny on tinyhw {\n}\n')
    before = open(sched).read()
    case.diagnosed(["net.dfl", "hw.dfl", "schedule.dfl", "-o", ".", "--time-limit", "20"], 60,
                   mentions="schedule.dfl")
    if open(sched).read() != before:
        raise Failure("the input schedule was overwritten")


def fmt_through_symlink(case):
    """`fmt -i` on a symlink formats the real file, keeps the link and the file's mode."""
    real = case.write("real.dfl", NET.replace("  conv1", "conv1"))
    os.chmod(real, 0o640)
    os.symlink("real.dfl", case.path("link.dfl"))
    case.finishes(["fmt", "-i", "link.dfl"], 20)
    if not os.path.islink(case.path("link.dfl")):
        raise Failure("fmt -i replaced the symlink with a file")
    if stat.S_IMODE(os.stat(real).st_mode) != 0o640:
        raise Failure("fmt -i changed the mode to %o" % stat.S_IMODE(os.stat(real).st_mode))
    rc, _, _ = case.run(["fmt", "--check", "real.dfl"], 20)
    if rc != 0:
        raise Failure("the real file was not formatted: " + case.last)


# --- Determinism -----------------------------------------------------------------------------

def determinism(case):
    """Two runs of every solver on the same input write byte-identical outputs. (--small:
    one small fc on a 2 x 2 array; the full exhaustive search takes minutes under ASan.)"""
    if case.small:
        case.write("net.dfl", "network tiny {\n  batch N = 2;\n  input image [C=2, X=4, Y=4];\n"
                              "  fc1 = fc(image, K=4);\n}\n")
        case.write("hw.dfl", HW.replace("array = 4 x 4", "array = 2 x 2"))
    else:
        case.write("net.dfl", NET)
        case.write("hw.dfl", HW)
    for solver in ["kapla", "exhaustive", "random"]:
        outs = []
        for run in range(2):
            d = "%s%d" % (solver, run)
            rc, _, _ = case.run(["net.dfl", "hw.dfl", "-o", d, "--solver", solver, "--time-limit", "none"], 120)
            if rc != 0:
                raise Failure("no schedule to compare: " + case.last)
            outs.append({n: open(case.path(d, n), "rb").read() for n in files_under(case.path(d))})
        if outs[0] != outs[1]:
            diff = [n for n in outs[0] if outs[0][n] != outs[1].get(n)]
            raise Failure("--solver %s wrote different bytes on two runs: %s" % (solver, diff))


# --- Sweeps: Slurm, GNU parallel and the files a sweep reads back ---------------------------

SWEEP = {"hardware": "hw.dfl", "networks": "net.dfl", "set": {"GBUF.capacity": ["16 KiB", "32 KiB"]},
         "time_limit": 20}
INJECT = "'$(touch PWNED)'"   # ran when a path was put in single quotes unescaped

# sbatch's stand-in: runs each job at once, as Slurm would (--wrap through `sh -c`, a script
# with bash, once per --array index, in the directory it is submitted from), prints a job id.
FAKE_SBATCH = r"""#!/usr/bin/env python3
import os, re, subprocess, sys
state = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs")
job = 1 + (len(open(state).read().split()) if os.path.exists(state) else 0)
with open(state, "a") as f:
    f.write("%d\n" % job)
opts, args = {}, sys.argv[1:]
while args and args[0].startswith("-"):
    k, _, v = args.pop(0).partition("=")
    opts[k] = v
if args:   # the script's #SBATCH lines; the command line wins
    for line in open(args[0]):
        m = re.match(r"#SBATCH\s+(\S+)", line)
        if m:
            k, _, v = m.group(1).partition("=")
            opts.setdefault(k, v)
tasks = [None]
if "--array" in opts:
    lo, hi = opts["--array"].split("-")
    tasks = list(range(int(lo), int(hi) + 1))
for t in tasks:
    env = dict(os.environ, SLURM_JOB_ID=str(job))
    if t is not None:
        env.update(SLURM_ARRAY_JOB_ID=str(job), SLURM_ARRAY_TASK_ID=str(t))
    out = opts.get("--output", "slurm-%j.out").replace("%A", str(job)).replace("%a", str(t)).replace("%j", str(job))
    cmd = ["sh", "-c", opts["--wrap"]] if "--wrap" in opts else ["bash"] + args
    with open(out, "w") as f:
        subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT)
print(job if "--parsable" in opts else "Submitted batch job %d" % job)
"""


def sweep_inputs(case, where="."):
    """NET and HW beside the case's spec, SWEEP, written in WHERE; the spec's path."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    os.makedirs(case.path(where), exist_ok=True)
    spec = dict(SWEEP, hardware=case.path("hw.dfl"), networks=case.path("net.dfl"))
    return case.write(os.path.join(where, "spec.json"), json.dumps(spec))


def no_command_ran(case):
    for root, _, names in os.walk(case.dir):
        if "PWNED" in names:
            raise Failure("a command in a path ran (%s): %s" % (os.path.join(root, "PWNED"), case.last))


def merged(case, out, points):
    """OUT/sweep.json counts POINTS points, all finished."""
    try:
        j = json.load(open(os.path.join(case.dir, out, "sweep.json")))
    except OSError as e:
        raise Failure("no merged table in %r (%s): %s" % (out, e, case.last))
    if (j["points"], j["finished"]) != (points, points):
        raise Failure("%r merged %d of %d points, not %d: %s" % (out, j["finished"], j["points"], points, case.last))


def sweep_slurm_injection(case):
    """OUT, the spec's directory and an -I dir holding a quote and a command substitution (OUT
    also a line break), through --slurm --submit with an sbatch that runs --wrap with sh -c
    (the merge job once ran `--wrap=exec 'dflc' sweep --merge 'OUT'`): no command runs, no path
    is in the job scripts, the slices and the merge land in OUT."""
    spec = sweep_inputs(case, "s" + INJECT)
    inc = case.path("i" + INJECT)
    os.mkdir(inc)
    sbatch = case.write("bin/sbatch", FAKE_SBATCH)
    os.chmod(sbatch, 0o755)
    env = dict(os.environ, PATH=case.path("bin") + os.pathsep + os.environ.get("PATH", ""))
    for out in ["o" + INJECT, "o\n" + INJECT]:
        rc, _, _ = case.run(["sweep", spec, "-o", out, "-I", inc, "--slurm", "--submit", "--tasks", "2"], 120, env=env)
        no_command_ran(case)
        if rc != 0:
            raise Failure("the sweep was not submitted: " + case.last)
        merged(case, out, 2)
        for script in ["sweep.sbatch", "merge.sbatch"]:
            if "PWNED" in open(case.path(out, script)).read():
                raise Failure("a path is written in %s: %s" % (script, case.last))


def sweep_sbatch_line_break(case):
    """--sbatch-option with a line break would add a line of the user's choosing to the job
    script: E1007, and nothing written."""
    spec = sweep_inputs(case)
    case.diagnosed(["sweep", spec, "-o", "out", "--slurm", "--sbatch-option", "--time=10\ntouch PWNED"], 30,
                   mentions=r"\[E1007\]")
    if os.path.exists(case.path("out")):
        raise Failure("OUT was written: %s" % files_under(case.path("out")))


def sweep_parallel_injection(case):
    """GNU parallel's replacement strings ({}, {1}, {=perl=}) in OUT, the spec's directory and an
    -I dir (they once sent the slices to x_0_out and x_1_out, or ran the Perl): parallel
    expands none, no command runs, the slices land in OUT."""
    if not shutil.which("parallel"):
        raise Failure("GNU parallel is not installed (scripts/install-deps.sh)")
    spec = sweep_inputs(case, "s{1}{}")
    inc = case.path('i{=system("touch PWNED")=}')
    os.mkdir(inc)
    for out in ["x_{1}_out", 'x_{=system("touch PWNED")=}', "x_{}" + INJECT + "\n"]:
        before = listing(case.dir)
        rc, _, _ = case.run(["sweep", spec, "-o", out, "-I", inc, "--parallel", ":", "--tasks", "2"], 120)
        no_command_ran(case)
        if rc != 0:
            raise Failure("the sweep through GNU parallel failed: " + case.last)
        merged(case, out, 2)
        made = sorted(set(listing(case.dir)) - set(before))
        if made != [out]:
            raise Failure("the sweep made %s, not only %r" % (made, out))


def sweep_point_count(case):
    """A spec of 10^8 points (once 40 s and bad_alloc): E1005 with the count, up front."""
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    case.write("big.json", json.dumps({"hardware": "hw.dfl", "networks": "net.dfl", "set": {
        "GBUF.capacity": ["%d KiB" % (i + 1) for i in range(10000)],
        "DRAM.bandwidth": ["%d GB/s" % (i + 1) for i in range(10000)]}}))
    case.diagnosed(["sweep", "big.json", "-o", "out"], 10, mentions=r"100000000 points.*\[E1005\]")
    if os.path.exists(case.path("out")):
        raise Failure("OUT was written")


def sweep_spec_json(case):
    """Spec keys as JSON may write them: escaped (once map::at) and after a UTF-8 BOM, read as
    JSON reads them; a repeated key, 10^5 nested brackets and a `set` key with '/' and '~'
    are located diagnostics."""
    sweep_inputs(case)
    case.write("escaped.json", '\ufeff{"hardw\\u0061re": "hw.dfl", "n\\u0065tworks": "net.dfl", '
                               '"set": {"GBUF.c\\u0061pacity": ["16 KiB"]}, "time_limit": 20}')
    rc, out, _ = case.run(["sweep", "escaped.json", "-o", "out"], 120)
    if rc != 0 or "sweep: 1 of 1 points finished" not in out:
        raise Failure("the escaped spec did not run: " + case.last)
    case.write("twice.json", '{"hardware": "hw.dfl", "networks": "net.dfl", "hardware": "net.dfl"}')
    case.diagnosed(["sweep", "twice.json", "-o", "out2"], 10, mentions=r"twice.json:1:\d+: .*twice")
    case.write("deep.json", '{"hardware": "hw.dfl", "networks": "net.dfl", "set": ' + "[" * 100000 + "]" * 100000 + "}")
    case.diagnosed(["sweep", "deep.json", "-o", "out2"], 10, mentions=r"deep.json:1:\d+: .*nested")
    case.write("slash.json", '{"hardware": "hw.dfl", "networks": "net.dfl", "set": {"GBUF/x~1.capacity": ["1 KiB"]}}')
    case.diagnosed(["sweep", "slash.json", "-o", "out2"], 30, mentions=r"slash.json:1:\d+: ")
    if os.path.exists(case.path("out2")):
        raise Failure("OUT was written for a bad spec")


def sweep_bad_records(case):
    """What a sweep reads back from OUT, planted: wrong JSON types (once type_error.302), ids
    that are paths, another point's result, a FIFO and /dev/zero at a point's file and at
    spec.json. `--merge` and a resume each give a located diagnostic in bounded time."""
    spec = sweep_inputs(case)
    rc, _, _ = case.run(["sweep", spec, "-o", "good"], 120)
    if rc != 0:
        raise Failure("no sweep to corrupt: " + case.last)
    points = sorted(os.listdir(case.path("good", "points")))
    record = json.load(open(case.path("good", "spec.json")))

    def point(i, **change):
        def plant(d):
            p = os.path.join(d, "points", points[i])
            j = json.load(open(p))
            j.update(change)
            with open(p, "w") as f:
                json.dump(j, f)
        return plant

    def replace(name, how):
        def plant(d):
            p = os.path.join(d, name)
            os.remove(p)
            how(p)
        return plant

    def spec_json(**change):
        def plant(d):
            with open(os.path.join(d, "spec.json"), "w") as f:
                json.dump(dict(record, **change), f)
        return plant

    def swapped(d):
        a, b = (os.path.join(d, "points", n) for n in points)
        os.rename(a, a + ".tmp")
        os.rename(b, a)
        os.rename(a + ".tmp", b)

    plants = {
        "energy as text": point(0, energy_pj="x"),
        "settings as numbers": point(0, settings={"GBUF.capacity": 3}),
        "a list": replace(os.path.join("points", points[0]), lambda p: open(p, "w").write("[]")),
        "a FIFO point": replace(os.path.join("points", points[0]), os.mkfifo),
        "/dev/zero point": replace(os.path.join("points", points[1]), lambda p: os.symlink("/dev/zero", p)),
        "swapped points": swapped,
        "ids as numbers": spec_json(points=[1, 2]),
        "an id that is a path": spec_json(points=["/".join([".."] * 6 + ["etc", "passwd"]), record["points"][1]]),
        "spec as a number": spec_json(spec=3),
        "a FIFO spec.json": replace("spec.json", os.mkfifo),
        "/dev/zero spec.json": replace("spec.json", lambda p: os.symlink("/dev/zero", p)),
    }
    for n, (what, plant) in enumerate(plants.items()):
        d = "bad%d" % n
        shutil.copytree(case.path("good"), case.path(d))
        plant(case.path(d))
        for argv in (["sweep", "--merge", d], ["sweep", spec, "-o", d]):
            err = case.diagnosed(argv, 30, mentions=r"\[E(0005|1006)\]")
            if "spec.json" not in err and "points/" not in err:
                raise Failure("%s: the diagnostic names no file of OUT: %s" % (what, case.last))


# --- Bounded work: plots, word widths, the simulator, ONNX values (issue 33) ------------------

TPU_HW = """hardware tpu {
  word = 8 bit;
  frequency = 700 MHz;
  mac { energy = 0.2 pJ; }
  level PE { capacity = 4 B; array = 256 x 256; access_energy = 0.05 pJ; transfer = multicast, systolic; }
  level UB { capacity = 24 MiB; access_energy = 2 pJ; bandwidth = 256 B/cycle; }
  level DRAM { access_energy = 100 pJ; bandwidth = 30 GB/s; }
  pipeline { temporal = true; spatial = false; }
}
"""
TWO_BRANCH = """network two_branch {
  batch N = 1;
  input x [C=256, X=14, Y=14];
  a = conv(x, K=256, R=1);
  b = conv(x, K=256, R=1);
  y = add(a, b);
}
"""


def tradeoff_plot_ulps(case):
    """A TPU-like template (256 x 256 systolic array, 24 MiB buffer, 8-bit words) and a
    two-branch 1x1 conv network: chains whose latencies differ by a few ULPs once kept
    the trade-off plot's tick loop from advancing (bad_alloc after minutes and ~17 GB).
    Every axis has at most 64 ticks; --no-plots writes no plots/."""
    case.write("net.dfl", TWO_BRANCH)
    case.write("hw.dfl", TPU_HW)
    rc, _, _ = case.run(["net.dfl", "hw.dfl", "-o", "out", "--pareto", "--time-limit", "30"], 90)
    if rc != 0:
        raise Failure("no schedule: " + case.last)
    for name in files_under(case.path("out", "plots")):
        svg = open(case.path("out", "plots", name)).read()
        if len(svg) > 1 << 20 or svg.count("stroke=\"#ddd\"") > 4 * 64:
            raise Failure("plots/%s has %d bytes" % (name, len(svg)))
    rc, _, _ = case.run(["net.dfl", "hw.dfl", "-o", "bare", "--no-plots", "--time-limit", "30"], 90)
    if rc != 0 or os.path.exists(case.path("bare", "plots")):
        raise Failure("--no-plots wrote plots/: " + case.last)
    if json.load(open(case.path("bare", "report.json")))["plots"] != []:
        raise Failure("--no-plots: report.json lists plots")


def fractional_words(case):
    """`word = 0.4 bit` once rounded to 0 bits (SIGFPE in Hardware::bytesOf), and
    `word { wgt = 0.4 bit; }` made weights free: word widths are whole bits from 1."""
    case.write("net.dfl", NET)
    for name, hw in [("word", HW.replace("word = 16 bit;", "word = 0.4 bit;")),
                     ("wgt", HW.replace("word = 16 bit;", "word = 16 bit; word { wgt = 0.4 bit; }")),
                     ("bytes", HW.replace("word = 16 bit;", "word = 0.1 B;"))]:
        case.write(name + ".dfl", hw)
        err = case.diagnosed(["net.dfl", name + ".dfl", "-o", name, "--time-limit", "20"], 30,
                             mentions=r"whole number of bits from 1 to 512.*\[E0404\]")
        if not re.search(r"%s\.dfl:\d+:\d+: error:" % name, err):
            raise Failure("the diagnostic has no location: " + case.last)
        if os.path.exists(case.path(name)):
            raise Failure("%s/ was written" % name)


def concat_operands(n):
    return ("network wide {\n  batch N = 1;\n  input x [C=1, X=2, Y=2];\n  y = concat(%s);\n}\n"
            % ", ".join(["x"] * n))


def sim_many_operands(case):
    """`dflc sim` on a concatenation of many operands: 1,000 once ran past 150 s and
    20,000 overflowed the code generator's stack (SIGSEGV); the kernel reads them through
    a table. 200,000 pass the work bound alone: a whole run leaves the layer out (W1308)
    before anything runs."""
    case.write("hw.dfl", HW)
    sizes = [1000, 20000] if not case.small else [1000]
    for n in sizes:
        case.write("net%d.dfl" % n, concat_operands(n))
        rc, out, _ = case.run(["net%d.dfl" % n, "hw.dfl", "-o", "out%d" % n, "--sim", "--time-limit", "20"], 240)
        if rc != 0 or "1 of 1 layers simulated equal the reference" not in out:
            raise Failure("the concatenation of %d operands does not simulate equal: %s" % (n, case.last))
    case.write("net200k.dfl", concat_operands(200000))
    rc, out, err = case.run(["net200k.dfl", "hw.dfl", "-o", "out200k", "--sim", "--time-limit", "20"], 240)
    if rc != 0 or not re.search(r"layer 'y' alone would take \d+ points of work.*\[W1308\]", err) \
            or "0 of 0 layers simulated" not in out:
        raise Failure("the concatenation of 200000 operands was not left out for its work: %s" % case.last)


def sim_huge_work(case):
    """A 1.1 TMAC layer (33 x 33 filters, 512 channels in and out, a 64 x 64 plane) was
    simulated with no bound: a whole run leaves it out (W1308 with the numbers), chosen
    with --layers it is E1307, before any kernel runs."""
    case.write("net.dfl", "network big {\n  batch N = 1;\n  input x [C=512, X=64, Y=64];\n"
                          "  l = conv(x, K=512, R=33, pad=16);\n}\n")
    case.write("hw.dfl", TPU_HW)
    # 512 * 512 * 64 * 64 * 33 * 33 = 1,169,304,846,336 points, twice (reference and kernel).
    rc, out, err = case.run(["net.dfl", "hw.dfl", "-o", "out", "--sim", "--time-limit", "20"], 90)
    if rc != 0 or not re.search(r"take 2338609692672 points of work .* more than the 68719476736 .*\[W1308\]", err) \
            or "l                     skipped: past the work bound alone" not in out:
        raise Failure("the layer was not left out for its work: %s" % case.last)
    case.diagnosed(["sim", "out/schedule.dfl", "--layers", "l", "-o", "again"], 90,
                   mentions=r"takes 2338609692672 points of work .* more than the 68719476736 .*\[E1307\]")
    if os.path.exists(case.path("again")):
        raise Failure("again/ was written")


def protobuf(fields):
    """Protocol-buffer bytes of FIELDS, (number, value) pairs: an int is a varint,
    bytes or str a length-delimited field (a nested message is its bytes)."""
    def varint(v):
        out = b""
        v &= (1 << 64) - 1
        while True:
            out += bytes([(v & 0x7f) | (0x80 if v > 0x7f else 0)])
            v >>= 7
            if not v:
                return out
    out = b""
    for number, value in fields:
        if isinstance(value, int):
            out += varint(number << 3) + varint(value)
        else:
            value = value.encode() if isinstance(value, str) else value
            out += varint(number << 3 | 2) + varint(len(value)) + value
    return out


def onnx_add(batch):
    """An ONNX model (onnx.proto field numbers), written without python3-onnx: one
    Add of a float input x [BATCH, 4, 8, 8] to itself, opset 13."""
    def value_info(name):
        shape = protobuf([(1, protobuf([(1, d)])) for d in (batch, 4, 8, 8)])
        return protobuf([(1, name), (2, protobuf([(1, protobuf([(1, 1), (2, shape)]))]))])
    node = protobuf([(1, "x"), (1, "x"), (2, "y"), (3, "twice"), (4, "Add")])
    graph = protobuf([(1, node), (2, "g"), (11, value_info("x")), (12, value_info("y"))])
    return protobuf([(1, 8), (7, graph), (8, protobuf([(1, ""), (2, 13)]))])


def onnx_huge_batch(case):
    """An ONNX input batch of 2^62 once became DFL text that does not parse (an
    internal error): E0110 naming the input; 2^31 - 1, the largest DFL integer, imports."""
    with open(case.path("big.onnx"), "wb") as f:
        f.write(onnx_add(1 << 62))
    case.diagnosed(["import", "big.onnx", "-o", "big.dfl"], 30,
                   mentions=r"big\.onnx: error: .*input 'x': its batch 4611686018427387904 is not from 1 to "
                            r"2147483647.*\[E0110\]")
    if os.path.exists(case.path("big.dfl")):
        raise Failure("big.dfl was written")
    with open(case.path("largest.onnx"), "wb") as f:
        f.write(onnx_add((1 << 31) - 1))
    rc, _, _ = case.run(["import", "largest.onnx", "-o", "largest.dfl"], 30)
    if rc != 0 or "batch N = 2147483647;" not in open(case.path("largest.dfl")).read():
        raise Failure("a batch of 2^31 - 1 does not import: " + case.last)


# --- Constraint searches: bounded by work, their models by size ------------------------------

MBCONV = """network mb {
  input x [C=16, X=14, Y=14];
  expand = conv(x, K=96, R=1);
  dw = dwconv(expand, R=3, S=3, pad=1);
  project = conv(dw, K=24, R=1);
}
"""


def embed_large_intrinsic(case):
    """A 256 x 256 x 1 GEMM and a 1 x 256 x 256 one (65,536 operations, inside the
    operation cap) on a small MBConv block: once 29 s and 9.7 GB, then "the solver's
    integer range", and 24 GB. Now the model's size is counted first: E0702 with the
    count and the limit, at once."""
    case.write("net.dfl", MBCONV)
    case.write("in.dfl", "intrinsic wide (i=256, j=256, k=1) { c[i, j] += a[i, k] * b[j, k]; }\n"
                         "intrinsic deep (i=1, j=256, k=256) { c[i, j] += a[i, k] * b[j, k]; }\n")
    rc, out, err = case.run_measured(["embed", "net.dfl", "in.dfl"], 30, 1024)
    if rc != 1 or "E0702" not in err or "constraint model would have" not in err:
        raise Failure("expected E0702 naming the model's size: " + case.last)
    if "integer range" in err:
        raise Failure("a size refusal blamed on the integer range: " + case.last)
    # In a compile the layers are scheduled without the intrinsic, the report saying why.
    case.write("hw.dfl", 'import "in.dfl";\n' + HW.replace("array = 4 x 4; access_energy = 0.1 pJ;",
                                                          "array = 256 x 256; access_energy = 0.1 pJ; intrinsic = deep;"))
    rc, out, err = case.run_measured(["net.dfl", "hw.dfl", "-o", "out", "--time-limit", "60"], 120, 2048)
    if rc != 0:
        raise Failure("the compile did not finish with a schedule: " + case.last)
    report = json.load(open(case.path("out", "report.json")))
    reasons = [l["intrinsic"].get("reason", "") for l in report["layers"] if "intrinsic" in l]
    if not any("constraint model would have" in r for r in reasons):
        raise Failure("the report does not say why the layers were not embedded: %s" % reasons)


CM_HW = """hardware cm {
  word = 8 bit;
  frequency = 1 GHz;
  core { crossbar = 256 x 256; mvm_cycles = 1; mvm_energy = 0 pJ; sram = 64 KiB; }
  dpu { relu = 1; batchnorm = 1; add = 1; maxpool = 1; avgpool = 1; psum = 1; }
  interconnect { topology = mesh; cores = SIDE x SIDE; hop_latency = 1; hop_energy = 1 pJ; }
  gcu { input_core = 0; output_core = LAST; }
}
"""


def cm_large_mesh(case):
    """ResNet-20 on a 64 x 64 mesh (4,096 cores, the documented maximum; once 64 s to
    7.7 GB and an internal error) and on 32 x 32 (once 10.8 s against a 2 s limit): a
    placement in bounded time and memory, the same bytes on two runs."""
    net = os.path.join(STDLIB, "nets", "resnet20.dfl")
    for side, seconds in [(32, 60), (64, 120)]:
        case.write("cm%d.dfl" % side, CM_HW.replace("SIDE", str(side)).replace("LAST", str(side * side - 1)))
        outs = []
        for run in range(2):
            d = "out%d_%d" % (side, run)
            rc, out, err = case.run_measured([net, "cm%d.dfl" % side, "-o", d], seconds, 2048)
            if rc != 0:
                raise Failure("no placement on the %d x %d mesh: %s" % (side, side, case.last))
            outs.append(open(case.path(d, "placement.json"), "rb").read())
        if outs[0] != outs[1]:
            raise Failure("two placements on the %d x %d mesh differ" % (side, side))


# --- The language server ----------------------------------------------------------------------

class Server:
    """`dflc lsp` on pipes, read with deadlines."""

    def __init__(self, case):
        self.case = case
        self.p = subprocess.Popen([case.dflc, "lsp"], cwd=case.dir, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf = b""
        self.next_id = 100
        self.seen = []   # notifications read while waiting for something else

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def read(self, seconds):
        """The next message, or None at end of stream; Failure after SECONDS."""
        deadline = time.monotonic() + seconds * self.case.slow
        while True:
            m = re.match(rb"(?s)(.*?)\r\n\r\n", self.buf)
            if m:
                length = re.search(rb"(?i)content-length:\s*(\d+)", m.group(1))
                if not length:
                    raise Failure("the server sent a header without Content-Length: %r" % m.group(1))
                end = m.end() + int(length.group(1))
                if len(self.buf) >= end:
                    body, self.buf = self.buf[m.end():end], self.buf[end:]
                    return json.loads(body)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("the server did not answer within %.0f s" % (seconds * self.case.slow))
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 1 << 16)
                if not chunk:
                    return None
                self.buf += chunk

    def expect_error(self, codes, seconds=10):
        """An error response with id null and a code in CODES (JSON-RPC 2.0, "Response object")."""
        while True:
            m = self.read(seconds)
            if m is None:
                raise Failure("the server closed the stream instead of answering with an error")
            if "error" in m and m.get("id") is None:
                if m["error"].get("code") not in codes:
                    raise Failure("expected an error in %s, got %s" % (codes, m["error"]))
                return m

    def alive(self, seconds=10):
        """A valid request after whatever came before is answered."""
        rid = self.request("textDocument/documentSymbol", {"textDocument": {"uri": "file:///none.dfl"}})
        return self.reply(rid, seconds)

    def initialize(self, options=None):
        """initialize (with OPTIONS as initializationOptions): its reply, after the
        notifications sent before it (self.seen)."""
        params = {"processId": None, "rootUri": None, "capabilities": {}}
        if options is not None:
            params["initializationOptions"] = options
        rid = self.request("initialize", params)
        r = self.reply(rid, 20)
        self.notify("initialized", {})
        return r

    def reply(self, rid, seconds):
        """The response to request RID; the notifications before it go to self.seen."""
        while True:
            m = self.read(seconds)
            if m is None:
                raise Failure("the server closed the stream before answering request %s" % rid)
            if m.get("id") == rid and "method" not in m:
                return m
            if "method" in m:
                self.seen.append(m)

    def diagnostics(self, uri, version, seconds=20):
        """The codes of the next publishDiagnostics of URI at VERSION."""
        while True:
            try:
                m = self.read(seconds)
            except Failure:
                raise Failure("no diagnostics of %s version %s within %.0f s" % (uri, version, seconds * self.case.slow))
            if m is None:
                raise Failure("the server closed the stream before publishing %s version %s" % (uri, version))
            if "method" in m:
                self.seen.append(m)
            p = m.get("params") or {}
            if m.get("method") == "textDocument/publishDiagnostics" and p.get("uri") == uri and \
                    p.get("version") == version:
                return [d.get("code") for d in p["diagnostics"]]

    def messages(self, method):
        """The messages of the notifications METHOD seen so far (and forgets them)."""
        out = [m["params"]["message"] for m in self.seen if m.get("method") == method]
        self.seen = [m for m in self.seen if m.get("method") != method]
        return out

    def finish(self, seconds=10):
        """shutdown + exit: the process must end within SECONDS, cleanly and sanitizer-clean."""
        try:
            rid = self.request("shutdown", None)
            self.reply(rid, seconds)
            self.notify("exit", None)
            self.p.stdin.close()
        except (BrokenPipeError, Failure):
            pass
        self.close(seconds)

    def close(self, seconds):
        """Waits for the server to end; returns its peak resident set in MiB."""
        deadline = time.monotonic() + seconds * self.case.slow
        while True:
            pid, status, usage = os.wait4(self.p.pid, os.WNOHANG)
            if pid:
                self.p.returncode = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                self.p.kill()
                self.p.wait()
                raise Failure("the server did not exit within %.0f s" % (seconds * self.case.slow))
            time.sleep(0.05)
        err = self.p.stderr.read().decode(errors="replace")
        if self.p.returncode < 0 or SANITIZER.search(err):
            raise Failure("the server died (status %d): %s" % (self.p.returncode, err[-1500:]))
        return usage.ru_maxrss / 1024

    def threads(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            return int(re.search(r"Threads:\s*(\d+)", f.read()).group(1))


PROTOCOL_ERRORS = (-32700, -32600)  # JSON-RPC 2.0: Parse error, Invalid Request


def lsp_deep_json(case):
    """A message nested 1,000,000 levels deep (once a stack overflow in the JSON parser):
    a protocol error (too deep to parse, or parsed and not a request), then service as usual."""
    s = Server(case)
    s.initialize()
    for body in [b"[" * 1000000 + b"]" * 1000000, b'{"a":' * 200000 + b"1" + b"}" * 200000]:
        s.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        s.expect_error(PROTOCOL_ERRORS)
        s.alive()
    s.finish()


def lsp_malformed_headers(case):
    """Each malformed header is answered, and a valid request after it gets its reply."""
    for header in [b"Content-Length: -5\r\n\r\n", b"Content-Length: abc\r\n\r\n",
                   b"Content-Type: text/plain\r\n\r\n", b"Content-Length: 99999999999999999999999\r\n\r\n",
                   b"Content-Length:\r\n\r\n", b"X-" + b"a" * 100000 + b": b\r\n\r\n", b"garbage\r\n\r\n"]:
        s = Server(case)
        s.initialize()
        s.send_raw(header)
        s.expect_error(PROTOCOL_ERRORS)
        s.alive()
        s.finish()


def lsp_oversize_message(case):
    """A Content-Length of 1 GiB is refused without allocating it: an error at once, an
    answer to the valid request sent after the few bytes that did come, a clean end of
    stream, and a peak resident set far below the announced size."""
    s = Server(case)
    s.initialize()
    s.send_raw(b"Content-Length: 1073741824\r\n\r\n{")
    s.expect_error(PROTOCOL_ERRORS)   # at once, before the body is skipped
    s.alive()
    s.p.stdin.close()
    peak = s.close(10)
    if peak > 512:
        raise Failure("the server's resident set peaked at %.0f MiB" % peak)


def lsp_large_document(case):
    """A 5 MB document: diagnostics, hover and symbols answer within a bound."""
    s = Server(case)
    s.initialize()
    n = 120000
    text = "network big {\n  batch N = 1;\n  input x [C=4, X=4, Y=4];\n  l0 = conv(x, K=4, R=1);\n"
    text += "".join("  l%d = conv(l%d, K=4, R=1);\n" % (i, i - 1) for i in range(1, n)) + "}\n"
    uri = "file://" + case.path("big.dfl")
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "dfl", "version": 1, "text": text}})
    rid = s.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 4}})
    s.reply(rid, 30)
    rid = s.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    s.reply(rid, 30)
    s.finish(30)


def lsp_code_actions(case):
    """Eight fill-in code actions on one text share one solve; cancelling one and exiting
    does not wait for the solver."""
    s = Server(case)
    s.initialize()
    case.write("net.dfl", NET)
    case.write("hw.dfl", HW)
    text = 'import "net.dfl";\nimport "hw.dfl";\nschedule for tiny on tinyhw {\n}\n'
    uri = "file://" + case.path("s.dfl")
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "dfl", "version": 1, "text": text}})
    params = {"textDocument": {"uri": uri}, "range": {"start": {"line": 2, "character": 0},
                                                     "end": {"line": 2, "character": 0}},
              "context": {"diagnostics": []}}
    before = s.threads()
    ids = [s.request("textDocument/codeAction", params) for _ in range(8)]
    time.sleep(0.5)
    during = s.threads()
    # Each request waits on its own task for the one solve they share (one
    # solve: FillIn's unit tests count them); what must not happen is more
    # threads than requests, e.g. a solve per request with workers of its own.
    if during - before > len(ids) + 1:
        raise Failure("eight identical code actions started %d threads" % (during - before))
    s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": ids[0]}})
    s.finish(10)


def lsp_cr_line_endings(case):
    """Lines ending in `\r` alone (LSP: `\r`, `\n` and `\r\n` are line breaks): an
    incremental edit at line 3 lands there (once at the end of the file), so the
    server's text stays the editor's."""
    s = Server(case)
    s.initialize()
    uri = "file://" + case.path("cr.dfl")
    text = "network n {\r  batch N = 1;\r  input d [C=3, X=8, Y=8];\r  c1 = cnov(d, K=4, R=3);\r}\r"
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "dfl", "version": 1, "text": text}})
    if s.diagnostics(uri, 1) != ["E0203"]:
        raise Failure("the misspelt operator of a \\r document is not E0203 alone")
    # `  c1 = cnov(`: cnov at characters 7-11 of line 3.
    rng = {"start": {"line": 3, "character": 7}, "end": {"line": 3, "character": 11}}
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"range": rng, "text": "conv"}]})
    codes = s.diagnostics(uri, 2)
    if codes:
        raise Failure("after replacing cnov by conv on line 3 the server still reports %s" % codes)
    s.finish()


def lsp_missing_import_restored(case):
    """A missing import created on disk (didChangeWatchedFiles, Created) is read:
    the E0101 goes (once the failed load recorded no dependency and it stayed)."""
    s = Server(case)
    s.initialize()
    uri = "file://" + case.path("s.dfl")
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "dfl", "version": 1,
                                                       "text": 'import "net.dfl";\n'}})
    if s.diagnostics(uri, 1) != ["E0101"]:
        raise Failure("a missing import is not E0101")
    case.write("net.dfl", NET)
    s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": "file://" + case.path("net.dfl"), "type": 1}]})
    codes = s.diagnostics(uri, 1)
    if codes:
        raise Failure("the import restored on disk still gives %s" % codes)
    s.finish()


def lsp_bad_settings(case):
    """Mistyped initializationOptions ("train": "yes", batch 2^63) are reported and
    ignored, and initialize succeeds (once: InvalidParams, then -32002 for every
    request); batch 1.5 in didChangeConfiguration likewise."""
    s = Server(case)
    r = s.initialize({"train": "yes", "batch": 2 ** 63, "solver": 7})
    if "result" not in r:
        raise Failure("initialize with mistyped options failed: %s" % r)
    shown = s.messages("window/showMessage")
    logged = s.messages("window/logMessage")
    for field in ("'train'", "'batch'", "'solver'"):
        if not any(field in m for m in shown) or not any(field in m for m in logged):
            raise Failure("the wrong %s setting was not shown and logged: %s" % (field, shown))
    if any("-9223372036854775808" in m for m in shown):
        raise Failure("batch 2^63 was read as a negative number: %s" % shown)
    if "result" not in s.alive():
        raise Failure("a request after initialize was refused")
    s.notify("workspace/didChangeConfiguration", {"settings": {"dfl": {"batch": 1.5}}})
    r = s.alive()
    if "result" not in r or not any("'batch'" in m and "1.5" in m for m in s.messages("window/showMessage")):
        raise Failure("batch 1.5 was not reported")
    s.finish()


def lsp_localhost_uri(case):
    """file://localhost/ABS is the local file ABS (RFC 8089; once a relative path):
    its import beside it on disk is found."""
    case.write("net.dfl", NET)
    s = Server(case)
    s.initialize()
    uri = "file://localhost" + case.path("s.dfl")
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "dfl", "version": 1,
                                                       "text": 'import "net.dfl";\n'}})
    codes = s.diagnostics(uri, 1)
    if codes:
        raise Failure("a document opened as file://localhost/... does not find its import: %s" % codes)
    s.finish()


CASES = [deep_imports, huge_batch, huge_dimension, huge_resample, huge_bilinear, thousand_levels, many_layers, long_identifiers,
         overflowing_arrays, not_files, symlink_loop_import, onnx_external_data, dsa_limits_stated,
         schedule_other_network, output_is_directory, planted_symlinks, planted_output_entries, odd_input_names, html_in_input_paths,
         output_over_input, fmt_through_symlink, determinism, lsp_deep_json, lsp_malformed_headers,
         lsp_oversize_message, lsp_large_document, lsp_code_actions, lsp_cr_line_endings,
         lsp_missing_import_restored, lsp_bad_settings, lsp_localhost_uri]
CASES += [sweep_slurm_injection, sweep_sbatch_line_break, sweep_parallel_injection, sweep_point_count,
          sweep_spec_json, sweep_bad_records]
CASES += [tradeoff_plot_ulps, fractional_words, sim_many_operands, sim_huge_work, onnx_huge_batch,
          onnx_fusion_patterns, onnx_broadcasts, onnx_rmsnorm_patterns]
CASES += [embed_large_intrinsic, cm_large_mesh, partial_occupancy_huge_stacks, causal_huge]
CASES += [gqa_groups, rope_extremes, conv_transpose_extremes, timeloop_export_names]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dflc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--slow", type=float, default=1.0, help="multiply every time bound")
    ap.add_argument("--small", action="store_true",
                    help="smaller instances where a case tests an algorithm, not memory safety")
    ap.add_argument("--onnx-python", default=sys.executable,
                    help="a Python with the onnx package, to build ONNX models (default: this one)")
    ap.add_argument("-k", default="", help="run only the cases whose name contains this")
    args = ap.parse_args()
    args.dflc = os.path.abspath(args.dflc)
    os.makedirs(args.work, exist_ok=True)
    failed = 0
    for c in CASES:
        if args.k not in c.__name__:
            continue
        t0 = time.monotonic()
        try:
            c(Case(args, c.__name__))
            print("PASS %-24s %6.1f s" % (c.__name__, time.monotonic() - t0), flush=True)
        except Failure as e:
            failed += 1
            print("FAIL %-24s %6.1f s\n  %s" % (c.__name__, time.monotonic() - t0, e), flush=True)
    print("%d of %d hostile cases failed" % (failed, len(CASES)) if failed else "all hostile cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
