"""Interop client built on the official Python MCP SDK (PyPI `mcp`, see requirements.txt).

    .venv/bin/python py_client.py --mode legacy|discover|pinned [--timeout S] -- CMD [ARGS...]
    .venv/bin/python py_client.py --mode legacy|discover|pinned [--timeout S] --url URL

Spawns CMD as a stdio MCP server (through stdio_tap.py, so the exchange is
recorded), or connects to URL over Streamable HTTP (recording every request
body the SDK POSTs), connects in the chosen mode, lists the tools, calls
`echo` {"text": ...} and `add` {"a": 2, "b": 3}, and checks every answer.

Modes (all supported by mcp 2.3.0's `Client(mode=...)`):
  legacy    mode="legacy": the initialize handshake; the negotiated version
            must be one of tessera's handshake versions.
  discover  mode="auto": the SDK probes `server/discover` at 2026-07-28 and
            only falls back to initialize when the probe fails. The check
            demands that it did NOT fall back: protocol 2026-07-28, no
            initialize on the wire, `_meta` on every request.
  pinned    mode="2026-07-28": no probe at all; requests carry the
            2026-07-28 `_meta` envelope from the first one on.

Exit status: 0 all checks passed, 1 a check failed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import Implementation
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

HERE = Path(__file__).resolve().parent
MODERN_VERSION = "2026-07-28"
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
TESSERA_HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SDK_MODE = {"legacy": "legacy", "discover": "auto", "pinned": MODERN_VERSION}


class CheckFailed(Exception):
    pass


class Wire:
    """Reads the exchange that stdio_tap.py recorded."""

    def __init__(self, path: Path, http: bool = False) -> None:
        self.path = path
        self.http = http

    def record(self, direction: str, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"dir": direction, "line": line}) + "\n")

    def messages(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return out
        for line in lines:
            entry = json.loads(line)
            try:
                msg = json.loads(entry["line"])
            except ValueError:
                msg = entry["line"]  # not JSON: keep the raw text
            out.append((entry["dir"], msg))
        return out

    def requests(self) -> list[dict[str, Any]]:
        return [m for d, m in self.messages() if d == "c2s" and isinstance(m, dict) and "method" in m and "id" in m]

    def exchange(self, method: str) -> str:
        """The last request with `method` and the response to it, for a failure message."""
        reqs = [r for r in self.requests() if r["method"] == method]
        if not reqs:
            return f"  no {method} request was sent"
        req = reqs[-1]
        resp = next(
            (
                m
                for d, m in self.messages()
                if d == "s2c" and isinstance(m, dict) and m.get("id") == req["id"] and ("result" in m or "error" in m)
            ),
            None,
        )
        if resp is not None:
            received = clip(resp)
        elif self.http:
            received = "(responses are not recorded over HTTP)"
        else:
            exits = [m for d, m in self.messages() if d == "exit"]
            received = f"(no response; the server exited with status {exits[0]})" if exits else "(no response)"
        return f"  sent:     {clip(req)}\n  received: {received}"


def clip(value: Any, limit: int = 2000) -> str:
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def single_text(result: Any) -> str | None:
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    return texts[0] if len(texts) == 1 else None


def http_transport(url: str, wire: Wire) -> Any:
    """The SDK's Streamable HTTP transport, with every POSTed body recorded in `wire`."""

    async def on_request(request: Any) -> None:
        if request.method == "POST":
            for line in request.content.decode("utf-8", errors="replace").splitlines():
                wire.record("c2s", line)

    http_client = create_mcp_http_client()
    http_client.event_hooks = {"request": [on_request], "response": []}
    return streamable_http_client(url, http_client=http_client)


async def run_checks(mode: str, command: list[str], url: str | None, timeout: float, wire: Wire) -> None:
    if url is not None:
        params: Any = http_transport(url, wire)
    else:
        params = StdioServerParameters(
            command=sys.executable,
            args=[str(HERE / "stdio_tap.py"), str(wire.path), "--", *command],
            env=dict(os.environ),
        )
    step, method = "connect", "initialize" if mode == "legacy" else "server/discover"

    def fail(why: str) -> None:
        raise CheckFailed(f"{step}: {why}\n{wire.exchange(method)}")

    try:
        client = Client(
            params,
            mode=SDK_MODE[mode],
            client_info=Implementation(name="tessera-interop-py", version="0.0.0"),
            read_timeout_seconds=timeout,
        )
        async with client:
            version = client.protocol_version
            session = client.session
            if mode == "legacy":
                if version not in TESSERA_HANDSHAKE_VERSIONS:
                    fail(f"negotiated protocolVersion {version!r} is not one of {', '.join(TESSERA_HANDSHAKE_VERSIONS)}")
            elif mode == "discover":
                if session.discover_result is None:
                    fail(
                        f"server/discover was not accepted: the SDK fell back to the initialize handshake "
                        f"(negotiated {version!r})"
                    )
                if version != MODERN_VERSION:
                    fail(f"negotiated {version!r}, expected {MODERN_VERSION}")
                supported = session.discover_result.supported_versions
                if MODERN_VERSION not in supported:
                    fail(f"server/discover supportedVersions {supported} lacks {MODERN_VERSION}")
            elif version != MODERN_VERSION:
                fail(f"pinned client reports version {version!r}")
            info = client.server_info
            who = f"{info.name} {info.version}" if info is not None else "(server did not identify itself)"
            print(f"ok   connect ({mode}): protocolVersion {version}, server {who}")

            step, method = "tools/list", "tools/list"
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("echo", "add"):
                if name not in tools:
                    fail(f"tool {name!r} is missing (got: {', '.join(tools) or 'none'})")
                schema = tools[name].input_schema
                if not isinstance(schema, dict) or schema.get("type") != "object":
                    fail(f"tool {name!r} has no object inputSchema (got {schema!r})")
            print(f"ok   tools/list: {len(tools)} tools, echo and add have an inputSchema")

            text_in = f"hello from python ({mode})"
            for name, args, want in (("echo", {"text": text_in}, text_in), ("add", {"a": 2, "b": 3}, "5")):
                step, method = f"tools/call {name}", "tools/call"
                result = await client.call_tool(name, args)
                if result.is_error:
                    fail("result has isError: true")
                got = single_text(result)
                if got is None:
                    fail("expected exactly one text content block")
                if got != want:
                    fail(f"expected text {want!r}, got {got!r}")
                print(f"ok   {step} {json.dumps(args)} -> {got!r}")
    except BaseException as exc:  # SDK errors, validation errors, timeouts, task-group wrappers
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        inner = innermost(exc)
        if isinstance(inner, CheckFailed):
            raise inner from None
        raise CheckFailed(f"{step}: {describe(inner)}\n{wire.exchange(method)}") from None

    step = "wire"
    check_wire(mode, wire)
    print(f"ok   wire: {describe_wire(mode)}")


def innermost(exc: BaseException) -> BaseException:
    """Unwrap exception groups (anyio task groups) down to the first real error."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", "\n  ")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def describe_wire(mode: str) -> str:
    if mode == "legacy":
        return "initialize came first"
    first = "server/discover came first, " if mode == "discover" else ""
    return f"{first}no initialize, every request carried the {MODERN_VERSION} _meta envelope"


def check_wire(mode: str, wire: Wire) -> None:
    reqs = wire.requests()
    methods = [r["method"] for r in reqs]
    if not reqs:
        raise CheckFailed("wire: no requests were recorded")
    if mode == "legacy":
        if methods[0] != "initialize":
            raise CheckFailed(f"wire: first request was {methods[0]!r}, expected initialize")
        return
    if "initialize" in methods:
        raise CheckFailed(f"wire: the client sent initialize in {mode} mode (requests: {methods})")
    if mode == "discover" and methods[0] != "server/discover":
        raise CheckFailed(f"wire: first request was {methods[0]!r}, expected server/discover")
    for req in reqs:
        meta = (req.get("params") or {}).get("_meta") or {}
        if meta.get(PROTOCOL_VERSION_KEY) != MODERN_VERSION or not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict):
            raise CheckFailed(f"wire: request without the {MODERN_VERSION} _meta envelope: {clip(req)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=sorted(SDK_MODE), required=True)
    parser.add_argument("--timeout", type=float, default=15.0, help="per-request timeout in seconds")
    parser.add_argument("--keep-wire", metavar="FILE", help="record the exchange in FILE and keep it")
    parser.add_argument("--url", help="a Streamable HTTP endpoint instead of a stdio command")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    ns = parser.parse_args()
    command = ns.command[1:] if ns.command[:1] == ["--"] else ns.command
    if not command and ns.url is None:
        parser.error("missing server command after -- (or --url URL)")
    if command and ns.url is not None:
        parser.error("give either --url URL or -- CMD, not both")

    if HANDSHAKE_PROTOCOL_VERSIONS[-1] not in TESSERA_HANDSHAKE_VERSIONS:
        print(f"note: the SDK's newest handshake version is {HANDSHAKE_PROTOCOL_VERSIONS[-1]}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="py-interop-") as tmp:
        wire = Wire(Path(ns.keep_wire) if ns.keep_wire else Path(tmp) / "wire.jsonl", http=ns.url is not None)
        if ns.keep_wire:
            wire.path.write_text("", encoding="utf-8")
        try:
            anyio.run(run_checks, ns.mode, command, ns.url, ns.timeout, wire)
        except CheckFailed as exc:
            print(f"FAIL {exc}", file=sys.stderr)
            return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
