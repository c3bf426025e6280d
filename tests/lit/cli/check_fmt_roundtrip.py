"""`dflc fmt` over every .dfl file of stdlib/ and examples/ (docs/cli.md, "dflc fmt"):

  (a) fmt is a fixed point: fmt(fmt(x)) == fmt(x);
  (b) the formatted file means the same: `dflc show --json` and
      `dflc check --format json` give the same output, exit code and diagnostics
      (code and message; positions move) for the original and the formatted
      copy, which sits in a mirror tree so that its imports find formatted files;
  (c) every comment survives: the multiset of comment texts, found by the
      small lexer below (independent of dflc's), is the same;
  (d) the file is canonical already (`dflc fmt --check` passes), so a user's
      `fmt --check` in CI never flags the stdlib it imports.

usage: check_fmt_roundtrip.py DFLC SRCROOT WORKDIR
Prints one line per file: "ok PATH (N comments)".
"""
import collections
import json
import os
import pathlib
import subprocess
import sys

dflc, src, work = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
failures = []


def comments(text):
    """Comment texts, with their markers; strings may hold `//` and are skipped."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = len(text) if j < 0 else j
            out.append(text[i:j].rstrip("\r"))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = len(text) if j < 0 else j + 2
            out.append(text[i:j])
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    return collections.Counter(out)


def run(args, root):
    # DFLC_PATH comes before the stdlib next to dflc: imports of stdlib/ resolve under root.
    env = dict(os.environ, DFLC_PATH=str(root), NO_COLOR="1")
    return subprocess.run([dflc] + args, capture_output=True, text=True, env=env)


def meaning(path, root):
    """What dflc makes of a file: outputs with diagnostics reduced to code and message."""
    result = []
    for args in (["show", "--json", "--format", "json"], ["check", "--format", "json"]):
        p = run(args + [str(path)], root)
        diags = []
        for stream in (p.stdout, p.stderr):
            try:
                doc = json.loads(stream)
            except ValueError:
                continue
            if isinstance(doc, dict) and "diagnostics" in doc:
                diags += [(d.get("code"), d["message"].replace(str(root), "ROOT")) for d in doc.pop("diagnostics")]
            result.append(json.dumps(doc, sort_keys=True).replace(str(root), "ROOT"))
        result.append((p.returncode, sorted(diags)))
    return result


files = sorted(p.relative_to(src) for d in ("stdlib", "examples") for p in (src / d).rglob("*.dfl"))
if not files:
    sys.exit("no .dfl files under %s" % src)

# Format every file into the mirror tree first, so imports resolve to formatted files.
for rel in files:
    p = run(["fmt", str(src / rel)], src)
    if p.returncode != 0:
        failures.append("%s: fmt failed: %s" % (rel, p.stderr))
        continue
    (work / rel).parent.mkdir(parents=True, exist_ok=True)
    (work / rel).write_text(p.stdout)

for rel in files:
    if not (work / rel).exists():
        continue
    original, formatted = (src / rel).read_text(), (work / rel).read_text()
    again = run(["fmt", str(work / rel)], work)
    if again.stdout != formatted:
        failures.append("%s: (a) fmt is not idempotent" % rel)
    if meaning(src / rel, src) != meaning(work / rel, work):
        failures.append("%s: (b) the formatted file means something else" % rel)
    c0, c1 = comments(original), comments(formatted)
    if c0 != c1:
        failures.append("%s: (c) comments lost %s, gained %s" % (rel, dict(c0 - c1), dict(c1 - c0)))
    if formatted != original:
        failures.append("%s: (d) not in canonical form (run dflc fmt -i)" % rel)
    print("ok %s (%d comments)" % (rel, sum(c0.values())) if not failures else "checked %s" % rel)

if failures:
    sys.exit("\n".join(failures))
