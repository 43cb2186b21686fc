"""The benchmark's `echo` server on the official MCP Python SDK (MCPServer).

    python server.py --stdio
    python server.py --port PORT --stateful     sessions, SSE responses
    python server.py --port PORT --stateless    no sessions, JSON responses

Streamable HTTP on 127.0.0.1:PORT/mcp, served by uvicorn as `MCPServer.run("streamable-http")`
does, except that the access log is off (it would otherwise print one line per request).
A 2026-07-28 request (MCP-Protocol-Version header) takes the SDK's modern path in either mode.
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="py-echo", version="0.0.0")


@server.tool(description="Sends the text back")
def echo(text: str) -> str:
    return text


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--stdio", action="store_true")
    p.add_argument("--port", type=int)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--stateful", dest="stateful", action="store_true", default=True)
    g.add_argument("--stateless", dest="stateful", action="store_false")
    a = p.parse_args()
    if a.stdio:
        server.run("stdio")
        return
    if a.port is None:
        p.error("--port or --stdio is required")

    import uvicorn

    app = server.streamable_http_app(
        json_response=not a.stateful,
        stateless_http=not a.stateful,
        host="127.0.0.1",
    )
    config = uvicorn.Config(app, host="127.0.0.1", port=a.port, log_level="warning", access_log=False)
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
