#!/usr/bin/env python3
"""Writes a byte-exact LSP session to stdout for framing.test: real
Content-Length framing with the awkward cases an editor or a bug may send."""
import sys


def frame(body, header="Content-Length"):
    body = body.encode()
    return b"%s: %d\r\n\r\n" % (header.encode(), len(body)) + body


out = b"".join([
    frame("{bad"),                                            # not JSON: ParseError
    b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" +
    frame('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}', "content-length"),
    frame('[{"jsonrpc":"2.0","id":2,"method":"shutdown"}]'),  # a batch: not supported, InvalidRequest
    frame('{"jsonrpc":"2.0","id":3,"method":5}'),              # method not a string: InvalidRequest
    frame('{"jsonrpc":"2.0","id":4,"method":"shutdown"}'),
    frame('{"jsonrpc":"2.0","method":"exit"}'),
])
sys.stdout.buffer.write(out)
