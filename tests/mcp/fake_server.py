#!/usr/bin/env python3
"""A stand-in MCP server for start-up failures: answers `initialize` with the protocol
version given, any other request (`server/discover` among them) with `-32601` as a server of
an earlier revision does, and ignores the rest until its stdin ends.

    fake_server.py PROTOCOL_VERSION

Python 3.9+, standard library only.
"""

import json
import sys


def main():
    version = sys.argv[1] if len(sys.argv) > 1 else "1999-01-01"
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
            continue
        if msg["method"] == "initialize":
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": version, "capabilities": {},
                "serverInfo": {"name": "fake", "version": "0"}}}
        else:
            answer = {"jsonrpc": "2.0", "id": msg["id"],
                      "error": {"code": -32601, "message": "Method not found"}}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
