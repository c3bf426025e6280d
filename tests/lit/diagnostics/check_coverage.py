#!/usr/bin/env python3
"""Usage: check_coverage.py DIAGNOSTICS_DEF LIT_DIR ALLOW_LIST

Fails, listing them, if a code of DIAGNOSTICS_DEF (a DIAG entry, not a NOTE)
appears as `[CODE]` in no *.test or *.dfl file under LIT_DIR and is not in
ALLOW_LIST; also fails if a code in ALLOW_LIST does have a test, or is not in
the table, so the list cannot go stale. ALLOW_LIST: one `CODE reason` a line;
`#` starts a comment."""
import pathlib
import re
import sys


def table_codes(def_path):
    text = pathlib.Path(def_path).read_text()
    return re.findall(r'^DIAG\(\s*\w+\s*,\s*"([EW]\d{4})"', text, re.M)


def tested_codes(lit_dir):
    found = set()
    for path in sorted(pathlib.Path(lit_dir).rglob("*")):
        if path.suffix in (".test", ".dfl") and path.is_file():
            found.update(re.findall(r"\[([EW]\d{4})\]", path.read_text(errors="replace")))
    return found


def allow_list(path):
    allowed = {}
    for n, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        code, _, reason = line.partition(" ")
        if not reason.strip():
            sys.exit(f"{path}:{n}: '{code}' needs a reason: `CODE reason`")
        allowed[code] = reason.strip()
    return allowed


def main():
    def_path, lit_dir, allow_path = sys.argv[1:4]
    codes = table_codes(def_path)
    if not codes:
        sys.exit(f"no DIAG entries found in {def_path}")
    tested = tested_codes(lit_dir)
    allowed = allow_list(allow_path)
    problems = []
    for code in codes:
        if code not in tested and code not in allowed:
            problems.append(f"{code}: no test pins `[{code}]` (tests/lit/**/*.test, *.dfl)")
        if code in tested and code in allowed:
            problems.append(f"{code}: has a test now; remove it from {allow_path}")
    for code in sorted(set(allowed) - set(codes)):
        problems.append(f"{code}: in {allow_path} but not in the table")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{len(codes)} codes: {len(codes) - len(allowed)} tested, {len(allowed)} allowed untested")


main()
