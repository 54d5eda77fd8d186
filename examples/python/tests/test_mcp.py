"""The MCP client (SPEC §9) through the Python binding: `McpClient` against a scripted server
(exact lines and frames), `McpServer` against small Python servers, and `McpServer` against the
two real servers `tests/mcp/install.sh` installs (server-everything and mcp-server-time).

The real-server cases read `target/mcp-servers/env.sh` (or `PW_MCP_EVERYTHING` / `PW_MCP_TIME`
from the environment). Without them they are skipped with the reason printed, unless
`PW_REQUIRE_MCP_SERVERS=1` (tests/run.sh sets it): then they fail, saying what to run.
"""

import json
import os
import shlex
import subprocess
import sys
import time
import unittest

import support  # noqa: E402,F401 (first: it decides which package the imports below find)

import polyweave_tool_adapter as pw  # noqa: E402
from polyweave_tool_adapter import mcp  # noqa: E402

ROOT = str(support.ROOT)
RESULTS = b'{"type":"TEXT","content":"Tool results above."}'
INIT = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"polyweave-python","version":"0.1.0"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def rpc(**members):
    """A server line: a JSON-RPC 2.0 message, LF terminated."""
    return (json.dumps({"jsonrpc": "2.0", **members}, separators=(",", ":")) + "\n").encode()


def tool_call(name, id=None, args=None):
    content = {} if id is None else {"id": id}
    content["name"] = name
    if args is not None:
        content["args"] = args
    return json.dumps({"type": "TOOL_CALL", "content": content}, separators=(",", ":")).encode()


def prompts(error=None):
    text = "Tool results above." + ("" if error is None else " Last tool error: " + error)
    frame = json.dumps({"type": "TEXT", "content": text}, separators=(",", ":"), ensure_ascii=False).encode()
    return [("model", frame), ("consumer", frame)]


class Host:
    """A wrapper whose adapter tools an `McpClient` serves, on a manual clock, the server
    played by the test: `lines` the client wrote, `sent` what the wrapper sent to the model
    and the consumer, `frames` the client's frames for the wrapper, `events` its events. The
    client is fixed to 2025-11-25 (its handshake is what most scripts here play) unless
    `revision` says otherwise."""

    def __init__(self, tools=("echo",), slots=2, timeout_ms=1000, max_total_ms=0, **client_fields):
        client_fields.setdefault("revision", "2025-11-25")
        self.now = 0
        self.config = pw.WrapperConfig(tool_timeout_ms=timeout_ms, max_total_timeout_ms=max_total_ms, result_cap=4096,
                                message_cap=1024, args_cap=1024)
        self.wrapper = pw.Wrapper({t: pw.adapter() for t in tools}, slots=slots, config=self.config)
        self.client = pw.McpClient(calls=slots, wrapper_config=self.config, **client_fields)
        self.lines, self.sent, self.frames, self.events = [], [], [], []
        self.handles = {}
        self.requests = []  # Handled of every adapter frame

    def close(self):
        self.wrapper.close()
        self.client.close()

    def pump(self):
        moved = True
        while moved:
            moved = False
            for t in self.wrapper.transmits():
                moved = True
                if t.route == pw.Route.ADAPTER:
                    self.handles[(t.handle.slot, t.handle.index)] = t.handle
                    self.requests.append(self.client.handle_frame(t.handle, t.frame))
                else:
                    self.sent.append(("model" if t.route == pw.Route.MODEL else "consumer", t.frame))
            list(self.wrapper.events())
            for e in self.client.events():
                moved = True
                self.events.append(e)
            for f in self.client.frames():
                moved = True
                self.frames.append(f.frame)
                try:
                    self.wrapper.handle_adapter_frame(self.now, self.handles[(f.slot, f.index)], f.frame)
                except pw.CallNotWaiting:
                    pass
            for line in self.client.transmits():
                moved = True
                self.lines.append(line)

    def server(self, data):
        """Bytes from the server, fed line by line with a pump after each."""
        off = 0
        while off < len(data):
            n = self.client.feed(data, off)
            self.pump()
            if n == 0:
                n = self.client.feed(data, off)
                assert n > 0, "feed takes nothing after a full drain"
            off += n
        self.pump()

    def model(self, frame):
        d = self.wrapper.handle_response(self.now, frame)
        if d.disposition == pw.Disposition.FORWARD:
            self.sent.append(("consumer", frame))
        self.pump()
        return d

    def tick(self, now):
        self.now = now
        self.wrapper.handle_timeout(now)
        self.pump()

    def start(self, tools=("echo",)):
        self.client.start(self.now)
        self.pump()
        self.server(rpc(id=1, result={"protocolVersion": "2025-11-25"}))
        self.server(rpc(id=2, result={"tools": [{"name": t, "inputSchema": {"type": "object"}} for t in tools]}))
        assert self.client.state == mcp.McpState.READY
        self.lines.clear()
        self.sent.clear()
        self.frames.clear()
        self.events.clear()
        return self


class StartUp(unittest.TestCase):
    def test_start_up_lines_events_and_pagination_are_exact(self):
        h = Host(name="polyweave-python", version="0.1.0")
        try:
            self.assertEqual(h.client.state, mcp.McpState.IDLE)
            self.assertIsNone(h.client.poll_transmit())
            h.client.start(h.now)
            self.assertEqual(h.client.state, mcp.McpState.STARTING)
            self.assertEqual((h.client.poll_timeout(), h.client.protocol_version), (None, None))
            h.pump()
            self.assertEqual(h.lines, [INIT])
            h.server(rpc(id=1, result={"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1"}}))
            self.assertEqual(
                h.events,
                [mcp.Initialized("2025-06-18", b'{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"1"}}')],
            )
            self.assertEqual(h.events[0].json["serverInfo"]["name"], "s")
            self.assertEqual(h.client.protocol_version, "2025-06-18")
            self.assertEqual(h.lines[1:], [INITIALIZED, b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'])
            h.server(rpc(id=2, result={"tools": [{"name": "echo", "description": "Echoes"}], "nextCursor": "page 2"}))
            self.assertEqual(h.lines[3:], [b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"page 2"}}\n'])
            h.server(b'{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"t\\u0069me"},{"x":1},{"name":"' + b"n" * 65
                     + b'"}]}}\r\n')
            self.assertEqual(
                h.events[1:],
                [
                    mcp.ToolListed("echo", b'{"name":"echo","description":"Echoes"}'),
                    mcp.ToolListed("time", b'{"name":"t\\u0069me"}'),
                    mcp.ToolSkipped(mcp.SkipReason.NO_NAME, b'{"x":1}'),
                    mcp.ToolSkipped(mcp.SkipReason.NAME_TOO_LONG, b'{"name":"' + b"n" * 65 + b'"}', 65, 64),
                    mcp.Ready(2),
                ],
            )
            self.assertEqual(h.events[1].json, {"name": "echo", "description": "Echoes"})
            self.assertEqual(h.client.state, mcp.McpState.READY)
            self.assertEqual(len(h.lines), 4)
            s = h.client.stats()
            self.assertEqual((s.lines, s.calls, s.answered), (3, 0, 0))
        finally:
            h.close()

    def test_an_unsupported_revision_fails_the_start_up_and_later_calls(self):
        h = Host()
        try:
            h.client.start(h.now)
            h.pump()
            h.server(rpc(id=1, result={"protocolVersion": "1999-01-01"}))
            self.assertEqual(h.events, [mcp.StartFailed(mcp.StartError.UNSUPPORTED_VERSION, b'"1999-01-01"')])
            self.assertEqual(h.client.state, mcp.McpState.FAILED)
            h.model(tool_call("echo", "e", {}))
            self.assertEqual(h.requests[-1].failure, mcp.Failure.NOT_STARTED)
            self.assertEqual(
                h.sent[0],
                ("model", b'{"type":"TOOL_RESULT","content":{"id":"e","name":"echo",'
                          b'"error":"Tool echo failed: the MCP server did not start"}}'),
            )
        finally:
            h.close()

    def test_config_fits_the_wrapper_and_reports_sizes(self):
        d = pw.McpConfig()
        self.assertEqual((d.revision, d.start_timeout_ms), (mcp.McpRevision.AUTO, 10000))
        self.assertEqual(pw._ffi.PW_MCP_DEFAULT_START_TIMEOUT_MS, 10000)
        self.assertEqual(
            [pw.McpConfig(revision=r).revision for r in ("auto", "2025-11-25", "2026-07-28", mcp.McpRevision.V2026_07_28)],
            [mcp.McpRevision.AUTO, mcp.McpRevision.V2025_11_25, mcp.McpRevision.V2026_07_28, mcp.McpRevision.V2026_07_28],
        )
        self.assertEqual(pw.McpConfig(revision="2026-07-28")._c().revision, pw._ffi.PW_MCP_REVISION_2026_07_28)
        with self.assertRaises(ValueError):
            pw.McpConfig(revision="2024-11-05")
        fitted = pw.McpConfig(revision="2026-07-28", start_timeout_ms=7).fit(pw.WrapperConfig())
        self.assertEqual((fitted.revision, fitted.start_timeout_ms), (mcp.McpRevision.V2026_07_28, 7))
        self.assertIn("revision='2026-07-28', start_timeout_ms=7", repr(fitted))
        cfg = pw.McpConfig().fit(pw.WrapperConfig(name_cap=200, max_depth=12))
        self.assertEqual((cfg.name_cap, cfg.max_depth), (200, 12))
        self.assertGreater(cfg.max_frame_len, cfg.line_cap)
        self.assertGreater(cfg.max_line_len, 0)
        self.assertGreater(cfg.size(4), cfg.size(1))
        with self.assertRaises(pw.BadConfig):
            pw.McpClient(outbox_cap=10)
        with self.assertRaises(TypeError):
            pw.McpConfig(nope=1)


ENVELOPE = (
    b'"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},'
    b'"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}'
)
DISCOVER = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{' + ENVELOPE + b'}}}\n'
INITIALIZE_2 = (
    b'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
)


class Revisions(unittest.TestCase):
    """The revisions through the binding: `server/discover` first, 2026-07-28 with its
    envelope, the handshake of 2025-11-25 after a refusal or a timeout, a fixed revision."""

    def host(self, revision="auto", tools=("echo",)):
        h = Host(tools=tools, revision=revision, start_timeout_ms=500, name="t", version="1")
        h.now = 1000
        h.client.start(h.now)
        h.pump()
        return h

    def test_a_server_listing_2026_07_28_is_spoken_to_in_it(self):
        """No handshake, the envelope on every request (SPEC §9.9), `input_required` failing its
        call (SPEC §9.10), the tools listed again when they change (SPEC §9.12)."""
        h = self.host(tools=("echo", "add"))
        try:
            self.assertEqual(h.lines, [DISCOVER])
            self.assertEqual((h.client.poll_timeout(), h.client.protocol_version), (1500, None))
            result = {"supportedVersions": ["2025-11-25", "2026-07-28"], "capabilities": {"tools": {"listChanged": True}},
                      "serverInfo": {"name": "s", "version": "2"}}
            h.server(rpc(id=1, result=result))
            self.assertEqual(h.events, [mcp.Initialized("2026-07-28", json.dumps(result, separators=(",", ":")).encode())])
            self.assertEqual((h.client.protocol_version, h.client.poll_timeout()), ("2026-07-28", None))
            # No handshake: the tools are listed at once, with the envelope.
            self.assertEqual(h.lines[1:], [b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{' + ENVELOPE
                                           + b'}}}\n'])
            h.server(rpc(id=2, result={"tools": [{"name": "echo"}]}))
            self.assertEqual(h.events[1:], [mcp.ToolListed("echo", b'{"name":"echo"}'), mcp.Ready(1)])
            # The server can tell of changes: the client listens for them.
            self.assertEqual(
                h.lines[2:],
                [b'{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":'
                 b'{"toolsListChanged":true},"_meta":{' + ENVELOPE + b'}}}\n'],
            )
            # A call carries the envelope in its _meta, after the progress token.
            h.model(tool_call("echo", "c1", {"message": "hi"}))
            self.assertEqual(
                h.lines[3:],
                [b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},'
                 b'"_meta":{"progressToken":4,' + ENVELOPE + b'}}}\n'],
            )
            # A result asking for input the client cannot give fails the call.
            h.server(rpc(id=4, result={"resultType": "input_required", "inputRequests": {}}))
            needs = "Tool echo needs input this client cannot give"
            self.assertEqual(h.frames, [('{"type":"ERROR","content":{"message":"%s"}}' % needs).encode()])
            self.assertEqual(
                h.sent,
                [("model", ('{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","error":"%s"}}' % needs).encode())]
                + prompts(needs),
            )
            # The tools change: the notification, the list asked for again, the new list.
            del h.events[:]
            h.server(rpc(method="notifications/tools/list_changed"))
            self.assertEqual(h.events, [mcp.Notification("notifications/tools/list_changed")])
            self.assertEqual(h.lines[4:], [b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{' + ENVELOPE
                                           + b'}}}\n'])
            h.server(rpc(id=5, result={"tools": [{"name": "echo"}, {"name": "add"}]}))
            self.assertEqual(
                h.events[1:],
                [mcp.ToolListed("echo", b'{"name":"echo"}'), mcp.ToolListed("add", b'{"name":"add"}'), mcp.ToolsChanged(2)],
            )
            self.assertEqual(h.client.state, mcp.McpState.READY)
            # 2026-07-28 has no ping: it is refused like any other request of the server's.
            h.server(b'{"jsonrpc":"2.0","id":"p","method":"ping"}\n')
            self.assertEqual(h.lines[5:], [b'{"jsonrpc":"2.0","id":"p","error":{"code":-32601,"message":"Method not found"}}\n'])
            s = h.client.stats()
            self.assertEqual((s.calls, s.answered, s.failed, s.pings, s.refused_requests), (1, 0, 1, 0, 1))
        finally:
            h.close()

    def test_a_refused_server_discover_gets_initialize(self):
        """The handshake on the same connection (SPEC §9.9)."""
        for refusal in (rpc(id=1, error={"code": -32601, "message": "Method not found"}),
                        rpc(id=None, error={"code": -32600, "message": "Invalid Request"})):
            h = self.host()
            try:
                h.server(refusal)
                self.assertEqual((h.events, h.client.poll_timeout()), ([], None))
                self.assertEqual(h.lines, [DISCOVER, INITIALIZE_2])
                h.server(rpc(id=2, result={"protocolVersion": "2025-11-25"}))
                self.assertEqual(h.events, [mcp.Initialized("2025-11-25", b'{"protocolVersion":"2025-11-25"}')])
                self.assertEqual(h.client.protocol_version, "2025-11-25")
                self.assertEqual(h.lines[2:], [INITIALIZED, b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n'])
            finally:
                h.close()

    def test_an_unanswered_server_discover_times_out_into_initialize(self):
        """`initialize` at `poll_timeout()` (SPEC §9.9)."""
        h = self.host()
        try:
            self.assertEqual(h.client.poll_timeout(), 1500)
            h.client.handle_timeout(1499)
            h.pump()
            self.assertEqual((h.lines, h.client.poll_timeout()), ([DISCOVER], 1500))
            h.client.handle_timeout(1500)
            h.pump()
            self.assertEqual((h.lines, h.client.poll_timeout()), ([DISCOVER, INITIALIZE_2], None))
            # Its late answer is counted and changes nothing.
            h.server(rpc(id=1, result={"supportedVersions": ["2026-07-28"]}))
            self.assertEqual((h.events, h.client.protocol_version, len(h.lines)), ([], None, 2))
            self.assertEqual((h.client.stats().late, h.client.stats().unknown_id), (1, 0))
        finally:
            h.close()

    def test_a_client_fixed_to_2026_07_28_fails_without_it(self):
        """A fixed revision (SPEC §9.9)."""
        h = self.host(revision="2026-07-28")
        try:
            h.client.handle_timeout(2000)
            h.pump()
            self.assertEqual(h.events, [mcp.StartFailed(mcp.StartError.NO_ANSWER)])
            self.assertEqual((h.client.state, h.lines), (mcp.McpState.FAILED, [DISCOVER]))
        finally:
            h.close()
        h = self.host(revision=mcp.McpRevision.V2026_07_28)
        try:
            h.server(rpc(id=1, result={"supportedVersions": ["2025-11-25"]}))
            self.assertEqual(h.events, [mcp.StartFailed(mcp.StartError.UNSUPPORTED_VERSION, b'["2025-11-25"]')])
        finally:
            h.close()


class Calls(unittest.TestCase):
    def setUp(self):
        self.h = Host(tools=("echo", "weather")).start(("echo", "weather"))

    def tearDown(self):
        self.h.close()

    def test_a_call_becomes_tools_call_and_its_result_the_tool_result(self):
        h = self.h
        h.model(tool_call("echo", "c1", {"message": "hi"}))
        self.assertEqual(h.requests, [mcp.Handled(mcp.HandledKind.SENT, request=3)])
        self.assertEqual(
            h.lines,
            [b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},'
             b'"_meta":{"progressToken":3}}}\n'],
        )
        self.assertEqual(h.client.in_flight, 1)
        h.server(b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}\n')
        self.assertEqual(
            h.frames,
            [b'{"type":"TOOL_RESULT","content":{"name":"echo","result":[{"type":"text","text":"Echo: hi"}]}}',
             b'{"type":"END"}'],
        )
        self.assertEqual(
            h.sent,
            [("model", b'{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo",'
                       b'"result":[{"type":"text","text":"Echo: hi"}]}}')] + prompts(),
        )
        self.assertEqual(h.client.in_flight, 0)
        self.assertEqual(h.client.stats().answered, 1)

    def test_structured_content_is_the_result(self):
        h = self.h
        h.model(tool_call("weather", "w", {"city": "Oslo"}))
        h.server(rpc(id=3, result={"content": [{"type": "text", "text": "{}"}], "structuredContent": {"t": 3}}))
        self.assertEqual(h.frames[0], b'{"type":"TOOL_RESULT","content":{"name":"weather","result":{"t":3}}}')
        self.assertEqual(h.sent[0], ("model", b'{"type":"TOOL_RESULT","content":{"id":"w","name":"weather","result":{"t":3}}}'))

    def test_is_error_joins_its_texts_and_a_json_rpc_error_gives_its_message(self):
        h = self.h
        h.model(tool_call("echo", "a", {}))
        h.model(tool_call("weather", "b", {}))
        h.server(rpc(id=4, error={"code": -32602, "message": "Unknown tool: weather"}))
        h.server(rpc(id=3, result={"isError": True, "content": [{"type": "text", "text": "bad"},
                                                                 {"type": "image", "data": ""},
                                                                 {"type": "text", "text": "input \"x\""}]}))
        self.assertEqual(
            h.frames,
            [b'{"type":"ERROR","content":{"message":"Unknown tool: weather"}}',
             b'{"type":"ERROR","content":{"message":"bad\\ninput \\"x\\""}}'],
        )
        self.assertEqual(
            h.sent,
            [
                ("model", b'{"type":"TOOL_RESULT","content":{"id":"b","name":"weather","error":"Unknown tool: weather"}}'),
                ("model", b'{"type":"TOOL_RESULT","content":{"id":"a","name":"echo","error":"bad\\ninput \\"x\\""}}'),
            ] + prompts('bad\ninput "x"'),
        )

    def test_is_error_without_texts_and_args_not_an_object(self):
        h = self.h
        h.model(tool_call("echo", "a", {}))
        h.server(rpc(id=3, result={"isError": True, "content": []}))
        h.model(tool_call("echo", "b", [1]))
        self.assertEqual(h.requests[-1], mcp.Handled(mcp.HandledKind.FAILED, failure=mcp.Failure.ARGS_NOT_OBJECT))
        self.assertEqual(
            h.frames,
            [b'{"type":"ERROR","content":{"message":"Tool echo failed"}}',
             b'{"type":"ERROR","content":{"message":"Tool echo arguments must be an object"}}'],
        )
        self.assertEqual(len(h.lines), 1)  # the second call never reached the server

    def test_progress_becomes_a_progress_frame_that_restarts_the_timeout(self):
        h = Host(timeout_ms=1000, max_total_ms=5000).start()
        try:
            h.model(tool_call("echo", "p", {}))
            self.assertEqual(h.wrapper.poll_timeout(), 1000)
            h.now = 800
            h.server(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,'
                     b'"total":4}}\n')
            self.assertEqual(h.frames, [b'{"type":"PROGRESS","content":{"progressToken":3,"progress":1,"total":4}}'])
            self.assertEqual(h.wrapper.poll_timeout(), 1800)
            h.tick(1799)
            self.assertEqual(h.wrapper.pending, 1)
            h.server(rpc(id=3, result={"content": []}))
            self.assertEqual(h.sent, [("model", b'{"type":"TOOL_RESULT","content":{"id":"p","name":"echo","result":[]}}')]
                             + prompts())
            # Progress for a token the client never issued is counted and ignored.
            h.server(rpc(method="notifications/progress", params={"progressToken": 99, "progress": 1}))
            self.assertEqual(h.client.stats().unknown_progress, 1)
        finally:
            h.close()

    def test_cancel_sends_notifications_cancelled_and_a_late_answer_is_ignored(self):
        h = self.h
        h.model(tool_call("echo", "c", {}))
        self.assertEqual(h.wrapper.cancel(h.now, "user stopped"), 0)
        h.pump()
        self.assertEqual(h.requests[-1], mcp.Handled(mcp.HandledKind.CANCELLED, notified=True))
        self.assertEqual(
            h.lines[-1], b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user stopped"}}\n'
        )
        self.assertEqual(
            h.sent,
            [("model", b'{"type":"TOOL_RESULT","content":{"id":"c","name":"echo","error":"Tool echo cancelled: user stopped"}}')]
            + prompts("Tool echo cancelled: user stopped"),
        )
        h.server(rpc(id=3, result={"content": []}))
        self.assertEqual(h.frames, [])
        self.assertEqual(h.client.stats().late, 1)

    def test_a_timeout_cancels_with_reason_timeout(self):
        h = self.h
        h.model(tool_call("echo", "t", {}))
        h.tick(1000)
        self.assertEqual(
            h.lines[-1], b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"timeout"}}\n'
        )
        self.assertEqual(h.sent[0], ("model", b'{"type":"TOOL_RESULT","content":{"id":"t","name":"echo",'
                                              b'"error":"Tool echo timed out after 1000ms"}}'))

    def test_ping_is_answered_other_requests_refused_notifications_handed_out(self):
        h = self.h
        h.server(b'{"jsonrpc":"2.0","id":"p-1","method":"ping"}\n')
        h.server(b'{"jsonrpc":"2.0","id":7,"method":"roots/list"}\n')
        h.server(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hello"}}\n')
        h.server(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n')
        h.server(b'not json\n{"jsonrpc":"2.0","id":42,"result":{}}\n')
        self.assertEqual(
            h.lines,
            [b'{"jsonrpc":"2.0","id":"p-1","result":{}}\n',
             b'{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found"}}\n',
             # The tools changed: they are listed again (SPEC §9.12).
             b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}\n'],
        )
        self.assertEqual(
            h.events,
            [mcp.Notification("notifications/message", b'{"level":"info","data":"hello"}'),
             mcp.Notification("notifications/tools/list_changed")],
        )
        s = h.client.stats()
        self.assertEqual((s.pings, s.refused_requests, s.notifications, s.not_json, s.unknown_id), (1, 1, 2, 1, 1))

    def test_closing_fails_calls_in_flight_and_later_ones(self):
        h = self.h
        h.model(tool_call("echo", "x", {"message": "hi"}))
        h.client.handle_closed()
        h.pump()
        closed = "Tool echo failed: the MCP server closed the connection"
        self.assertEqual(h.frames, [('{"type":"ERROR","content":{"message":"%s"}}' % closed).encode()])
        self.assertEqual(
            h.sent,
            [("model", ('{"type":"TOOL_RESULT","content":{"id":"x","name":"echo","error":"%s"}}' % closed).encode())]
            + prompts(closed),
        )
        self.assertEqual(h.client.state, mcp.McpState.CLOSED)
        h.sent.clear()
        h.model(tool_call("echo", "y", {}))
        self.assertEqual(h.requests[-1], mcp.Handled(mcp.HandledKind.FAILED, failure=mcp.Failure.CLOSED))
        self.assertEqual(h.sent[0][1], ('{"type":"TOOL_RESULT","content":{"id":"y","name":"echo","error":"%s"}}' % closed).encode())
        late = b'{"jsonrpc":"2.0","id":3,"result":{}}\n'
        self.assertEqual(h.client.feed(late), len(late))  # taken whole, read not at all
        self.assertEqual(h.client.poll_frame(), None)


class Refusals(unittest.TestCase):
    """Each 500-508 code is its `McpRefused` class, raised for its case; nothing changes."""

    def client(self, **kw):
        c = pw.McpClient(calls=kw.pop("calls", 2), revision="2025-11-25", **kw)
        c.start(0)
        c.poll_transmit()
        line = rpc(id=1, result={"protocolVersion": "2025-11-25"})
        self.assertEqual(c.feed(line), len(line))
        self.assertEqual(c.feed(line), 0)  # nothing while what the line owes is not polled out
        list(c.events())
        list(c.transmits())
        line = rpc(id=2, result={"tools": [{"name": "echo"}]})
        self.assertEqual(c.feed(line), len(line))
        list(c.events())
        self.assertEqual(c.state, mcp.McpState.READY)
        return c

    def assertRefused(self, cls, code, fn):
        with self.assertRaises(cls) as caught:
            fn()
        e = caught.exception
        self.assertIsInstance(e, pw.McpRefused)
        self.assertIsInstance(e, pw.PolyweaveError)
        self.assertEqual((e.code, cls.code), (code, code))
        self.assertEqual(e.message, pw.result_text(code))
        self.assertIs(pw.errors.BY_CODE[code], cls)

    def test_each_code_for_its_case(self):
        c = self.client()
        self.assertRefused(pw.McpNotAdapterFrame, 500, lambda: c.handle_frame((0, 1), b'{"type":"TEXT","content":"x"}'))
        self.assertRefused(pw.McpNoName, 501, lambda: c.handle_frame((0, 1), b'{"type":"TOOL_CALL","content":{"args":{}}}'))
        # A name too long is the one PW_NAME_TOO_LONG everywhere (502 is retired), not a refusal
        # of the client's own family.
        with self.assertRaises(pw.NameTooLong) as caught:
            c.handle_frame((0, 1), tool_call("x" * 65, args={}))
        self.assertEqual(caught.exception.code, 302)
        self.assertNotIsInstance(caught.exception, pw.McpRefused)
        self.assertNotIn(502, pw.errors.BY_CODE)
        c.handle_frame((0, 1), tool_call("echo", args={}))
        self.assertRefused(pw.McpDuplicateCall, 503, lambda: c.handle_frame((0, 1), tool_call("echo", args={})))
        self.assertRefused(
            pw.McpUnknownCall, 504,
            lambda: c.handle_frame((1, 9), b'{"type":"CANCEL","content":{"name":"echo","reason":"r"}}'),
        )
        self.assertEqual(c.in_flight, 1)
        self.assertRefused(pw.McpAlreadyStarted, 507, c.start)
        # A call failed at once whose ERROR is not polled yet holds the next frame back.
        c.handle_frame((0, 2), tool_call("echo", args="[1]"))
        self.assertRefused(pw.McpFramePending, 506, lambda: c.handle_frame((0, 3), tool_call("echo", args={})))
        self.assertEqual(c.poll_frame().frame, b'{"type":"ERROR","content":{"message":"Tool echo arguments must be an object"}}')
        self.assertEqual(c.handle_frame((0, 3), tool_call("echo", args={})).kind, mcp.HandledKind.SENT)
        c.close()

    def test_outbox_full_then_taken_once_written(self):
        c = self.client(outbox_cap=pw._ffi.PW_MCP_MIN_OUTBOX)
        args = {"text": "a" * 200}
        self.assertEqual(c.handle_frame((0, 1), tool_call("echo", args=args)).kind, mcp.HandledKind.SENT)
        self.assertEqual(c.queued, 1)
        self.assertRefused(pw.McpOutboxFull, 505, lambda: c.handle_frame((0, 2), tool_call("echo", args=args)))
        self.assertTrue(c.poll_transmit().startswith(b'{"jsonrpc":"2.0","id":3,"method":"tools/call"'))
        self.assertEqual(c.handle_frame((0, 2), tool_call("echo", args=args)).request, 4)
        # Every slot taken: a third call fails at once.
        h = c.handle_frame((0, 3), tool_call("echo", args={}))
        self.assertEqual((h.kind, h.failure, h.limit), (mcp.HandledKind.FAILED, mcp.Failure.TOO_MANY, 2))
        self.assertEqual(c.poll_frame(), mcp.McpFrame(0, 3, b'{"type":"ERROR","content":{"message":"Tool echo failed: '
                                                            b'too many MCP calls in flight (max 2)"}}'))
        c.close()
        # A request that can never fit fails at once.
        c = self.client(outbox_cap=pw._ffi.PW_MCP_MIN_OUTBOX)
        h = c.handle_frame((0, 1), tool_call("echo", args={"text": "a" * 1000}))
        self.assertEqual((h.kind, h.failure), (mcp.HandledKind.FAILED, mcp.Failure.REQUEST_TOO_LONG))
        self.assertGreater(h.len, h.limit)
        self.assertEqual(
            c.poll_frame().frame,
            ('{"type":"ERROR","content":{"message":"Tool echo failed: its request of %d bytes exceeds the MCP '
             "client's outbox of %d bytes\"}}" % (h.len, h.limit)).encode(),
        )
        c.close()

    def test_client_info_too_long_and_not_utf8(self):
        self.assertRefused(pw.McpClientInfoTooLong, 508, lambda: pw.McpClient(name="n" * 65))
        self.assertRefused(pw.McpClientInfoTooLong, 508, lambda: pw.McpClient(version="v" * 65))
        with self.assertRaises(pw.InvalidUtf8):
            pw.McpClient(name=b"\xff")
        c = pw.McpClient(name="n" * 64)
        c.close()
        with self.assertRaises(ValueError):
            c.start(0)


# ------------------------------------------------------------ McpServer against small Python servers

FAKE = r'''
import json, sys, time
mode = sys.argv[1]
grown = False
def say(**m):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **m}) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    method, id = m.get("method"), m.get("id")
    if method == "server/discover":
        if mode == "2026":
            say(id=id, result={"supportedVersions": ["2025-11-25", "2026-07-28"],
                               "capabilities": {"tools": {"listChanged": True}}, "serverInfo": {"name": "fake-2026"}})
        elif mode != "silent-discover":
            # An earlier-revision server: a request it does not know.
            say(id=id, error={"code": -32601, "message": "Method not found"})
    elif method == "subscriptions/listen":
        pass  # open while the server runs
    elif method == "initialize":
        if mode == "refuse":
            say(id=id, error={"code": -32000, "message": "no"}); continue
        say(id=id, result={"protocolVersion": "2025-11-25", "serverInfo": {"name": "fake"}})
    elif method == "tools/list" and mode == "schemas":
        weather = {"name": "weather",
                   "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}, "reply": {}},
                                   "required": ["city"], "additionalProperties": False},
                   "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]}}
        remote = {"name": "remote", "inputSchema": {"$ref": "https://example.com/schema.json"}}
        # `big`'s bound is written as text: past a double's precision, it reads as 1.0 once parsed.
        big = '{"name":"big","outputSchema":{"properties":{"n":{"maximum":1.00000000000000000001}}}}'
        sys.stdout.write('{"jsonrpc":"2.0","id":%d,"result":{"tools":[%s,%s,%s]}}\n'
                         % (id, json.dumps(weather), big, json.dumps(remote)))
        sys.stdout.flush()
    elif method == "tools/call" and mode == "schemas":
        a = m["params"]["arguments"]
        if "n" in a:
            n = {"under": "1.000000000000000000005", "over": "1.00000000000000000002"}[a["n"]]
            sys.stdout.write('{"jsonrpc":"2.0","id":%d,"result":{"content":[],"structuredContent":{"n":%s}}}\n' % (id, n))
            sys.stdout.flush()
        else:
            say(id=id, result={"content": [], "structuredContent": a.get("reply")})
    elif method == "tools/list":
        say(method="notifications/message", params={"level": "info", "data": "listing"})
        tools = [{"name": "echo", "inputSchema": {"type": "object"}}, {"name": "die"}]
        say(id=id, result={"tools": tools + ([{"name": "grow"}, {"name": "grown"}] if grown else [{"name": "grow"}])})
    elif method == "tools/call":
        p = m["params"]
        if p["name"] == "die":
            sys.exit(3)
        if p["name"] == "grow":
            grown = True
            say(method="notifications/tools/list_changed")
        token = p["_meta"]["progressToken"]
        for i in range(p["arguments"].get("steps", 0)):
            time.sleep(0.1); say(method="notifications/progress", params={"progressToken": token, "progress": i})
        say(id=id, result={"content": [{"type": "text", "text": json.dumps(p["arguments"])}]})
    if mode == "exit-at-start":
        sys.exit(0)
'''


def fake(mode="ok"):
    return [sys.executable, "-c", FAKE, mode]


QUIET = dict(stderr=subprocess.DEVNULL)


class Schemas(unittest.TestCase):
    """SPEC §11 through `McpServer`: listed schemas checked by default."""

    def test_args_and_structured_content_are_checked_against_the_listed_schemas(self):
        log = []
        with pw.McpServer(fake("schemas"), log=lambda d, b: log.append((d, b)), **QUIET) as s:
            self.assertTrue(s.validate)
            # The offset is in the schema's text as the server wrote it: `{"$ref": "https:...`.
            self.assertEqual(s.unchecked, [mcp.UncheckedSchema("remote", "inputSchema", pw.SchemaErrorKind.REMOTE_REF, 9)])
            calls = lambda: [b for d, b in log if d == "send" and b'"tools/call"' in b]  # noqa: E731
            for args, why in [({"city": 3}, "/city: expected string"),
                              ({}, '(args): missing required property "city"'),
                              ({"city": "Oslo", "when": 1}, "/when: property not allowed")]:
                with self.assertRaises(pw.McpToolError) as caught:
                    s.call("weather", args)
                self.assertEqual(str(caught.exception), "Tool weather arguments are invalid: " + why)
            self.assertEqual(calls(), [], "no call reached the server")
            with self.assertRaises(pw.McpToolError) as caught:
                s.call("weather", {"city": "Oslo", "reply": {"temp": "warm"}})
            self.assertEqual(str(caught.exception),
                             "Tool weather returned a result that does not match its output schema: /temp: expected number")
            self.assertEqual(s.call("weather", {"city": "Oslo", "reply": {"temp": 21.5}}), {"temp": 21.5})
            # The bound as the server wrote it, past a double's precision: a value just under it
            # passes (it would not against the 1.0 a parsed copy holds), one just over it fails.
            self.assertEqual(s.call("big", {"n": "under"}), {"n": 1.0})
            with self.assertRaises(pw.McpToolError) as caught:
                s.call("big", {"n": "over"})
            self.assertEqual(str(caught.exception), "Tool big returned a result that does not match its output "
                             "schema: /n: must be <= 1.00000000000000000001")
            # The schema the validator refuses: the tool runs unchecked.
            self.assertEqual(s.call("remote", {"reply": {"any": [1]}}), {"any": [1]})
            self.assertEqual(len(calls()), 5)

    def test_validate_false_checks_nothing(self):
        with pw.McpServer(fake("schemas"), validate=False, **QUIET) as s:
            self.assertEqual(s.unchecked, [])
            self.assertEqual(s.call("weather", {"city": 3, "reply": {"temp": "warm"}}), {"temp": "warm"})

    def test_the_raw_client_replaces_removes_and_refuses_output_schemas(self):
        c = pw.McpClient(calls=2, revision="2025-11-25")
        c.start(0)
        c.poll_transmit()
        c.feed(rpc(id=1, result={"protocolVersion": "2025-11-25"}))
        list(c.events()), list(c.transmits())
        c.feed(rpc(id=2, result={"tools": [{"name": "t"}]}))
        list(c.events())

        def answer(index):
            h = c.handle_frame((0, index), tool_call("t", "c%d" % index, {}))
            c.feed(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],"structuredContent":{"ok":"yes"}}}\n' % h.request)
            return [f.frame for f in c.frames()][-1]

        c.set_output_schemas([("t", {"properties": {"ok": {"type": "boolean"}}})])
        failed = (b'{"type":"ERROR","content":{"message":"Tool t returned a result that does not match its output '
                  b'schema: /ok: expected boolean"}}')
        self.assertEqual(answer(1), failed)
        with self.assertRaises(pw.SchemaError) as caught:
            c.set_output_schemas([("u", b'{"type":"object"}'), ("t", b'{"$ref":"other.json"}')])
        self.assertEqual((caught.exception.tool, caught.exception.kind, caught.exception.offset),
                         ("t", pw.SchemaErrorKind.REMOTE_REF, 8))
        self.assertEqual(answer(2), failed, "the schemas before the refusal still hold")
        c.set_output_schemas([])
        self.assertEqual(answer(3), b'{"type":"END"}')
        c.close()


class ServerLoop(unittest.TestCase):
    def test_tools_calls_progress_notifications_and_a_server_that_dies(self):
        with pw.McpServer(fake(), timeout_ms=250, max_total_ms=3000, extra_tools=["other"], **QUIET) as s:
            self.assertEqual(s.tools, [
                mcp.ListedTool("echo", {"name": "echo", "inputSchema": {"type": "object"}},
                               b'{"name": "echo", "inputSchema": {"type": "object"}}'),
                mcp.ListedTool("die", {"name": "die"}, b'{"name": "die"}'),
                mcp.ListedTool("grow", {"name": "grow"}, b'{"name": "grow"}')])
            self.assertEqual(s.unchecked, [])
            self.assertEqual(s.server_info["serverInfo"], {"name": "fake"})
            self.assertEqual(s.protocol_version, "2025-11-25")
            self.assertEqual(s.wrapper.tool_names, ["echo", "die", "grow", "other"])
            self.assertEqual(s.notifications, [mcp.Notification("notifications/message", b'{"level": "info", "data": "listing"}')])
            self.assertEqual(s.call("echo", {"a": 1}), [{"type": "text", "text": '{"a": 1}'}])
            # Six progress notifications 100 ms apart keep a 250 ms timeout alive for 600 ms.
            t0 = time.monotonic()
            sent = s.run([b'{"type":"TEXT","content":"go"}', tool_call("echo", "p", {"steps": 6}), b'{"type":"END"}'])
            self.assertGreater(time.monotonic() - t0, 0.5)
            self.assertEqual(
                [(x.to, x.frame) for x in sent],
                [("consumer", b'{"type":"TEXT","content":"go"}'),
                 ("model", b'{"type":"TOOL_RESULT","content":{"id":"p","name":"echo",'
                           b'"result":[{"type":"text","text":"{\\"steps\\": 6}"}]}}')]
                + prompts() + [("consumer", b'{"type":"END"}')],
            )
            self.assertEqual(sent[1].json["content"]["id"], "p")
            with self.assertRaises(pw.FrameNotObject) as caught:
                s.run([b'{"type":"TEXT","content":"before"}', b"[1]"])
            self.assertEqual(caught.exception.sent, [mcp.Sent("consumer", b'{"type":"TEXT","content":"before"}')])
            closed = "Tool die failed: the MCP server closed the connection"
            with self.assertRaises(pw.McpToolError) as caught:
                s.call("die")
            self.assertEqual(str(caught.exception), closed)
            self.assertTrue(s.transport_closed)
            with self.assertRaises(pw.McpToolError) as caught:
                s.call("echo")
            self.assertEqual(str(caught.exception), "Tool echo failed: the MCP server closed the connection")
        self.assertEqual(s.returncode, 3)

    def test_a_call_without_progress_times_out_and_the_server_is_told(self):
        log = []
        with pw.serve_stdio(fake(), timeout_ms=150, **QUIET, log=lambda d, b: log.append((d, b))) as s:
            t0 = time.monotonic()
            with self.assertRaises(pw.McpToolError) as caught:
                s.call("echo", {"steps": 4}, id="slow")
            took = time.monotonic() - t0
            self.assertEqual(str(caught.exception), "Tool echo timed out after 150ms")
            self.assertTrue(0.14 <= took < 1.0, took)
            sent = [json.loads(b) for d, b in log if d == "send"]
            # server/discover (refused), initialize, tools/list: the call is request 4.
            self.assertEqual([m.get("method") for m in sent[:4]],
                             ["server/discover", "initialize", "notifications/initialized", "tools/list"])
            self.assertEqual(sent[-1], {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                        "params": {"requestId": 4, "reason": "timeout"}})

    def test_a_2026_07_28_server_and_its_tools_changing(self):
        """SPEC §9.9 and SPEC §9.12 over a child's stdio."""
        log = []
        with pw.McpServer(fake("2026"), timeout_ms=2000, log=lambda d, b: log.append((d, b)), **QUIET) as s:
            self.assertEqual((s.protocol_version, s.client.protocol_version), ("2026-07-28", "2026-07-28"))
            self.assertEqual(s.server_info["serverInfo"], {"name": "fake-2026"})
            self.assertEqual([t.name for t in s.tools], ["echo", "die", "grow"])
            self.assertEqual(s.call("echo", {"a": 1}), [{"type": "text", "text": '{"a": 1}'}])
            self.assertEqual(s.tools_changed, 0)
            s.call("grow")
            # The server's tools/list answer comes before the next call's.
            s.call("echo")
            self.assertEqual([t.name for t in s.tools], ["echo", "die", "grow", "grown"])
            self.assertEqual(s.tools_changed, 1)
            listing = mcp.Notification("notifications/message", b'{"level": "info", "data": "listing"}')
            self.assertEqual(s.notifications, [listing, mcp.Notification("notifications/tools/list_changed"), listing])
            self.assertEqual(s.wrapper.tool_names, ["echo", "die", "grow"])  # built at start-up
        sent = [json.loads(b) for d, b in log if d == "send"]
        self.assertEqual(
            [m.get("method") for m in sent],
            ["server/discover", "tools/list", "subscriptions/listen", "tools/call", "tools/call", "tools/list", "tools/call"],
        )
        meta = sent[3]["params"]["_meta"]
        self.assertEqual(meta, {"progressToken": 4, "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                "io.modelcontextprotocol/clientCapabilities": {},
                                "io.modelcontextprotocol/clientInfo": {"name": "polyweave-python",
                                                                       "version": mcp._default_version()}})

    def test_an_unanswered_server_discover_falls_back_to_initialize(self):
        log = []
        t0 = time.monotonic()
        with pw.McpServer(fake("silent-discover"), start_timeout_ms=300, log=lambda d, b: log.append((d, b)),
                          **QUIET) as s:
            self.assertGreaterEqual(time.monotonic() - t0, 0.29)
            self.assertEqual(s.protocol_version, "2025-11-25")
            self.assertEqual(s.call("echo", {"b": 2}), [{"type": "text", "text": '{"b": 2}'}])
        sent = [json.loads(b) for d, b in log if d == "send"]
        self.assertEqual([m.get("method") for m in sent],
                         ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"])
        with self.assertRaises(pw.McpStartupError) as caught:
            pw.McpServer(fake("silent-discover"), revision="2026-07-28", start_timeout_ms=100, **QUIET)
        self.assertEqual(str(caught.exception), "MCP start-up failed: the server did not answer server/discover "
                                                "(the client is fixed to 2026-07-28)")
        self.assertEqual(caught.exception.event, mcp.StartFailed(mcp.StartError.NO_ANSWER))

    def test_start_up_failures(self):
        with self.assertRaises(pw.McpStartupError) as caught:
            pw.McpServer(fake("refuse"), **QUIET)
        self.assertEqual(str(caught.exception),
                         'MCP start-up failed: the server refused the start-up: {"code": -32000, "message": "no"}')
        self.assertEqual(caught.exception.event.error, mcp.StartError.REFUSED)
        with self.assertRaises(pw.McpStartupError) as caught:
            pw.McpServer(fake("exit-at-start"), **QUIET)
        self.assertEqual(str(caught.exception), "the MCP server closed its output before listing its tools")
        with self.assertRaises(pw.McpStartupError) as caught:
            pw.McpServer([sys.executable, "-c", "import time; time.sleep(5)"], startup_timeout_ms=200, start_timeout_ms=100,
                         grace_ms=100)
        self.assertEqual(str(caught.exception), "the MCP server did not finish its start-up within 200 ms")
        with self.assertRaises(pw.McpStartupError) as caught:
            pw.McpServer(["/nonexistent/mcp-server"])
        self.assertIn("cannot start the MCP server", str(caught.exception))


# ------------------------------------------------------------ the real servers

INSTALL_HINT = "run `bash tests/mcp/install.sh` from the workspace root (it writes target/mcp-servers/env.sh)"


def real_servers():
    """`(everything_js, time_bin)` from the environment or target/mcp-servers/env.sh; without
    them, a failure when PW_REQUIRE_MCP_SERVERS=1, else a skip with the reason printed."""
    values = {k: os.environ.get(k) for k in ("PW_MCP_EVERYTHING", "PW_MCP_TIME")}
    env_file = os.path.join(ROOT, "target", "mcp-servers", "env.sh")
    why = None
    if not all(values.values()):
        if os.path.isfile(env_file):
            with open(env_file) as f:
                for line in f:
                    parts = shlex.split(line)
                    if len(parts) == 2 and parts[0] == "export" and "=" in parts[1]:
                        k, v = parts[1].split("=", 1)
                        values.setdefault(k, None)
                        values[k] = values[k] or v
        else:
            why = "the MCP servers are not installed: %s is missing; %s" % (env_file, INSTALL_HINT)
    if why is None:
        for k, v in values.items():
            if not v or not os.path.isfile(v):
                why = "%s=%r (from %s) does not exist; %s" % (k, v, env_file, INSTALL_HINT)
                break
    if why is not None:
        if os.environ.get("PW_REQUIRE_MCP_SERVERS") == "1":
            raise AssertionError("PW_REQUIRE_MCP_SERVERS=1 but " + why)
        print("skipping the real MCP server tests: " + why, file=sys.stderr)
        raise unittest.SkipTest(why)
    return values["PW_MCP_EVERYTHING"], values["PW_MCP_TIME"]


EVERYTHING_TOOLS = [
    "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
    "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource", "toggle-simulated-logging",
    "toggle-subscriber-updates", "trigger-long-running-operation", "simulate-research-query",
]
LONG = "trigger-long-running-operation"


class Everything(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        everything, _ = real_servers()
        cls.log = []
        cls.server = pw.McpServer(["node", everything, "stdio"], timeout_ms=700, max_total_ms=5000, extra_tools=["nope"],
                                  stderr=subprocess.DEVNULL, log=lambda d, b: cls.log.append((d, b)))

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_every_listed_tool(self):
        self.assertEqual([t.name for t in self.server.tools], EVERYTHING_TOOLS)
        self.assertEqual(len(self.server.tools), 13)
        echo = self.server.tools[0].tool
        self.assertEqual(echo["inputSchema"]["properties"]["message"]["type"], "string")
        self.assertEqual(self.server.wrapper.tool_names, EVERYTHING_TOOLS + ["nope"])
        self.assertEqual(self.server.client.state, mcp.McpState.READY)

    def test_spoken_to_in_2025_11_25_after_refusing_server_discover(self):
        """A real server of 2025-11-25 refuses the probe and gets the handshake (SPEC §9.9)."""
        self.assertEqual((self.server.protocol_version, self.server.client.protocol_version), ("2025-11-25", "2025-11-25"))
        sent = [json.loads(b) for d, b in self.log if d == "send"]
        self.assertEqual([m.get("method") for m in sent[:4]],
                         ["server/discover", "initialize", "notifications/initialized", "tools/list"])
        self.assertEqual(sent[1]["params"]["protocolVersion"], "2025-11-25")
        received = [json.loads(line) for line in b"".join(b for d, b in self.log if d == "recv").split(b"\n") if line]
        refusal = [m for m in received if m.get("id") == 1][0]
        self.assertEqual(refusal["error"]["code"], -32601)
        self.assertEqual(self.server.server_info["protocolVersion"], "2025-11-25")

    def test_echo(self):
        sent = self.server.run([tool_call("echo", "c1", {"message": "hi"})])
        self.assertEqual(
            [(s.to, s.frame) for s in sent],
            [("model", b'{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[{"type":"text","text":"Echo: hi"}]}}')]
            + prompts(),
        )

    def test_unknown_tool(self):
        e = "MCP error -32602: Tool nope not found"
        sent = self.server.run([tool_call("nope", "n1", {})])
        self.assertEqual(
            [(s.to, s.frame) for s in sent],
            [("model", ('{"type":"TOOL_RESULT","content":{"id":"n1","name":"nope","error":"%s"}}' % e).encode())]
            + prompts(e),
        )

    def test_long_operation_kept_alive_by_progress(self):
        n = len(self.log)
        t0 = time.monotonic()
        sent = self.server.run([tool_call(LONG, "L", {"duration": 2, "steps": 4})])
        took = time.monotonic() - t0
        self.assertEqual(
            [(s.to, s.frame) for s in sent],
            [("model", b'{"type":"TOOL_RESULT","content":{"id":"L","name":"trigger-long-running-operation","result":'
                       b'[{"type":"text","text":"Long running operation completed. Duration: 2 seconds, Steps: 4."}]}}')]
            + prompts(),
        )
        self.assertTrue(1.9 <= took < 4.5, took)
        wire = self.log[n:]
        sent_lines = [json.loads(b) for d, b in wire if d == "send"]
        request = [m for m in sent_lines if m.get("method") == "tools/call"][0]
        self.assertEqual(request["params"]["_meta"]["progressToken"], request["id"])
        self.assertFalse([m for m in sent_lines if m.get("method") == "notifications/cancelled"])
        received = b"".join(b for d, b in wire if d == "recv").split(b"\n")
        progress = [json.loads(line) for line in received if b"notifications/progress" in line]
        self.assertEqual([p["params"]["progressToken"] for p in progress], [request["id"]] * 4)


class Time(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        _, time_bin = real_servers()
        cls.log = []
        cls.server = pw.McpServer([time_bin], extra_tools=["nope"], stderr=subprocess.DEVNULL,
                                  log=lambda d, b: cls.log.append((d, b)))

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_spoken_to_in_2026_07_28_without_initialize(self):
        """A real server listing 2026-07-28 gets no handshake (SPEC §9.9)."""
        s = self.server
        self.assertEqual((s.protocol_version, s.client.protocol_version), ("2026-07-28", "2026-07-28"))
        self.assertIn("2026-07-28", s.server_info["supportedVersions"])
        s.call("get_current_time", {"timezone": "UTC"})
        sent = [json.loads(b) for d, b in self.log if d == "send"]
        methods = [m.get("method") for m in sent]
        self.assertEqual(methods[:2], ["server/discover", "tools/list"])
        self.assertNotIn("initialize", methods)
        self.assertNotIn("notifications/initialized", methods)
        envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "polyweave-python", "version": mcp._default_version()}}
        self.assertEqual(sent[1]["params"]["_meta"], envelope)
        call = [m for m in sent if m.get("method") == "tools/call"][0]
        self.assertEqual(call["params"]["_meta"], {"progressToken": call["id"], **envelope})

    def test_tools_structured_content_and_unknown_tool(self):
        s = self.server
        self.assertEqual([t.name for t in s.tools], ["get_current_time", "convert_time"])
        result = s.call("get_current_time", {"timezone": "UTC"})
        self.assertEqual(sorted(result), ["datetime", "day_of_week", "is_dst", "timezone"])
        self.assertEqual(result["timezone"], "UTC")
        self.assertTrue(result["datetime"].endswith("+00:00"), result)
        e = "Unknown tool: nope"
        sent = s.run([tool_call("nope", "t3", {})])
        self.assertEqual(
            [(x.to, x.frame) for x in sent],
            [("model", ('{"type":"TOOL_RESULT","content":{"id":"t3","name":"nope","error":"%s"}}' % e).encode())]
            + prompts(e),
        )


if __name__ == "__main__":
    unittest.main()
