"""Writes tests/data/mcp-tool-schemas.ndjson: the `inputSchema` and `outputSchema` of every
tool of the real MCP servers the tests install (tests/mcp/install.sh) and of the project's own
test servers, listed over MCP itself (`initialize`, then `tools/list` page by page), so that
tests/schema/differential.py runs without starting a server.

    . target/mcp-servers/env.sh          # after bash tests/mcp/install.sh
    target/mcp-servers/venv/bin/python tests/schema/collect.py [OUT]

One line per schema, in the servers' order: {"package", "server", "version", "tool", "kind",
"schema"}: `package` what was installed (the npm or PyPI package and its version, or the file
of this repository), `server` and `version` as the server's `initialize` answer names itself
(`serverInfo`), `kind` `inputSchema` or `outputSchema`. Python 3.11+, standard library only.
"""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REVISION = "2025-11-25"
INITIALIZE = {
    "protocolVersion": REVISION,
    # Every client capability: server-everything lists the tools that need one only then.
    "capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}},
    "clientInfo": {"name": "polyweave-schema-collect", "version": "1"},
}


class Stdio:
    """A server over stdio: newline-delimited JSON-RPC."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, encoding="utf-8", cwd=ROOT,
        )
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{method}: the server closed its output")
            reply = json.loads(line)
            # Notifications and the server's own requests (logging, roots) are skipped.
            if reply.get("id") == self.next_id and "method" not in reply:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def notify(self, method):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Http:
    """A server over Streamable HTTP that answers each POST with application/json."""

    def __init__(self, argv_without_port):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(
            [*argv_without_port, "--port", str(self.port), "--json-response"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.session = None
        self.next_id = 0
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"{argv_without_port}: no server on port {self.port}")
                time.sleep(0.1)

    def post(self, msg):
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": REVISION,
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        req = urllib.request.Request(self.url, json.dumps(msg).encode(), headers, method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            self.session = resp.headers.get("Mcp-Session-Id") or self.session
            body = resp.read()
        return json.loads(body) if body.strip() else None

    def request(self, method, params):
        self.next_id += 1
        reply = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def notify(self, method):
        self.post({"jsonrpc": "2.0", "method": method})

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def list_schemas(server):
    """(serverInfo, [(tool, kind, schema)]) of one started server."""
    try:
        info = server.request("initialize", INITIALIZE)["serverInfo"]
        server.notify("notifications/initialized")
        out, cursor = [], None
        while True:
            page = server.request("tools/list", {"cursor": cursor} if cursor else {})
            for tool in page["tools"]:
                for kind in ("inputSchema", "outputSchema"):
                    if kind in tool:
                        out.append((tool["name"], kind, tool[kind]))
            cursor = page.get("nextCursor")
            if not cursor:
                return info, out
    finally:
        server.close()


def npm_version(js):
    """The version in the package.json of the npm package that holds `js`."""
    for parent in Path(js).parents:
        manifest = parent / "package.json"
        if manifest.is_file():
            meta = json.loads(manifest.read_text(encoding="utf-8"))
            if "name" in meta and "version" in meta:
                return f"{meta['name']}@{meta['version']}"
    raise RuntimeError(f"no package.json above {js}")


def pip_version(python, package):
    """`package==version` as installed for `python`."""
    version = subprocess.run(
        [python, "-c", "import sys, importlib.metadata as m; print(m.version(sys.argv[1]))", package],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    return f"{package}=={version}"


def servers():
    """The servers listed: (package, a function that starts it)."""
    everything = os.environ.get("PW_MCP_EVERYTHING")
    time_bin = os.environ.get("PW_MCP_TIME")
    if not everything or not time_bin:
        sys.exit("collect.py: PW_MCP_EVERYTHING and PW_MCP_TIME unset: "
                 "bash tests/mcp/install.sh >/dev/null && . target/mcp-servers/env.sh")
    python = str(Path(time_bin).parent / "python")
    return [
        (npm_version(everything), lambda: Stdio(["node", everything, "stdio"])),
        (pip_version(python, "mcp-server-time"), lambda: Stdio([time_bin])),
        (f"tests/mcp/http_server.py on {pip_version(python, 'mcp')}",
         lambda: Http([python, "tests/mcp/http_server.py"])),
        ("tests/mcp/weather_server.py", lambda: Stdio([python, "tests/mcp/weather_server.py"])),
    ]


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests/data/mcp-tool-schemas.ndjson"
    lines = []
    for package, start in servers():
        info, schemas = list_schemas(start())
        for tool, kind, schema in schemas:
            lines.append(json.dumps({
                "package": package, "server": info["name"], "version": info["version"],
                "tool": tool, "kind": kind, "schema": schema,
            }, ensure_ascii=False))
        print(f"{package} ({info['name']} {info['version']}): {len(schemas)} schemas", file=sys.stderr)
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(f"{len(lines)} schemas written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
