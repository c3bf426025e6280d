#!/usr/bin/env python3
"""Usage: fuzz_session.py DFLC SEED COUNT FILE... -- a seeded random session:
real documents (FILEs) opened, edited at random ranges with random text, and
every request method called with valid, mutated and nonsense params, plus
garbage frames. Checks that `dflc lsp` answers every request exactly once
(result or error), never crashes, and exits 0 after shutdown + exit."""
import json
import os
import random
import subprocess
import sys

dflc, seed, count, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
rng = random.Random(seed)
METHODS = ["textDocument/hover", "textDocument/definition", "textDocument/references",
           "textDocument/documentSymbol", "textDocument/formatting", "textDocument/completion",
           "textDocument/inlayHint", "textDocument/codeAction", "textDocument/unknown"]
texts = [open(f).read() for f in files]
# The files' own URIs, so their imports resolve; edits stay in memory.
uris = ["file://" + os.path.abspath(f) for f in files]


def frame(obj):
    body = (obj if isinstance(obj, str) else json.dumps(obj)).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def pos():
    return {"line": rng.choice([0, 1, 5, 20, 100, -1, 10**9]), "character": rng.choice([0, 3, 8, 30, -5, 10**9])}


def junk():
    return rng.choice([None, 1, "x", [], {}, {"line": "a"}, -1, 1.5, "\u00e9\U0001f600"])


out, requests, next_id = [frame({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})], {0}, 1
for i in range(len(texts)):
    out.append(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                      "params": {"textDocument": {"uri": uris[i], "languageId": "dfl", "version": 1, "text": texts[i]}}}))
for step in range(count):
    kind = rng.random()
    doc = rng.randrange(len(uris))
    if kind < 0.35:
        change = {"range": {"start": pos(), "end": pos()},
                  "text": rng.choice(["", "x", "}", "{", ";", "\n", " layer ", "[C=0]", "\u00e9", "\U0001f600", "=>"])}
        if rng.random() < 0.1:
            change = {"text": rng.choice(texts)}
        out.append(frame({"jsonrpc": "2.0", "method": "textDocument/didChange",
                          "params": {"textDocument": {"uri": uris[doc], "version": step + 2}, "contentChanges": [change]}}))
    elif kind < 0.9:
        params = {"textDocument": {"uri": rng.choice(uris + ["file:///nope.dfl"])}, "position": pos(),
                  "range": {"start": pos(), "end": pos()}, "context": {"includeDeclaration": True, "diagnostics": []}}
        if rng.random() < 0.2:
            params = junk()
        elif rng.random() < 0.2:
            params[rng.choice(list(params))] = junk()
        out.append(frame({"jsonrpc": "2.0", "id": next_id, "method": rng.choice(METHODS), "params": params}))
        requests.add(next_id)
        next_id += 1
    else:
        out.append(frame(rng.choice(['{"jsonrpc":"2.0"', '[]', 'null', '{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}',
                                     '{"jsonrpc":"2.0","method":"textDocument/didClose","params":{"textDocument":{"uri":"%s"}}}' % uris[doc],
                                     '{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"dfl":{"solver":"random"}}}}'])))
out.append(frame({"jsonrpc": "2.0", "id": next_id, "method": "shutdown"}))
requests.add(next_id)
out.append(frame({"jsonrpc": "2.0", "method": "exit"}))

proc = subprocess.run([dflc, "lsp"], input=b"".join(out), capture_output=True, timeout=600)
data, replies = proc.stdout, []
while data:
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(head.split(b":")[1])
    msg = json.loads(rest[:length])
    data = rest[length:]
    if "id" in msg and "method" not in msg and msg["id"] is not None:
        replies.append(msg["id"])
missing = requests - set(replies)
dupes = len(replies) - len(set(replies))
print(f"exit {proc.returncode}, {len(requests)} requests, {len(missing)} unanswered, {dupes} answered twice")
sys.exit(0 if proc.returncode == 0 and not missing and not dupes else 1)
