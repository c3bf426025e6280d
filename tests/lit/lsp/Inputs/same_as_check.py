#!/usr/bin/env python3
"""Usage: same_as_check.py DFLC [--train] [--batch N] [-I DIR]... [--via flags|init|config]
FILE... -- opens each FILE in `dflc lsp` (real Content-Length framing) and
checks that the published diagnostics are those `dflc check --format json
[--train] [-I DIR]... FILE` reports: same codes, severities, messages and
ranges (the CLI's 1-based line/column become LSP's 0-based ones; files here
are ASCII, so columns and UTF-16 characters agree). The server gets --train,
--batch and the -I dirs `--via` its command line (`dflc lsp --train -I DIR`, the
default), initializationOptions (`train`, `batch`, `includePaths`) or a
workspace/didChangeConfiguration before the document opens. E0820 ("no
schedule") is the CLI's alone: an editor checks network and hardware files
too."""
import json
import os
import subprocess
import sys

dflc, args = sys.argv[1], sys.argv[2:]
train, includes, via, files, batch = False, [], "flags", [], None
while args:
    a = args.pop(0)
    if a == "--train":
        train = True
    elif a == "-I":
        includes.append(os.path.abspath(args.pop(0)))
    elif a == "--batch":
        batch = int(args.pop(0))
    elif a == "--via":
        via = args.pop(0)
    else:
        files.append(a)
check_flags = (["--train"] if train else []) + [f for d in includes for f in ("-I", d)] + \
    (["--batch", str(batch)] if batch else [])
settings = dict({"train": train, "includePaths": includes}, **({"batch": batch} if batch else {}))
SEVERITY = {"error": 1, "warning": 2, "remark": 3, "note": 4}


def frame(msg):
    body = json.dumps(dict(jsonrpc="2.0", **msg)).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_messages(data):
    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(head.split(b":")[1])
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


failed = False
for path in files:
    path = os.path.abspath(path)
    uri = "file://" + path
    with open(path) as f:
        text = f.read()
    init = {"initializationOptions": settings} if via == "init" else {}
    config = [{"method": "workspace/didChangeConfiguration", "params": {"settings": {"dfl": settings}}}] \
        if via == "config" else []
    stdin = b"".join(frame(m) for m in [
        {"id": 0, "method": "initialize", "params": init}] + config + [
        {"method": "textDocument/didOpen",
         "params": {"textDocument": {"uri": uri, "languageId": "dfl", "version": 1, "text": text}}},
        {"id": 1, "method": "shutdown"}, {"method": "exit"}])
    lsp = subprocess.run([dflc, "lsp"] + (check_flags if via == "flags" else []), input=stdin, capture_output=True, check=True).stdout
    published = [m["params"]["diagnostics"] for m in read_messages(lsp)
                 if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]
    got = sorted((d["code"], d["severity"], d["message"], d["range"]["start"]["line"],
                  d["range"]["start"]["character"], d["range"]["end"]["line"], d["range"]["end"]["character"])
                 for d in published[-1])
    cli = subprocess.run([dflc, "check", "--format", "json"] + check_flags + [path], capture_output=True, text=True)
    want = sorted((d["code"], SEVERITY[d["severity"]], d["message"], d["range"]["start"]["line"] - 1,
                   d["range"]["start"]["column"] - 1, d["range"]["end"]["line"] - 1, d["range"]["end"]["column"] - 1)
                  for d in json.loads(cli.stdout)["diagnostics"]
                  if d["code"] != "E0820" and os.path.abspath(d["file"]) == path)
    status = "same" if got == want else "DIFFERENT"
    print(f"{os.path.basename(path)}: {len(got)} diagnostics, {status}:", " ".join(d[0] for d in got))
    if got != want:
        failed = True
        print("  lsp:  ", got, "\n  check:", want)
sys.exit(1 if failed else 0)
