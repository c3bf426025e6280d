"""Checks dflc's JSON or SARIF diagnostics for tests/lit/cli/Inputs/redefined-layer.dfl
against positions derived by hand (see diag-formats.test).

usage: check_diag_formats.py json FILE.json INPUT.dfl
       check_diag_formats.py sarif FILE.sarif INPUT.dfl CODES.txt
       check_diag_formats.py badpath DFLC
       check_diag_formats.py fixit FILE.json FILE.sarif INPUT.dfl   (Inputs/misspelt-unit.dfl)
CODES.txt is `dflc --list-diagnostics`: one rule per code that is not a note.
badpath runs DFLC on a missing file whose name is not UTF-8: both formats must
still be valid JSON (the byte becomes U+FFFD), exit 1 and not an internal error.
"""
import json
import pathlib
import os
import re
import subprocess
import sys

MESSAGE = "redefinition of tensor 'c1'"   # E0201: layers and inputs share one namespace
NOTE = "previous definition is here"


def expect(cond, what):
    if not cond:
        sys.exit("check_diag_formats: " + what)


def fnv1a64(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) % (1 << 64)
    return "%016x" % h


def check_json(doc, path):
    expect(list(doc) == ["diagnostics"], "top level is {\"diagnostics\": [...]}: %s" % list(doc))
    diags = doc["diagnostics"]
    expect(len(diags) == 1, "one diagnostic, got %d" % len(diags))
    d = diags[0]
    expect(d["severity"] == "error" and d["code"] == "E0201", "error E0201: %s" % d)
    expect(d["message"] == MESSAGE, "message: %r" % d["message"])
    expect(d["file"] == path, "file: %r" % d["file"])
    # JSON columns count bytes, the end is exclusive.
    expect(d["range"] == {"start": {"line": 7, "column": 12}, "end": {"line": 7, "column": 14}},
           "range: %s" % d["range"])
    expect("fixits" not in d, "no fix-its expected")
    expect(len(d["notes"]) == 1, "one note")
    n = d["notes"][0]
    expect(n["severity"] == "note" and "code" not in n and n["message"] == NOTE, "note: %s" % n)
    expect(n["file"] == path, "note file: %r" % n["file"])
    expect(n["range"] == {"start": {"line": 6, "column": 3}, "end": {"line": 6, "column": 5}},
           "note range: %s" % n["range"])


def check_sarif(doc, path, codes_file):
    expect(doc["version"] == "2.1.0", "version")
    expect(doc["$schema"].endswith("/sarif-schema-2.1.0.json"), "$schema: %s" % doc["$schema"])
    expect(len(doc["runs"]) == 1, "one run")
    run = doc["runs"][0]
    expect(run["columnKind"] == "unicodeCodePoints", "columnKind")
    driver = run["tool"]["driver"]
    expect(driver["name"] == "dflc", "driver name")

    # One rule per code of the diagnostics table, ids unique, each level valid.
    codes = []
    for line in open(codes_file):
        code, severity = line.split("\t")[:2]
        if code and severity != "note":
            codes.append(code)
    rules = driver["rules"]
    ids = [r["id"] for r in rules]
    expect(ids == codes, "rules are the table's codes in order")
    for r in rules:
        expect(re.fullmatch(r"[A-Z]\d{4}", r["id"]), "stable rule id: %s" % r["id"])
        expect(r["defaultConfiguration"]["level"] in ("error", "warning", "note"), "level of %s" % r["id"])
        expect(r["helpUri"].startswith("https://") and r["helpUri"].endswith("#" + r["id"]), "helpUri of %s" % r["id"])

    results = run["results"]
    expect(len(results) == 1, "one result, got %d" % len(results))
    res = results[0]
    expect(res["ruleId"] == "E0201", "ruleId")
    expect(rules[res["ruleIndex"]]["id"] == "E0201", "ruleIndex points at E0201")
    expect(res["level"] == "error", "level")
    expect(res["message"]["text"] == MESSAGE, "message")
    uri = pathlib.Path(path).as_uri()
    (loc,) = res["locations"]
    phys = loc["physicalLocation"]
    expect(phys["artifactLocation"]["uri"] == uri, "uri %s, expected %s" % (phys["artifactLocation"]["uri"], uri))
    # SARIF columns count code points (columnKind), the end column is exclusive.
    expect(phys["region"] == {"startLine": 7, "startColumn": 11, "endLine": 7, "endColumn": 13},
           "region: %s" % phys["region"])
    (rel,) = res["relatedLocations"]
    expect(rel["message"]["text"] == NOTE, "related message")
    rphys = rel["physicalLocation"]
    expect(rphys["artifactLocation"]["uri"] == uri, "related uri")
    expect(rphys["region"] == {"startLine": 6, "startColumn": 3, "endLine": 6, "endColumn": 5},
           "related region: %s" % rphys["region"])
    # The fingerprint is FNV-1a (64 bit) of code|path|source text|message, so
    # it is recomputed here independently of dflc.
    key = "E0201|%s|c1|%s" % (path, MESSAGE)
    expect(res["partialFingerprints"] == {"dflcDiagnostic/v1": fnv1a64(key)},
           "fingerprint %s, expected %s" % (res["partialFingerprints"], fnv1a64(key)))


def check_badpath(dflc):
    name = os.fsdecode(b"/nonexistent-dir/\xff.dfl")
    for fmt in ("json", "sarif"):
        p = subprocess.run([dflc, "show", "--format", fmt, name], capture_output=True)
        expect(p.returncode == 1, "%s: exit %d, expected 1: %r" % (fmt, p.returncode, p.stderr))
        doc = json.loads(p.stderr.decode("utf-8"))
        diags = doc["diagnostics"] if fmt == "json" else doc["runs"][0]["results"]
        (d,) = diags
        text = d["message"] if fmt == "json" else d["message"]["text"]
        expect("\ufffd.dfl" in text, "%s: the bad byte becomes U+FFFD: %r" % (fmt, text))


def check_fixit(doc, sarif, path):
    # Line 3 is `  /* \u00e9 */ frequency = 1 GHZ;`: before `GHZ` come 2 + 3 + 2 (the
    # two bytes of \u00e9) + 4 + 14 = 25 bytes, i.e. 24 code points. So GHZ is bytes
    # 26..29 (JSON) and code points 25..28 (SARIF), ends exclusive.
    (d,) = doc["diagnostics"]
    expect(d["code"] == "E0401", "E0401: %s" % d)
    expect(d["fixits"] == [{"range": {"start": {"line": 3, "column": 26}, "end": {"line": 3, "column": 29}},
                            "replacement": "GHz"}], "json fixits: %s" % d.get("fixits"))
    (res,) = sarif["runs"][0]["results"]
    expect(res["fixes"] == [{
        "description": {"text": "Replace 'GHZ' with 'GHz'"},
        "artifactChanges": [{
            "artifactLocation": {"uri": pathlib.Path(path).as_uri()},
            "replacements": [{"deletedRegion": {"startLine": 3, "startColumn": 25, "endLine": 3, "endColumn": 28},
                              "insertedContent": {"text": "GHz"}}]}]}], "sarif fixes: %s" % res.get("fixes"))


def main():
    if sys.argv[1] == "badpath":
        return check_badpath(sys.argv[2])
    if sys.argv[1] == "fixit":
        return check_fixit(json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), sys.argv[4])
    kind, out, path = sys.argv[1:4]
    doc = json.load(open(out))
    if kind == "json":
        check_json(doc, path)
    else:
        check_sarif(doc, path, sys.argv[4])


main()
