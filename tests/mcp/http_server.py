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
  weather.report(city)
                  -> structured output {"city": city, "temp_c": T}: T is 21 for "Paris" and
                     the string "unknown" for any other city, which breaks the outputSchema
                     the listing declares for it (temp_c a number)
"""

import argparse
import json

import anyio
from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, Tool

WEATHER_OUTPUT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "temp_c": {"type": "number"}},
    "required": ["city", "temp_c"],
}


class Sum(BaseModel):
    sum: int


class Server(MCPServer):
    """Lists `weather.report` with an outputSchema its results need not keep to: the SDK
    checks a typed tool's results against their schema itself, an untyped one's it lists none."""

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        return [
            t.model_copy(update={"output_schema": WEATHER_OUTPUT}) if t.name == "weather.report" else t
            for t in tools
        ]


def build() -> MCPServer:
    server = Server(name="polyweave-http-test", version="1.0.0", log_level="WARNING")

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

    @server.tool(name="weather.report")
    def weather_report(city: str) -> CallToolResult:
        """The temperature in a city, when it knows the city."""
        report = {"city": city, "temp_c": 21 if city == "Paris" else "unknown"}
        text = TextContent(type="text", text=json.dumps(report))
        return CallToolResult(content=[text], structured_content=report)

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
