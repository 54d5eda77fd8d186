"""The MCP client over Streamable HTTP (SPEC §9.11) through the Python binding: `McpClient.http`
against recorded exchanges (each POST's body and headers exact, responses in small pieces),
its refusals, and `McpHttpServer` / `connect_http` against real servers: the Python `mcp`
package's server (tests/mcp/http_server.py when the repository has it, else a small one
written here) in JSON and in event-stream mode, and server-everything's `streamableHttp`.

The real servers come from `target/mcp-servers/env.sh` as in test_mcp.py (skipped without
them unless `PW_REQUIRE_MCP_SERVERS=1`).
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import support  # noqa: E402,F401 (first: it decides which package the imports below find)

import polyweave_tool_adapter as pw  # noqa: E402
from polyweave_tool_adapter import mcp  # noqa: E402
from test_mcp import prompts, real_servers, tool_call  # noqa: E402

ENVELOPE = (
    '"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},'
    '"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}'
)
COMMON = b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
RESULT = '{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hi"}]}}'
ECHO_FRAMES = [
    b'{"type":"TOOL_RESULT","content":{"name":"echo","result":[{"type":"text","text":"hi"}]}}',
    b'{"type":"END"}',
]
CALL = b'{"type":"TOOL_CALL","content":{"name":"echo","args":{"m":"hi"}}}'


class Host:
    """An HTTP client on the test's side of a recorded exchange: `seen` the events (as short
    texts) and frames (`(index, frame)`) it gave."""

    def __init__(self, streams=2):
        self.c = mcp.McpClient.http(streams=streams, calls=4, name="t", version="1")
        self.c.start(0)
        self.seen = []

    def take(self):
        moved = True
        while moved:
            moved = False
            for e in self.c.events():
                moved = True
                if isinstance(e, mcp.Initialized):
                    self.seen.append("initialized " + e.protocol_version)
                elif isinstance(e, mcp.ToolListed):
                    self.seen.append("tool " + e.name)
                elif isinstance(e, mcp.Ready):
                    self.seen.append("ready %d" % e.tools)
                else:
                    self.seen.append(repr(e))
            for f in self.c.frames():
                moved = True
                self.seen.append((f.index, f.frame))
        seen, self.seen = self.seen, []
        return seen

    def post(self):
        self.take()
        return self.c.poll_request()

    def respond(self, stream, status, ct, body, piece, session=None):
        """A whole response, its body in pieces of `piece` bytes; what the host saw."""
        self.c.handle_response(stream, status, ct, session)
        seen = []
        raw = body.encode() if isinstance(body, str) else body
        at = 0
        while at < len(raw):
            n = self.c.feed_response(stream, raw[at:at + piece])
            assert n > 0, "stream %d took nothing" % stream
            at += n
            seen += self.take()
        self.c.handle_response_end(stream)
        return seen + self.take()

    def call(self, index):
        h = self.c.handle_frame((0, index), CALL)
        assert h.kind == mcp.HandledKind.SENT, h


def modern(streams=2):
    h = Host(streams)
    p = h.post()
    discover = ('{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],'
                '"capabilities":{"tools":{"listChanged":false}}}}')
    assert h.respond(p.stream, 200, "application/json", discover, 7) == ["initialized 2026-07-28"]
    p = h.post()
    listed = '{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"echo"}]}}'
    assert h.respond(p.stream, 200, "application/json", listed, 3) == ["tool echo", "ready 1"]
    return h


class Recorded(unittest.TestCase):
    def test_a_2026_server_json_and_event_stream_in_small_pieces(self):
        h = Host()
        self.assertTrue(h.c.is_http)
        p = h.post()
        self.assertEqual(p, mcp.McpPost(
            0,
            ('{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{%s}}}' % ENVELOPE).encode(),
            COMMON + b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n",
        ))
        self.assertEqual(p.header_items, [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
        ])
        self.assertIsNone(h.post())  # one request at a time at start-up
        discover = ('{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],'
                    '"capabilities":{"tools":{"listChanged":false}}}}')
        self.assertEqual(h.respond(0, 200, "application/json; charset=utf-8", discover, 5), ["initialized 2026-07-28"])
        p = h.post()
        self.assertEqual(p.body, ('{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{%s}}}' % ENVELOPE).encode())
        self.assertEqual(p.headers, COMMON + b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n")
        listed = '{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","tools":[{"name":"echo"}]}}'
        self.assertEqual(h.respond(p.stream, 200, "application/json", listed, 3), ["tool echo", "ready 1"])
        h.call(0)
        p = h.post()
        self.assertEqual(p.body, (
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"},'
            '"_meta":{"progressToken":3,%s}}}' % ENVELOPE).encode())
        self.assertEqual(
            p.headers, COMMON + b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n")
        self.assertEqual(h.respond(p.stream, 200, "application/json", RESULT % 3, 4), [(0, f) for f in ECHO_FRAMES])
        # Event streams (a priming event, a comment, progress, the result), in pieces of 1, 2, 5.
        for i, piece in enumerate((1, 2, 5)):
            index, rid = 1 + i, 4 + i
            h.call(index)
            p = h.post()
            sse = ('id: 0\ndata: \n\n: keep-alive\r\nevent: message\r\ndata: {"jsonrpc":"2.0","method":'
                   '"notifications/progress","params":{"progressToken":%d,"progress":1}}\r\n\r\ndata: %s\n\n'
                   % (rid, RESULT % rid))
            progress = b'{"type":"PROGRESS","content":{"progressToken":%d,"progress":1}}' % rid
            want = [(index, progress)] + [(index, f) for f in ECHO_FRAMES]
            self.assertEqual(h.respond(p.stream, 200, "text/event-stream", sse, piece), want, piece)
        self.assertEqual(h.c.in_flight, 0)
        self.assertIsNone(h.post())

    def test_a_2025_server_with_its_session_id(self):
        h = Host()
        p = h.post()
        refused = ('{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},'
                   '"id":null}')
        self.assertEqual(h.respond(p.stream, 400, "application/json", refused, 16), [])
        p = h.post()
        self.assertEqual(p.body, (
            b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
            b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'))
        self.assertEqual(p.headers, COMMON)
        init = ('{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{},'
                '"serverInfo":{"name":"s","version":"0"}}}')
        seen = h.respond(p.stream, 200, "text/event-stream", "event: message\nid: 1\ndata: %s\n\n" % init, 13,
                         session="sess-1")
        self.assertEqual(seen, ["initialized 2025-11-25"])
        with_session = COMMON + b"MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: sess-1\r\n"
        p = h.post()
        self.assertEqual((p.body, p.headers), (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', with_session))
        self.assertEqual(h.respond(p.stream, 202, "", "", 1), [])
        p = h.post()
        self.assertEqual((p.body, p.headers), (b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}', with_session))
        listed = '{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo"}]}}'
        self.assertEqual(h.respond(p.stream, 200, "application/json", listed, 8), ["tool echo", "ready 1"])
        h.call(0)
        p = h.post()
        self.assertEqual(p.body, (
            b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"},'
            b'"_meta":{"progressToken":4}}}'))
        self.assertEqual(p.headers, with_session)
        self.assertEqual(h.respond(p.stream, 200, "application/json", RESULT % 4, 6), [(0, f) for f in ECHO_FRAMES])

    def test_an_http_500_fails_the_call_with_its_status(self):
        h = modern()
        h.call(0)
        p = h.post()
        self.assertEqual(
            h.respond(p.stream, 500, "text/plain", "Internal Server Error", 4),
            [(0, b'{"type":"ERROR","content":{"message":"Tool echo failed: HTTP 500"}}')],
        )
        self.assertIsNone(h.post())
        self.assertEqual(h.c.in_flight, 0)

    def test_a_cancel_closes_the_calls_stream(self):
        h = modern()
        h.call(0)
        p = h.post()
        h.c.handle_response(p.stream, 200, "text/event-stream")
        handled = h.c.handle_frame((0, 0), b'{"type":"CANCEL","content":{"reason":"timeout"}}')
        self.assertEqual((handled.kind, handled.notified), (mcp.HandledKind.CANCELLED, True))
        self.assertEqual(h.c.poll_request(), mcp.McpClose(p.stream))
        self.assertIsNone(h.c.poll_request())  # no notifications/cancelled in 2026-07-28
        with self.assertRaises(pw.McpUnknownStream):
            h.c.feed_response(p.stream, "data: %s\n\n" % (RESULT % 3))
        self.assertEqual(h.take(), [])
        self.assertEqual(h.c.in_flight, 0)

    def test_each_refusal_its_class_and_nothing_changed(self):
        h = modern(3)
        h.call(0)
        h.call(1)
        a, b = h.post(), h.post()
        self.assertEqual((a.stream, b.stream), (0, 1))
        cases = [
            (pw.McpUnknownStream, 510, lambda: h.c.handle_response(2, 200, "application/json")),
            (pw.McpUnknownStream, 510, lambda: h.c.handle_response_end(9)),
            (pw.McpNoHead, 512, lambda: h.c.feed_response(0, RESULT % 3)),
        ]
        for cls, code, fn in cases:
            with self.assertRaises(cls) as caught:
                fn()
            self.assertIsInstance(caught.exception, pw.McpRefused)
            self.assertEqual(caught.exception.code, code)
            self.assertIs(pw.errors.BY_CODE[code], cls)
        h.c.handle_response(0, 200, "application/json")
        with self.assertRaises(pw.McpHeadTwice) as caught:
            h.c.handle_response(0, 500, "text/plain")
        self.assertEqual(caught.exception.code, 511)
        self.assertEqual(h.c.feed_response(0, RESULT % 3), len(RESULT % 3))
        h.c.handle_response_end(0)
        # A's frames are owed: B's head waits.
        with self.assertRaises(pw.McpPollFirst) as caught:
            h.c.handle_response(1, 200, "application/json")
        self.assertEqual(caught.exception.code, 513)
        self.assertEqual(h.take(), [(0, f) for f in ECHO_FRAMES])
        self.assertEqual(h.respond(1, 200, "application/json", RESULT % 4, 9), [(1, f) for f in ECHO_FRAMES])
        self.assertEqual(h.c.in_flight, 0)

    def test_a_line_client_refuses_the_http_entries(self):
        c = pw.McpClient(calls=2)
        c.start(0)
        self.assertFalse(c.is_http)
        for fn in (c.poll_request, lambda: c.handle_response(0, 200, "application/json"),
                   lambda: c.feed_response(0, b"{}"), lambda: c.handle_response_end(0)):
            with self.assertRaises(pw.McpNotHttp) as caught:
                fn()
            self.assertEqual(caught.exception.code, 509)
        self.assertTrue(c.poll_transmit().startswith(b'{"jsonrpc":"2.0","id":1,"method":"server/discover"'))
        with self.assertRaises(ValueError):
            mcp.McpClient.http(streams=0)

    def test_sizes(self):
        cfg = pw.McpConfig()
        # 308 for the fixed lines, a Base64 name and a session; 8 per byte of the 512-byte
        # x-mcp-header table; the Base64 of an outbox's worth (4,096) of values.
        self.assertEqual(cfg.max_headers_len, 308 + 8 * 512 + 11 + 4 * 1366)
        line = pw.McpClient(calls=4, config=cfg)
        one = pw.McpClient.http(streams=1, calls=4, config=cfg)
        three = pw.McpClient.http(streams=3, calls=4, config=cfg)
        self.assertEqual(three.memory_size - one.memory_size, 2 * (one.memory_size - line.memory_size))
        self.assertLessEqual(one.memory_size - line.memory_size, pw._ffi.PW_MCP_MAX_STREAM_SIZE)


# ------------------------------------------------------------ real servers

SMALL_SERVER = '''
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer(name="polyweave-http-test", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(message: str) -> str:
    """Says the message back."""
    return f"Echo: {message}"


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleeps, telling its progress every quarter second."""
    steps = max(1, int(seconds / 0.25))
    for step in range(steps):
        await ctx.report_progress(step, steps)
        await anyio.sleep(seconds / steps)
    return f"slept {seconds:g}"


server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]),
           json_response="--json-response" in sys.argv)
'''


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError("the server exited with %s" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server did not listen on %d within %d s" % (port, seconds))


class PythonServer:
    """The Python `mcp` package's server on a free loopback port, in JSON or event-stream mode."""

    def __init__(self, python, json_response):
        self.port = free_port()
        script = os.path.join(support.ROOT, "tests", "mcp", "http_server.py")
        self.tmp = None
        if not os.path.isfile(script):
            self.tmp = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
            self.tmp.write(SMALL_SERVER)
            self.tmp.close()
            script = self.tmp.name
        args = [python, script, "--port", str(self.port)] + (["--json-response"] if json_response else [])
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(self.port, self.proc)
        self.url = "http://127.0.0.1:%d/mcp" % self.port

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.tmp is not None:
            os.unlink(self.tmp.name)


class _PythonHttp:
    json_response = True

    @classmethod
    def setUpClass(cls):
        _, time_bin = real_servers()
        python = os.path.join(os.path.dirname(time_bin), "python")
        cls.server = PythonServer(python, cls.json_response)
        cls.log = []
        cls.client = pw.connect_http(cls.server.url, extra_tools=["nope"], log=lambda d, b: cls.log.append((d, b)))

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.server.stop()

    def test_spoken_to_in_2026_07_28_and_echo_answered_once(self):
        s = self.client
        self.assertEqual(s.protocol_version, "2026-07-28")
        self.assertIn("echo", [t.name for t in s.tools])
        sent = s.run([tool_call("echo", "e1", {"message": "hi"})])
        # The structured content, which the SDK gives a `str` result as `{"result": ...}`.
        self.assertEqual(
            [(x.to, x.frame) for x in sent],
            [("model", b'{"type":"TOOL_RESULT","content":{"id":"e1","name":"echo","result":{"result":"Echo: hi"}}}')]
            + prompts(),
        )
        bodies = [json.loads(b) for d, b in self.log if d == "send"]
        self.assertEqual([m.get("method") for m in bodies[:2]], ["server/discover", "tools/list"])
        self.assertEqual(s.client.in_flight, 0)

    def test_progress_then_the_result_answered_once(self):
        sent = self.client.run([tool_call("slow", "s1", {"seconds": 0.5})])
        self.assertEqual(
            [(x.to, x.frame) for x in sent],
            [("model", b'{"type":"TOOL_RESULT","content":{"id":"s1","name":"slow","result":{"result":"slept 0.5"}}}')]
            + prompts(),
        )
        self.assertEqual(self.client.client.in_flight, 0)

    def test_a_timeout_closes_the_calls_connection(self):
        log = []
        with pw.connect_http(self.server.url, timeout_ms=150, log=lambda d, b: log.append((d, b))) as s:
            with self.assertRaises(pw.McpToolError) as caught:
                s.call("slow", {"seconds": 3})
            self.assertEqual(str(caught.exception), "Tool slow timed out after 150ms")
            self.assertEqual(s.client.in_flight, 0)
            # Cancelled by closing its stream (SPEC §9.10): no notifications/cancelled is posted.
            methods = [json.loads(b).get("method") for d, b in log if d == "send"]
            self.assertNotIn("notifications/cancelled", methods)
            self.assertEqual(methods.count("tools/call"), 1)
            self.assertEqual(s.call("echo", {"message": "after"}), {"result": "Echo: after"})

    def test_unknown_tool(self):
        e = "Unknown tool: nope"
        sent = self.client.run([tool_call("nope", "n1", {})])
        self.assertEqual(
            [(x.to, x.frame) for x in sent],
            [("model", ('{"type":"TOOL_RESULT","content":{"id":"n1","name":"nope","error":"%s"}}' % e).encode())]
            + prompts(e),
        )


class PythonServerJson(_PythonHttp, unittest.TestCase):
    json_response = True


class PythonServerSse(_PythonHttp, unittest.TestCase):
    json_response = False


class EverythingHttp(unittest.TestCase):
    """server-everything's `streamableHttp`: 2025-11-25 with a session, every answer an event
    stream."""

    @classmethod
    def setUpClass(cls):
        everything, _ = real_servers()
        cls.port = free_port()
        env = dict(os.environ, PORT=str(cls.port))
        cls.proc = subprocess.Popen(["node", everything, "streamableHttp"], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        try:
            wait_listening(cls.port, cls.proc)
            cls.log = []
            cls.client = pw.connect_http("http://127.0.0.1:%d/mcp" % cls.port, log=lambda d, b: cls.log.append((d, b)))
        except BaseException:
            cls.proc.kill()
            cls.proc.wait()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.proc.terminate()
        try:
            cls.proc.wait(5)
        except subprocess.TimeoutExpired:
            cls.proc.kill()
            cls.proc.wait()

    def test_echo_answered_once_in_2025_11_25(self):
        s = self.client
        self.assertEqual(s.protocol_version, "2025-11-25")
        self.assertEqual(s.tools[0].name, "echo")
        sent = s.run([tool_call("echo", "c1", {"message": "hi"})])
        self.assertEqual(
            [(x.to, x.frame) for x in sent],
            [("model", b'{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[{"type":"text","text":"Echo: hi"}]}}')]
            + prompts(),
        )
        methods = [json.loads(b).get("method") for d, b in self.log if d == "send"]
        self.assertEqual(methods[:4], ["server/discover", "initialize", "notifications/initialized", "tools/list"])


if __name__ == "__main__":
    unittest.main()
