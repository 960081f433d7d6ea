#!/usr/bin/env python3
"""Loads a large session through a real `lousho acp` and reports its wall time, the CPU time the
lousho process spent on it (every thread) and its peak memory (VmHWM), in a fresh process per run. The file is a chain of N short messages (user and
assistant by turns, a few characters each, the assistant's with usage), about 0.3 KiB a line, the
shape of issue 18's 89 MB / 300k-entry probe.

Usage: bench/session_load/acp_load.py LOUSHO [entries=300000] [method=session/load|session/resume]
       [runs=1]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

STAMP = "2026-12-01T09:00:10.281Z"


def write_chain(path, sid, cwd, n):
    with open(path, "w") as f:
        f.write(json.dumps({"type": "session", "version": 1, "id": sid, "timestamp": STAMP,
                            "cwd": cwd, "agent": "bench"}) + "\n")
        parent = None
        for k in range(n):
            role = "user" if k % 2 == 0 else "assistant"
            m = {"role": role, "content": [{"type": "text", "text": f"t{k}"}],
                 "timestamp": 1796145739654}
            if role == "assistant":
                m.update({"provider": "script", "model": "echo", "stopReason": "stop",
                          "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
                                    "totalTokens": 2, "cost": {"total": 0}}})
            eid = f"{k:08x}"
            f.write(json.dumps({"type": "message", "id": eid, "parentId": parent,
                                "timestamp": STAMP, "message": m}) + "\n")
            parent = eid


def peak_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return -1


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_once(lousho, work, sid, method):
    spec = os.path.join(work, "agent.json")
    p = subprocess.Popen([lousho, "acp", spec, "--session-dir", os.path.join(work, "sessions")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         cwd=os.path.join(work, "ws"))

    def send(i, method, params):
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                   "params": params}) + "\n").encode())
        p.stdin.flush()

    def wait(i):
        # An update line is counted by its method without being parsed, so that this client's
        # own JSON parsing (300,000 lines in Python) does not set the pace of session/load's
        # replay; every other line is parsed.
        updates = 0
        for raw in p.stdout:
            if raw.startswith(b'{"jsonrpc":"2.0","method":"session/update"'):
                updates += 1
                continue
            m = json.loads(raw)
            if m.get("method") == "session/update":
                updates += 1
            elif m.get("id") == i:
                return m, updates
        return None, updates

    send(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    wait(1)
    cpu = cpu_seconds(p.pid)
    t = time.monotonic()
    send(2, method, {"sessionId": sid, "cwd": os.path.join(work, "ws"), "mcpServers": []})
    answer, updates = wait(2)
    seconds = time.monotonic() - t
    peak = peak_mib(p.pid)
    cpu = cpu_seconds(p.pid) - cpu
    p.stdin.close()
    p.wait(timeout=60)
    ok = answer is not None and "result" in answer
    return seconds, cpu, peak, updates, ok


def main():
    lousho = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 300000
    method = sys.argv[3] if len(sys.argv) > 3 else "session/load"
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    work = tempfile.mkdtemp(prefix="lousho-acp-load-")
    try:
        ws = os.path.join(work, "ws")
        os.makedirs(ws)
        with open(os.path.join(work, "agent.json"), "w") as f:
            json.dump({"name": "bench", "model": "script/echo", "mode": "bypass"}, f)
        sid = "bench" + str(n)
        folder = os.path.join(work, "sessions", "--" + ws.lstrip("/").replace("/", "-") + "--")
        os.makedirs(folder)
        path = os.path.join(folder, f"2026-12-01T09-00-10-280Z_{sid}.jsonl")
        write_chain(path, sid, ws, n)
        size = os.path.getsize(path) / (1 << 20)
        for _ in range(runs):
            seconds, cpu, peak, updates, ok = load_once(lousho, work, sid, method)
            print(f"{method} {n} entries, {size:.1f} MiB: {'ok' if ok else 'FAILED'}, "
                  f"{updates} updates, {seconds:.2f} s wall, {cpu:.2f} s CPU (the process), "
                  f"peak {peak:.0f} MiB = "
                  f"{peak / size:.2f} x the file")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
