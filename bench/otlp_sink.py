#!/usr/bin/env python3
"""An OTLP/HTTP collector that takes every export and keeps nothing.

    python3 bench/otlp_sink.py PORT [--hang]

Answers each POST (/v1/traces, /v1/metrics, /v1/logs) with 200 and an empty
protobuf body (an empty Export*ServiceResponse), after reading the request.
With --hang it reads each request and never answers (a stuck collector).
Counts requests and bytes and prints them on SIGTERM, so a benchmark can say
what was exported. Loopback only.
"""
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

counts = {"requests": 0, "bytes": 0}
HANG = "--hang" in sys.argv[2:]


class Sink(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        self.rfile.read(n)
        counts["requests"] += 1
        counts["bytes"] += n
        if HANG:
            threading.Event().wait()
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink)
    server.daemon_threads = True
    # An exporter that closes its connection is not an error worth printing.
    server.handle_error = lambda *_: None

    def stop(*_):
        print(f"otlp sink: {counts['requests']} exports, {counts['bytes']} bytes", file=sys.stderr, flush=True)
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    server.serve_forever()


if __name__ == "__main__":
    main()
