#!/usr/bin/env python3
"""An MCP stdio server that misbehaves in one way, for the tests. Usage:
misbehaving.py MODE [ARG] [--pid-file FILE]
  chatty N      writes N plain log lines on stdout before it reads stdin, then serves correctly
  nonjson       answers every line it reads with lines that are not JSON, and serves nothing
  big MIB       serves; tools/call answers with one text block of MIB MiB
  many N        serves; tools/call answers with N one-letter text blocks
Its one tool is `echo`."""
import json
import os
import sys

args = sys.argv[1:]
if "--pid-file" in args:
    i = args.index("--pid-file")
    with open(args[i + 1], "w") as f:
        f.write(str(os.getpid()))
    del args[i:i + 2]
mode = args[0]
arg = int(args[1]) if len(args) > 1 else 0
out = sys.stdout.buffer


def send(obj):
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


if mode == "chatty":
    for i in range(arg):
        out.write(b"INFO starting up, step %d\n" % i)
    out.flush()

for raw in sys.stdin.buffer:
    if mode == "nonjson":
        out.write(b"this is not json\n\x00\xff{{{\n")
        out.flush()
        continue
    try:
        msg = json.loads(raw)
    except ValueError:
        continue
    method, mid = msg.get("method"), msg.get("id")
    if mid is None or method is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": mode, "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call" and mode == "big":
        out.write(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"' % mid)
        chunk = b"B" * (1 << 20)
        for _ in range(arg):
            out.write(chunk)
        out.write(b'"}]}}\n')
        out.flush()
        continue
    elif method == "tools/call" and mode == "many":
        result = {"content": [{"type": "text", "text": "b"}] * arg}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "echoed"}]}
    else:
        result = {}
    send({"jsonrpc": "2.0", "id": mid, "result": result})
