"""An MCP server over Streamable HTTP for the client's tests (tests/tests/mcp_http_servers.rs),
written with the Python `mcp` package (2.x, installed by tests/mcp/install.sh). It speaks both
revisions: 2026-07-28 to a client that sends the revision's headers and `_meta` envelope, and
the 2025-11-25 handshake otherwise.

    python http_server.py --port N [--json-response]

serves http://127.0.0.1:N/mcp. Tools:
  echo(message)   -> the text "Echo: <message>"
  add(a, b)       -> structured output {"sum": a + b}
  slow(seconds)   -> progress notifications (one every 0.25 s) while it sleeps, then the
                     text "slept <seconds>"
  fail()          -> raises: the result is an error ("fail was asked to fail")
"""

import argparse

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError


class Sum(BaseModel):
    sum: int


def build() -> MCPServer:
    server = MCPServer(name="polyweave-http-test", version="1.0.0", log_level="WARNING")

    @server.tool()
    def echo(message: str) -> str:
        """Says the message back."""
        return f"Echo: {message}"

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Adds two integers."""
        return Sum(sum=a + b)

    @server.tool()
    async def slow(seconds: float, ctx: Context) -> str:
        """Sleeps, telling its progress every quarter second."""
        steps = max(1, int(seconds / 0.25))
        for step in range(steps):
            await ctx.report_progress(step, steps)
            await anyio.sleep(seconds / steps)
        return f"slept {seconds:g}"

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise ToolError("fail was asked to fail")

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--json-response",
        action="store_true",
        help="answer every POST with application/json (default: SSE where the SDK streams)",
    )
    args = parser.parse_args()
    build().run(
        transport="streamable-http",
        host="127.0.0.1",
        port=args.port,
        json_response=args.json_response,
    )


if __name__ == "__main__":
    main()
