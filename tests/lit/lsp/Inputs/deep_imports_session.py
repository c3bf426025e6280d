#!/usr/bin/env python3
"""Usage: deep_imports_session.py DIR N -- writes an import chain N files deep
in DIR/chain (f0 imports f1 ... the last declares network `deepest`) and a
cycle N files long in DIR/cycle (the last imports f0), then prints a
--lit-test session on stdout that opens a document importing each chain's f0."""
import json
import os
import sys

d, n = sys.argv[1], int(sys.argv[2])
for sub, last in (("chain", "network deepest { input x [C=1]; }\n"), ("cycle", 'import "f0.dfl";\n')):
    os.makedirs(os.path.join(d, sub), exist_ok=True)
    for i in range(n):
        with open(os.path.join(d, sub, f"f{i}.dfl"), "w") as f:
            f.write(f'import "f{i + 1}.dfl";\n' if i + 1 < n else last)

messages = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}]
for sub in ("chain", "cycle"):
    uri = "file://" + os.path.abspath(os.path.join(d, sub, "root.dfl"))
    messages.append({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                     "params": {"textDocument": {"uri": uri, "languageId": "dfl", "version": 1,
                                                 "text": 'import "f0.dfl";\n'}}})
messages += [{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}, {"jsonrpc": "2.0", "method": "exit"}]
print("\n// -----\n".join(json.dumps(m) for m in messages))
