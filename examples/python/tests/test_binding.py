"""Unit tests of the Python binding (run: python3 -m unittest discover -s examples/python/tests)."""

import gc
import unittest

import support  # noqa: E402,F401 (first: it decides which package the imports below find)

import polyweave_tool_adapter as pw  # noqa: E402

RESULTS = b'{"type":"TEXT","content":"Tool results above."}'


def call(name, id=None, args=None):
    parts = []
    if id is not None:
        parts.append('"id":"%s"' % id)
    parts.append('"name":"%s"' % name)
    if args is not None:
        parts.append('"args":%s' % args)
    return ('{"type":"TOOL_CALL","content":{%s}}' % ",".join(parts)).encode()


def frames(w):
    return [(t.route, t.frame) for t in w.transmits()]


def make(**kw):
    seen = []
    tools = {
        "echo": lambda args: args,
        "boom": lambda args: 1 / 0,
        "later": pw.deferred(),
        "files": pw.adapter(),
    }
    w = pw.Wrapper(
        tools,
        slots=2,
        on_tool_call=lambda name, args: seen.append(("call", name, args)),
        on_tool_result=lambda name, args, result, error: seen.append(("result", name, args, result, error)),
        **kw
    )
    return w, seen


class SyncTools(unittest.TestCase):
    def test_round_trip_with_exact_frames(self):
        w, seen = make()
        with w:
            d = w.handle_response(0, call("echo", "1", "[ 1 ]"))
            self.assertEqual((d.disposition, d.index, d.handle), (pw.Disposition.INTERCEPTED, 0, None))
            self.assertEqual(
                frames(w),
                [
                    (pw.Route.MODEL, b'{"type":"TOOL_RESULT","content":{"id":"1","name":"echo","result":[1]}}'),
                    (pw.Route.MODEL, RESULTS),
                    (pw.Route.CONSUMER, RESULTS),
                ],
            )
            self.assertEqual(seen, [("call", "echo", b"[ 1 ]"), ("result", "echo", b"[ 1 ]", b"[ 1 ]", None)])
            # Pass-through both ways.
            text = b'{"type":"TEXT","content":"hi"}'
            self.assertEqual(w.handle_response(0, text).disposition, pw.Disposition.FORWARD)
            self.assertIsNone(w.handle_request(0, text))
            self.assertIsNone(w.poll_transmit())
            self.assertEqual(w.pending, 0)
            self.assertIsNone(w.poll_timeout())

    def test_a_python_exception_fails_the_call_with_its_message(self):
        w, seen = make()
        with w:
            w.handle_response(0, call("boom", "b"))
            self.assertEqual(
                frames(w)[0][1],
                b'{"type":"TOOL_RESULT","content":{"id":"b","name":"boom","error":"division by zero"}}',
            )
            self.assertEqual(seen[-1], ("result", "boom", b"{}", None, "division by zero"))

    def test_hook_exceptions_are_caught(self):
        def bad(*args):
            raise RuntimeError("hook broke")

        with pw.Wrapper({"echo": lambda a: a}, on_tool_call=bad, on_tool_result=bad) as w:
            w.handle_response(0, call("echo", args="2"))
            self.assertEqual(len(frames(w)), 3)
            self.assertEqual([str(e) for e in w.hook_errors], ["hook broke", "hook broke"])

    def test_a_result_that_is_not_json_fails_the_call(self):
        with pw.Wrapper({"bad": lambda a: "{"}) as w:
            w.handle_response(0, call("bad"))
            first = frames(w)[0][1]
            self.assertIn(b'"error":', first)

    def test_callbacks_survive_garbage_collection(self):
        w = pw.Wrapper({"echo": lambda a: a})
        gc.collect()
        w.handle_response(0, call("echo", args="[3]"))
        self.assertIn(b'"result":[3]', frames(w)[0][1])
        w.close()
        self.assertTrue(w.closed)
        with self.assertRaises(ValueError):
            w.handle_response(0, call("echo"))


class PendingCalls(unittest.TestCase):
    def test_deferred_via_poll_event_and_complete(self):
        w, seen = make()
        with w:
            d = w.handle_response(1, call("later", args='{"q":1}'))
            self.assertEqual(d.index, 0)
            self.assertIsNotNone(d.handle)
            self.assertEqual(w.handle_response(1, b'{"type":"END"}').disposition, pw.Disposition.HELD)
            e = w.poll_event()
            self.assertEqual(
                (e.kind, e.tool, e.name, e.id, e.args), (pw.EventKind.DEFERRED, 2, "later", None, b'{"q":1}')
            )
            self.assertEqual(e.handle, d.handle)
            self.assertIsNone(w.poll_event())
            self.assertEqual((w.pending, w.poll_timeout()), (1, 30001))
            self.assertEqual(w.complete(3, e.handle, '{"ok":true}'), pw.Completed.AS_GIVEN)
            self.assertEqual(
                frames(w),
                [
                    (pw.Route.MODEL, b'{"type":"TOOL_RESULT","content":{"name":"later","result":{"ok":true}}}'),
                    (pw.Route.MODEL, RESULTS),
                    (pw.Route.CONSUMER, RESULTS),
                    (pw.Route.CONSUMER, b'{"type":"END"}'),
                ],
            )
            with self.assertRaises(pw.CallCompleted) as caught:
                w.complete(4, e.handle, "1")
            self.assertEqual(caught.exception.code, 310)
            self.assertEqual(caught.exception.message, "call already completed")
            self.assertIsInstance(caught.exception, pw.CallNotWaiting)

    def test_complete_with_an_error_and_a_result_too_large(self):
        with pw.Wrapper({"later": pw.deferred()}, result_cap=8) as w:
            h1 = w.handle_response(0, call("later")).handle
            h2 = w.handle_response(0, call("later")).handle
            self.assertEqual(w.complete(1, h1, error="no disk"), pw.Completed.AS_GIVEN)
            self.assertEqual(w.complete(1, h2, "[1,2,3,4,5,6]"), pw.Completed.RESULT_TOO_LARGE)
            errors = [t.error for t in w.trace()]
            self.assertEqual(errors[0], "no disk")
            self.assertIn("exceeds 8 bytes", errors[1])

    def test_adapter_via_handle_adapter_frame(self):
        w, seen = make()
        with w:
            h = w.handle_response(2, call("files", "f")).handle
            e = w.poll_event()
            self.assertEqual((e.kind, e.id), (pw.EventKind.ADAPTER, "f"))
            t = w.poll_transmit()
            self.assertEqual(
                (t.route, t.handle, t.frame),
                (pw.Route.ADAPTER, h, b'{"type":"TOOL_CALL","content":{"id":"f","name":"files","args":{}}}'),
            )
            w.handle_adapter_frame(4, h, b'{"type":"TOOL_RESULT","content":{"result":"x"}}')
            with self.assertRaises(pw.FrameTypeNotString):
                w.handle_adapter_frame(4, h, b'{"type":7}')
            w.handle_adapter_closed(5, h)
            self.assertEqual(
                frames(w)[0], (pw.Route.MODEL, b'{"type":"TOOL_RESULT","content":{"id":"f","name":"files","result":"x"}}')
            )
            with self.assertRaises(pw.CallCompleted):
                w.handle_adapter_closed(6, h)

    def test_cancel(self):
        w, seen = make()
        with w:
            w.handle_response(0, call("later", "a"))
            w.handle_response(0, call("files", "b"))
            list(w.events())
            frames(w)
            self.assertEqual(w.cancel(1, "user stopped"), 0)
            out = frames(w)
            self.assertEqual(
                out[0],
                (pw.Route.MODEL, b'{"type":"TOOL_RESULT","content":{"id":"a","name":"later","error":"Tool later cancelled: user stopped"}}'),
            )
            self.assertIn(pw.Route.ADAPTER, [r for r, _ in out])
            self.assertEqual(w.pending, 0)

    def test_timeouts_via_poll_timeout_and_handle_timeout(self):
        with pw.Wrapper({"later": pw.deferred(timeout_ms=50)}) as w:
            h = w.handle_response(10, call("later", "t")).handle
            deadline = w.poll_timeout()
            self.assertEqual(deadline, 60)
            w.handle_timeout(deadline - 1)
            self.assertEqual(w.pending, 1)
            w.handle_timeout(deadline)
            self.assertEqual(w.pending, 0)
            self.assertIn(b"timed out after 50ms", frames(w)[0][1])
            with self.assertRaises(pw.CallTimedOut):
                w.complete(61, h, "1")
            with self.assertRaises(pw.ClockWentBackwards) as caught:
                w.handle_timeout(5)
            self.assertEqual(caught.exception.message, "clock went backwards")

    def test_trace_and_clear_trace(self):
        w, _ = make()
        with w:
            w.handle_response(0, call("echo", args='{"a": 1}'))
            w.handle_response(0, call("boom"))
            self.assertEqual(
                w.trace(),
                [
                    pw.TraceEntry("echo", b'{"a":1}', b'{"a":1}', None, False),
                    pw.TraceEntry("boom", b"{}", None, "division by zero", False),
                ],
            )
            w.clear_trace()
            self.assertEqual(w.trace(), [])


class OrderedOutput(unittest.TestCase):
    def test_outputs_hand_hooks_out_in_their_place_among_the_frames(self):
        w = pw.Wrapper({"echo": lambda args: args}, config=pw.WrapperConfig(hook_log_bytes=4096))
        w.handle_response(1, call("echo", "c1", "[1]"))
        got = [
            (o.kind, o.call.args, o.outcome) if isinstance(o, pw.HookEvent) else (o.route, o.frame)
            for o in w.outputs()
        ]
        self.assertEqual(
            got,
            [
                ("toolCall", b"[1]", None),
                (pw.Route.MODEL, b'{"type":"TOOL_RESULT","content":{"id":"c1","name":"echo","result":[1]}}'),
                ("toolResult", b"[1]", pw.Outcome(b"[1]", None)),
                (pw.Route.MODEL, RESULTS),
                (pw.Route.CONSUMER, RESULTS),
            ],
        )
        self.assertEqual(w.stats(), pw.WrapperStats(1, 0, 0, 0, 0))

    def test_a_small_hook_log_cuts_then_drops_and_says_so(self):
        w = pw.Wrapper({"echo": lambda args: args}, config=pw.WrapperConfig(hook_log_bytes=40))
        w.handle_response(1, call("echo", None, "[1,2,3,4,5,6,7,8]"))
        hooks = [o for o in w.outputs() if isinstance(o, pw.HookEvent)]
        self.assertEqual([(h.kind, h.cut, h.call.args) for h in hooks], [("toolCall", True, b"null")])
        self.assertEqual(w.stats().hook_events_cut, 1)
        self.assertEqual(w.stats().hook_events_dropped, 1)


class BadInput(unittest.TestCase):
    def test_each_malformed_frame_has_its_class_and_changes_nothing(self):
        w, _ = make()
        with w:
            cases = [
                (b"[1]", pw.FrameNotObject),
                (b'{"content":1}', pw.FrameMissingType),
                (b'{"type":7}', pw.FrameTypeNotString),
                (b'{"type":"TOOL_CALL","content":{', pw.InvalidJson),
                (b"", pw.FrameNotObject),
            ]
            for frame, cls in cases:
                with self.assertRaises(cls) as caught:
                    w.handle_response(0, frame)
                self.assertIsInstance(caught.exception, pw.MalformedFrame)
                self.assertIsInstance(caught.exception, ValueError)
                self.assertEqual(caught.exception.code, cls.code)
                self.assertEqual(caught.exception.message, pw.result_text(cls.code))
            with self.assertRaises(pw.FrameNotObject):
                w.handle_request(0, b"not json")
            self.assertIsNone(w.poll_transmit())
            # Still usable.
            w.handle_response(0, call("echo", args="1"))
            self.assertEqual(len(frames(w)), 3)

    def test_stale_unknown_wrong_kind_foreign_handles(self):
        with pw.Wrapper({"later": pw.deferred(), "files": pw.adapter()}, slots=1) as w:
            old = w.handle_response(0, call("later")).handle
            w.complete(1, old, error="done")
            new = w.handle_response(1, call("later")).handle
            self.assertEqual((old.slot, new.slot), (0, 0))
            with self.assertRaises(pw.CallStale):
                w.complete(2, old, "1")
            with self.assertRaises(pw.CallWrongKind):
                w.handle_adapter_closed(2, new)
            with self.assertRaises(pw.InvalidResult):
                w.complete(2, new, "[1,")
            with pw.Wrapper({"later": pw.deferred()}) as other:
                with self.assertRaises(pw.CallForeign):
                    other.complete(2, new, "1")
            self.assertEqual(w.complete(2, new, "1"), pw.Completed.AS_GIVEN)

    def test_buffer_too_small_carries_the_needed_size(self):
        with pw.Wrapper({"echo": lambda a: a}) as w:
            w.handle_response(0, call("echo", args="[1]"))
            small = bytearray(8)
            with self.assertRaises(pw.BufferTooSmall) as caught:
                w.poll_transmit(small)
            expected = b'{"type":"TOOL_RESULT","content":{"name":"echo","result":[1]}}'
            self.assertEqual(caught.exception.needed, len(expected))
            self.assertEqual(caught.exception.code, 2)
            big = bytearray(caught.exception.needed)
            self.assertEqual(w.poll_transmit(big).frame, expected)

    def test_configuration_and_registration_errors(self):
        with self.assertRaises(pw.BadConfig):
            pw.Wrapper({}, max_depth=1)
        with self.assertRaises(pw.NameTooLong) as caught:
            pw.Wrapper({"x" * 100: lambda a: a})
        self.assertEqual(caught.exception.code, 302)
        with self.assertRaises(TypeError):
            pw.Wrapper({}, no_such_field=1)

    def test_every_code_has_a_class(self):
        retired = [9, 200, 304, 308]
        codes = (
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11]
            + list(range(100, 108))
            + [201]
            + [c for c in range(300, 316) if c not in retired]
            + list(range(600, 608))
            + list(range(610, 615))
            + list(range(620, 625))
            + [900]
        )
        for code in codes[1:]:
            e = pw.error_for(code)
            self.assertIs(type(e), pw.errors.BY_CODE[code])
            self.assertEqual(e.code, code)
            self.assertEqual(e.message, pw.result_text(code))
        # Retired numbers have no class: the library calls them unknown.
        for code in retired:
            self.assertNotIn(code, pw.errors.BY_CODE)
            self.assertIs(type(pw.error_for(code)), pw.PolyweaveError)
            self.assertEqual(pw.result_text(code), "unknown pw_result code")
        # The storage codes are one family.
        for cls, code in ((pw.StorageTooSmall, 3), (pw.StorageMisaligned, 4), (pw.StorageOverlap, 5)):
            self.assertEqual(cls.code, code)
            self.assertTrue(issubclass(cls, pw.StorageError))
        self.assertIsInstance(pw.error_for(1234), pw.PolyweaveError)
        self.assertTrue(issubclass(pw.QueueFull, pw.PolyweaveError))

    def test_validate_json(self):
        self.assertIsNone(pw.validate_json(b' {"a":[1,2]} '))
        with self.assertRaises(pw.InvalidJson) as caught:
            pw.validate_json(b"[1,")
        self.assertEqual(caught.exception.offset, 3)
        with self.assertRaises(pw.JsonTooDeep):
            pw.validate_json(b"[[[1]]]", max_depth=2)


class AdapterCalls(unittest.TestCase):
    def test_settles_on_its_first_result_then_end(self):
        with pw.AdapterCall(10, name="search", id="q1", args='{ "q" : "oslo" }', timeout_ms=1000) as c:
            self.assertEqual(
                list(c.transmits()),
                [b'{"type":"TOOL_CALL","content":{"id":"q1","name":"search","args":{"q":"oslo"}}}'],
            )
            self.assertEqual(c.poll_timeout(), 1010)
            self.assertIsNone(c.outcome)
            c.handle_frame(11, '{"type":"TOOL_RESULT","content":{"result":[ 21 ]}}')
            with self.assertRaises(pw.FrameTypeNotString):
                c.handle_frame(11, '{"type":7}')
            c.handle_frame(12, '{"type":"END"}')
            self.assertEqual(c.outcome, pw.Outcome(b"[21]", None))
            with self.assertRaises(pw.CallCompleted):
                c.handle_frame(13, '{"type":"END"}')
            self.assertIsNone(c.poll_timeout())

    def test_timeout_sends_cancel_and_settles_with_its_message(self):
        with pw.AdapterCall(timeout_ms=100) as c:
            c.poll_transmit()
            c.handle_timeout(100)
            self.assertEqual(c.poll_transmit(), b'{"type":"CANCEL","content":{"name":"unknown","reason":"timeout"}}')
            self.assertEqual(c.outcome, pw.Outcome(None, "Tool unknown timed out after 100ms"))
            with self.assertRaises(pw.CallTimedOut):
                c.handle_closed(101)

    def test_bad_args_and_close(self):
        with self.assertRaises(pw.InvalidJson):
            pw.AdapterCall(args='{"a":')
        with self.assertRaises(pw.BadConfig):
            pw.AdapterCall(result_cap=8)
        c = pw.AdapterCall()
        c.handle_closed(1)
        self.assertEqual(c.outcome, pw.Outcome(b"null", None))
        c.close()
        with self.assertRaises(ValueError):
            c.poll_transmit()


# ------------------------------------------------------------ calls from inside a callback

# What `ReentrantCall` says: the C call that runs a sync tool or hook is still in the wrapper.
INSIDE = "from inside one of the Wrapper's own sync tools or hooks: the library is still running in it " \
         "(call it after the outer call returns)"
METHOD_INSIDE = "a Wrapper method called " + INSIDE
CLOSE_INSIDE = "Wrapper.close() called " + INSIDE
TEXT = b'{"type":"TEXT","content":"hi"}'


def every_call(w, handle):
    """Each way into the library a wrapper has, by name (with arguments valid outside a tool)."""
    return [
        ("handle_response", lambda: w.handle_response(0, TEXT)),
        ("handle_request", lambda: w.handle_request(0, TEXT)),
        ("complete", lambda: w.complete(0, handle, "1")),
        ("handle_adapter_frame", lambda: w.handle_adapter_frame(0, handle, b'{"type":"END"}')),
        ("handle_adapter_closed", lambda: w.handle_adapter_closed(0, handle)),
        ("handle_timeout", lambda: w.handle_timeout(10 ** 9)),
        ("cancel", lambda: w.cancel(0, "r")),
        ("abort", w.abort),
        ("clear_trace", w.clear_trace),
        ("poll_transmit", w.poll_transmit),
        ("poll_transmit(buffer)", lambda: w.poll_transmit(bytearray(4096))),
        ("transmits", lambda: list(w.transmits())),
        ("poll_output", w.poll_output),
        ("outputs", lambda: list(w.outputs())),
        ("stats", w.stats),
        ("poll_event", w.poll_event),
        ("events", lambda: list(w.events())),
        ("poll_timeout", w.poll_timeout),
        ("pending", lambda: w.pending),
        ("trace", w.trace),
    ]


def attempts(calls):
    """(name, exception type, message) of each call; ("name", None, None) for one that ran."""
    seen = []
    for name, fn in calls:
        try:
            fn()
            seen.append((name, None, None))
        except Exception as e:
            seen.append((name, type(e), str(e)))
    return seen


def state(w):
    """Everything observable of a wrapper, each read outside any tool."""
    return (frames(w), w.trace(), w.pending, w.poll_timeout(), w.stats(), w.closed)


class CallsFromInside(unittest.TestCase):
    """A sync tool or hook runs inside a C call on its wrapper (the header forbids it to call the
    wrapper; freeing the block then is a use after free): the binding refuses, changing nothing."""

    def run_twice(self, meddle):
        """Runs a deferred call, then a sync tool, on two wrappers; in the first the tool also
        calls `meddle(w, handle)` (what it raises is kept). Returns (kept, state of the first,
        state of the second)."""
        kept = []
        ws = []
        for i in range(2):
            def tool(args, i=i):
                if i == 0:
                    kept.append(meddle(ws[0], pending))
                return args
            w = pw.Wrapper({"later": pw.deferred(), "tool": tool})
            ws.append(w)
            pending = w.handle_response(5, call("later", "d")).handle
            w.handle_response(6, call("tool", "t", "[7]"))
        try:
            return kept, state(ws[0]), state(ws[1])
        finally:
            for w in ws:
                w.close()

    def test_every_method_that_enters_the_library_refuses_from_a_sync_tool_and_changes_nothing(self):
        kept, first, second = self.run_twice(lambda w, h: attempts(every_call(w, h)))
        with pw.Wrapper() as spare:
            names = [name for name, _ in every_call(spare, None)]
        self.assertEqual(kept, [[(name, pw.ReentrantCall, METHOD_INSIDE) for name in names]])
        # Nothing the refused calls would have done happened: the same as a tool that left it alone.
        self.assertEqual(first, second)
        self.assertEqual(first[2], 1)  # the deferred call is still pending

    def test_close_from_a_sync_tool_is_refused_and_fails_the_call_with_its_message(self):
        def closer(args):
            box[0].close()  # not caught: the call fails with ReentrantCall's message
            return "1"

        box = []
        with pw.Wrapper({"closer": closer}) as w:
            box.append(w)
            d = w.handle_response(0, call("closer", "c"))
            self.assertEqual((d.disposition, d.index, d.handle), (pw.Disposition.INTERCEPTED, 0, None))
            self.assertFalse(w.closed)
            prompt = ('{"type":"TEXT","content":"Tool results above. Last tool error: %s"}' % CLOSE_INSIDE).encode()
            self.assertEqual(
                frames(w),
                [
                    (pw.Route.MODEL, ('{"type":"TOOL_RESULT","content":{"id":"c","name":"closer","error":"%s"}}'
                                      % CLOSE_INSIDE).encode()),
                    (pw.Route.MODEL, prompt),
                    (pw.Route.CONSUMER, prompt),
                ],
            )
            # Still whole: it takes the next frame, and closes outside the tool.
            self.assertEqual(w.handle_response(1, TEXT).disposition, pw.Disposition.FORWARD)
        self.assertTrue(w.closed)
        self.assertEqual(w.memory_size, 0)

    def test_hooks_are_refused_too(self):
        def hook(*args):
            for fn in (w.poll_transmit, w.stats, w.close):
                try:
                    fn()
                except pw.ReentrantCall as e:
                    refused.append(str(e))
            raise RuntimeError("after")  # kept in hook_errors, as before

        refused = []
        with pw.Wrapper({"echo": lambda a: a}, on_tool_call=hook, on_tool_result=hook) as w:
            w.handle_response(0, call("echo", "e", "[1]"))
            self.assertEqual(refused, [METHOD_INSIDE, METHOD_INSIDE, CLOSE_INSIDE] * 2)
            self.assertEqual([str(e) for e in w.hook_errors], ["after", "after"])
            self.assertEqual(
                frames(w)[0],
                (pw.Route.MODEL, b'{"type":"TOOL_RESULT","content":{"id":"e","name":"echo","result":[1]}}'),
            )
            # Outside the hooks the wrapper is usable again.
            self.assertEqual(w.stats().rounds, 1)

    def test_the_guard_is_per_object_other_objects_work_inside_a_tool(self):
        """Only the wrapper whose C call runs the tool is refused: a second wrapper, a decoder,
        an adapter call and an MCP client are not in a C call and work from inside the tool;
        a tool of that second wrapper, run from inside the first's, is refused both."""
        inner_refused = []

        def inner_tool(args):
            for who in (outer, inner):
                try:
                    who.poll_timeout()
                except pw.ReentrantCall as e:
                    inner_refused.append(str(e))
            return args

        def outer_tool(args):
            inner.handle_response(0, call("inner", "i", "[2]"))
            with pw.Decoder("ollama") as d:
                decoded = d.feed_raw(b'{"message":{"content":"x"},"done":true}\n')
            with pw.AdapterCall(name="a") as a:
                sent = a.poll_transmit()
            with pw.McpClient() as m:
                m.start()
                line = m.poll_transmit()
            got.append((decoded, sent, line[:40]))
            return b"[1]"

        got = []
        with pw.Wrapper({"inner": inner_tool}) as inner, pw.Wrapper({"outer": outer_tool}) as outer:
            outer.handle_response(0, call("outer", "o"))
            self.assertEqual(inner_refused, [METHOD_INSIDE, METHOD_INSIDE])
            self.assertEqual(
                got,
                [(
                    [b'{"type":"TEXT","content":"x"}', b'{"type":"END","content":{"reason":null}}'],
                    b'{"type":"TOOL_CALL","content":{"name":"a","args":{}}}',
                    b'{"jsonrpc":"2.0","id":1,"method":"server',
                )],
            )
            self.assertEqual(frames(outer)[0][1], b'{"type":"TOOL_RESULT","content":{"id":"o","name":"outer","result":[1]}}')
            self.assertEqual(frames(inner)[0][1], b'{"type":"TOOL_RESULT","content":{"id":"i","name":"inner","result":[2]}}')


class OneBase(unittest.TestCase):
    def test_every_object_in_a_block_takes_its_lifetime_and_guard_from_one_base(self):
        from polyweave_tool_adapter._owned import _Owned

        for cls in (pw.Wrapper, pw.AdapterCall, pw.Decoder, pw.McpClient):
            self.assertTrue(issubclass(cls, _Owned), cls)
            # Not written again: the base's close, with, closed, memory_size and guard serve it.
            self.assertEqual(
                [n for n in ("close", "__enter__", "__exit__", "closed", "memory_size", "_ptr") if n in vars(cls)],
                [],
                cls,
            )
        for make_one, name in (
            (lambda: pw.AdapterCall(), "AdapterCall"),
            (lambda: pw.Decoder("gemini"), "Decoder"),
            (lambda: pw.McpClient(), "McpClient"),
            (lambda: pw.Wrapper(), "Wrapper"),
        ):
            with make_one() as o:
                self.assertGreater(o.memory_size, 0)
                self.assertFalse(o.closed)
            self.assertEqual((o.closed, o.memory_size), (True, 0))
            o.close()  # idempotent
            with self.assertRaises(ValueError) as caught:
                o._ptr()
            self.assertEqual(str(caught.exception), "operation on a closed %s" % name)


if __name__ == "__main__":
    unittest.main()
