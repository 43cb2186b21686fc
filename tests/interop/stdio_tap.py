#!/usr/bin/env python3
"""Transparent stdio relay that records a newline-delimited JSON-RPC exchange.

    stdio_tap.py LOGFILE -- CMD [ARGS...]

Starts CMD, copies our stdin to its stdin and its stdout to our stdout line by
line, and appends every line to LOGFILE as one JSON object per line:

    {"dir": "c2s" | "s2c", "t": <seconds since start>, "line": "<raw line>"}

and, once the server has exited, {"dir": "exit", ..., "line": "<exit status>"}
(negative: killed by that signal).

The server's stderr is passed through untouched. When our stdin closes, the
server's stdin is closed; the relay exits with the server's exit status.
SIGTERM/SIGINT are forwarded to the server. Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: stdio_tap.py LOGFILE -- CMD [ARGS...]", file=sys.stderr)
        return 2
    log_path, command = argv[0], argv[2:]
    start = time.monotonic()
    log_lock = threading.Lock()
    log = open(log_path, "a", encoding="utf-8")

    def record(direction: str, raw: bytes) -> None:
        entry = {
            "dir": direction,
            "t": round(time.monotonic() - start, 4),
            "line": raw.decode("utf-8", errors="replace").rstrip("\r\n"),
        }
        with log_lock:
            log.write(json.dumps(entry) + "\n")
            log.flush()

    try:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    except OSError as exc:
        print(f"stdio_tap: cannot start {command[0]!r}: {exc}", file=sys.stderr)
        return 127

    def forward_signal(signum: int, _frame: object) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward_signal)
    signal.signal(signal.SIGINT, forward_signal)

    def client_to_server() -> None:
        assert child.stdin is not None
        try:
            for raw in iter(sys.stdin.buffer.readline, b""):
                record("c2s", raw)
                child.stdin.write(raw)
                child.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        finally:
            try:
                child.stdin.close()
            except OSError:
                pass

    def server_to_client() -> None:
        assert child.stdout is not None
        out = sys.stdout.buffer
        try:
            for raw in iter(child.stdout.readline, b""):
                record("s2c", raw)
                out.write(raw)
                out.flush()
        except (BrokenPipeError, OSError):
            pass

    threading.Thread(target=client_to_server, daemon=True).start()
    reader = threading.Thread(target=server_to_client)
    reader.start()
    code = child.wait()
    reader.join(timeout=5)
    record("exit", str(code).encode())
    log.close()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: the stdin reader may still be blocked in a read, and a normal
    # interpreter shutdown would abort on its buffered-reader lock.
    os._exit(status)
