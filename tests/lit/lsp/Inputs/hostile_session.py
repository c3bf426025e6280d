#!/usr/bin/env python3
"""For hostile.test: drives `dflc lsp` over a pipe as a hostile client would,
one message at a time, and after each hostile message sends a valid request
and waits (at most 10 s) for its answer, without closing the input: a server
that stalls fails here rather than at the end of the input. Then: a 5 MB
document, and `exit` while a slow code action solves.

usage: hostile_session.py DFLC SLOW_SCHEDULE"""
import json
import os
import queue
import subprocess
import sys
import threading
import time

dflc, slow_schedule = sys.argv[1], os.path.abspath(sys.argv[2])


def frame(body):
    body = body if isinstance(body, bytes) else json.dumps(dict(jsonrpc="2.0", **body)).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class Server:
    def __init__(self, init_options=None):
        self.proc = subprocess.Popen([dflc, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.messages = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send(frame({"id": 0, "method": "initialize", "params": {"initializationOptions": init_options or {}}}))
        self.wait(lambda m: m.get("id") == 0)

    def _read(self):   # the server's own framing: trusted
        out = self.proc.stdout
        while True:
            header = out.readline()
            if not header:
                return
            length = int(header.split(b":")[1])
            out.readline()
            self.messages.put(json.loads(out.read(length)))

    def send(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait(self, pred, timeout=10.0, seen=None):
        """The first message matching `pred` within `timeout` s (None if none);
        the others read meanwhile go to `seen`."""
        end = time.monotonic() + timeout
        while True:
            try:
                m = self.messages.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                return None
            if pred(m):
                return m
            if seen is not None:
                seen.append(m)


def vm_hwm_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM"))


UNOPENED = {"textDocument": {"uri": "file:///nonexistent/none.dfl"}}
failed = False
server = Server()
cases = [
    ("deep JSON (1,000,000 levels)", frame(b"[" * 1000000)),
    ("deep params", frame(b'{"jsonrpc":"2.0","id":99,"method":"textDocument/hover","params":' + b"{\"a\":" * 100000 + b"1" +
                          b"}" * 100001)),
    ("1 GiB Content-Length", b"Content-Length: 1073741824\r\n\r\n{}"),
    ("short Content-Length", b"Content-Length: 5\r\n\r\n{\"a\":1}"),
    ("long Content-Length", b"Content-Length: 500\r\n\r\n{}"),
    ("negative Content-Length", b"Content-Length: -5\r\n\r\n{}"),
    ("non-numeric Content-Length", b"Content-Length: five\r\n\r\n{}"),
    ("missing Content-Length", b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}"),
    ("header line of 1 MB", b"X-Junk: " + b"x" * 1000000 + b"\r\n"),
    ("garbage", b"\x00\x01GET / HTTP/1.1\r\n\r\n"),
]
for i, (name, data) in enumerate(cases, start=1):
    t0 = time.monotonic()
    server.send(data + frame({"id": i, "method": "textDocument/documentSymbol", "params": UNOPENED}))
    errors = []
    reply = server.wait(lambda m: m.get("id") == i, seen=errors)
    ms = (time.monotonic() - t0) * 1000
    errors = [e["error"]["code"] for e in errors if "error" in e and e.get("id") is None]
    if reply is None or reply.get("result") != [] or not errors or set(errors) != {-32700}:
        failed = True
        print(f"{name}: NOT ANSWERED as expected: {reply}, errors {errors}")
    else:
        print(f"{name}: {len(errors)} ParseError(s) with id null, then request {i} answered")
    print(f"  ({ms:.0f} ms)", file=sys.stderr)
hwm = vm_hwm_kb(server.proc.pid)
print("peak memory under 200 MB:", hwm < 200 * 1024)
print(f"  (VmHWM {hwm} kB)", file=sys.stderr)

# A 5 MB document: one warning diagnostic; hover and symbols answered at once.
uri = "file:///nonexistent/huge.dfl"
text = "// a comment line, many times over, to make the document 5 MB\n" * 80000
t0 = time.monotonic()
server.send(frame({"method": "textDocument/didOpen",
                   "params": {"textDocument": {"uri": uri, "languageId": "dfl", "version": 1, "text": text}}}))
diag = server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)
print("5 MB document:", [(d["severity"], d["message"][:60]) for d in diag["params"]["diagnostics"]] if diag else None)
server.send(frame({"id": 100, "method": "textDocument/hover",
                   "params": {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 4}}}))
hover = server.wait(lambda m: m.get("id") == 100, timeout=5)
server.send(frame({"id": 101, "method": "textDocument/documentSymbol", "params": {"textDocument": {"uri": uri}}}))
symbols = server.wait(lambda m: m.get("id") == 101, timeout=5)
print("hover:", hover and hover.get("result", "error"), "symbols:", symbols and symbols.get("result", "error"))
print(f"  ({(time.monotonic() - t0) * 1000:.0f} ms from didOpen to the symbols)", file=sys.stderr)
server.send(frame({"id": 102, "method": "shutdown"}) + frame({"method": "exit"}))
print("exit code:", server.proc.wait(timeout=30))

# `exit` while a code action solves (exhaustive, 60 s limit, minutes without
# one), after a cancelled one: the server exits at once.
with open(slow_schedule) as f:
    slow = f.read()
suri = "file://" + slow_schedule
for how in ["exit", "cancel, then exit"]:
    server = Server({"solver": "exhaustive", "timeLimit": 60})
    server.send(frame({"method": "textDocument/didOpen",
                       "params": {"textDocument": {"uri": suri, "languageId": "dfl", "version": 1, "text": slow}}}))
    server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    server.send(frame({"id": 7, "method": "textDocument/codeAction",
                       "params": {"textDocument": {"uri": suri}, "range": {"start": {"line": 4, "character": 0},
                                                                             "end": {"line": 4, "character": 0}}}}))
    time.sleep(1.0)   # solving by now
    if how.startswith("cancel"):
        server.send(frame({"method": "$/cancelRequest", "params": {"id": 7}}))
        r = server.wait(lambda m: m.get("id") == 7)
        print("cancelled:", r and r.get("error", {}).get("code"))
    t0 = time.monotonic()
    server.send(frame({"method": "exit"}))
    try:
        code = server.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        code = "still running after 10 s"
    seconds = time.monotonic() - t0
    print(f"{how} while solving: exit code {code}, within 2 s: {seconds < 2}")
    print(f"  ({seconds * 1000:.0f} ms)", file=sys.stderr)
sys.exit(1 if failed else 0)
