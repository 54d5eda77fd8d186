#!/usr/bin/env python3
"""A tiny MCP server over stdio (newline-delimited JSON-RPC, revision 2025-11-25) whose tool
names carry a dot, as MCP allows and most providers do not: `weather.now` and `clock.now`.

    weather_server.py [--remote-ref] [CALL_LOG]

`weather.now` answers `structuredContent` {"place", "sky", "temp_c"} for its `location` (or
`city`) argument; `clock.now` answers a text content item. With `--remote-ref` it also lists
`place.find`, whose inputSchema holds a `$ref` to another document (which a validator that
fetches nothing refuses), and which answers the text "found <its near argument as JSON>". Every `tools/call` it gets is
appended to CALL_LOG as one JSON line {"name", "arguments"}, so a test sees which names
the server was called by. Python 3.9+, standard library only.
"""

import json
import sys

TOOLS = [
    {"name": "weather.now", "description": "The weather now at a place",
     "inputSchema": {"type": "object", "properties": {
         "location": {"type": "string", "description": "A place"},
         "city": {"type": "string", "description": "A city (instead of location)"}}}},
    {"name": "clock.now", "description": "The time now (UTC)",
     "inputSchema": {"type": "object"}},
]

PLACE_FIND = {"name": "place.find", "description": "A place near a point",
              "inputSchema": {"type": "object", "properties": {
                  "near": {"$ref": "https://example.com/point.json"}}}}


def answer(msg, log, tools):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "weather", "version": "1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": tools}
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"name": name, "arguments": args}) + "\n")
        if name == "weather.now":
            place = args.get("location") or args.get("city") or "nowhere"
            weather = {"place": place, "sky": "sunny", "temp_c": 21}
            return {"content": [{"type": "text", "text": json.dumps(weather)}],
                    "structuredContent": weather}
        if name == "place.find":
            return {"content": [{"type": "text", "text": "found " + json.dumps(args.get("near"))}]}
        if name == "clock.now":
            return {"content": [{"type": "text", "text": "2026-01-01T12:00:00Z"}]}
        return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}
    return None


def main():
    args = sys.argv[1:]
    tools = TOOLS
    if args[:1] == ["--remote-ref"]:
        args, tools = args[1:], TOOLS + [PLACE_FIND]
    log = args[0] if args else None
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue
        result = answer(msg, log, tools)
        if result is None:
            reply = {"jsonrpc": "2.0", "id": msg["id"],
                     "error": {"code": -32601, "message": "Method not found"}}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
