#!/usr/bin/env python3
"""A stand-in MCP server for start-up failures: answers `initialize` with the protocol
version given, then reads (and ignores) everything until its stdin ends.

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
        if isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg:
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": version, "capabilities": {},
                "serverInfo": {"name": "fake", "version": "0"}}}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
