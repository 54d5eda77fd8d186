"""Asking the model again (SPEC §10) through the Python binding: `Conversation`, `Declaration`,
`RequestOptions`, `Request`.

Conversations in the form of `polyweave-replay --request PROVIDER CONV.json` (SPEC §10.4), each
with a recorded response of tests/data/provider-streams decoded by the package's own `Decoder`,
results for its calls and the user's texts, are built through the binding and written for every
provider: the bodies must be the bytes stored in `request_bodies.json`, which are what
`polyweave-replay --request` prints for the same files. With `PW_REPLAY` naming that program
(tests/tests/python_binding.rs builds it and sets it), it is run on every file too and must
print the stored bytes; `python3 test_request.py --regenerate` (with `PW_REPLAY`) writes the
stored file from it.

Also: bodies in chunks of 1 and 7 bytes are the whole body; every refusal raises its own class
and changes nothing; a request made stale by a change to its conversation raises.
"""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import support  # noqa: E402,F401 (first: it decides which package the imports below find)

import polyweave_tool_adapter as pw  # noqa: E402
from polyweave_tool_adapter import _ffi  # noqa: E402

STREAMS = support.ROOT / "tests" / "data" / "provider-streams"
EXPECTED = support.HERE / "request_bodies.json"
PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]
#: polyweave-replay's decoder capacities (examples/replay/src/streams.rs, `DECODER`), so that
#: both read the recorded bodies alike.
DECODER = dict(event_cap=256 * 1024, args_cap=4096, name_cap=1024, id_cap=1024, max_depth=32, calls=16)
MCP_READ = {
    "name": "fs.read",
    "title": "Read",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
}


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def conversation_file(response_provider, body, results, *, tool_choice="auto", capacity=None, more=()):
    """A SPEC §10.4 conversation: a system text, tools (the calls' names as host tools, and an
    MCP entry whose name the OpenAI-style providers map), a question, the recorded response,
    the results, a thank-you; `more` turns after."""
    frames = decode(response_provider, body)
    names = []
    for f in frames:
        v = json.loads(f)
        if v["type"] == "TOOL_CALL" and v["content"]["name"] not in names:
            names.append(v["content"]["name"])
    conv = {
        "model": "m-1",
        "system": "You are \"terse\".",
        "max_tokens": 512,
        "extra": {"temperature": 0.2},
        "tools": [
            {"name": n, "description": "The %s tool" % n, "input_schema": {"type": "object"}} for n in names
        ]
        + [{"mcp": MCP_READ}],
        "turns": [
            {"user": "Over to you \u2713"},
            {"response": str(STREAMS / response_provider / (body + ".body")), "provider": response_provider},
            {"results": results},
            {"user": "Thanks."},
        ]
        + list(more),
    }
    if tool_choice is not None:
        conv["tool_choice"] = tool_choice
    if capacity is not None:
        conv["capacity"] = capacity
        conv["pin_first_user"] = True
    return conv


def decode(provider, body):
    return decode_path(provider, STREAMS / provider / (body + ".body"))


def decode_path(provider, path):
    """A recorded body's frames, as their bytes, through the package's `Decoder`."""
    data = Path(path).read_bytes()
    with pw.Decoder(provider, **DECODER) as d:
        return d.feed_raw(data) + d.finish_raw()


#: One conversation per provider's recorded response, named.
CONVERSATIONS = {
    # Two calls with ids: one result, one error.
    "chat": conversation_file(
        "openai-chat",
        "openai-python-parse-multiple-pydantic-tools",
        [
            {"id": "call_JMW1whyEaYG438VE1OIflxA2", "result": {"temp_c": 11, "sky": "\u00e9claircies"}},
            {"name": "get_stock_price", "error": "market closed"},
        ],
    ),
    # Reasoning, then a call.
    "responses": conversation_file(
        "openai-responses",
        "vercel-ai-openai-reasoning-encrypted-content-step1",
        [{"id": "call_AB6AaRZ1FYZB2RwS6A5vbdqn", "result": 19}],
        tool_choice="required",
    ),
    # Text and a call; the choice names the MCP tool by its original name.
    "anthropic": conversation_file(
        "anthropic",
        "anthropic-sdk-tool-use-response",
        [{"id": "toolu_01NRLabsLyVHZPKxbKvkfSMn", "result": {"temp_c": 21}}],
        tool_choice={"name": "fs.read"},
    ),
    # A call without an id: its result by name.
    "gemini": conversation_file(
        "gemini",
        "vercel-ai-google-tool-call-gemini3",
        [{"name": "weather", "result": {"temp_f": 64}}],
        tool_choice="none",
    ),
    # Reasoning, text, four calls without ids, two names: results by name, in order.
    "ollama": conversation_file(
        "ollama",
        "variant-text-and-parallel-calls",
        [
            {"name": "get_conditions", "result": "fog"},
            {"name": "get_temperature", "result": 18},
            {"name": "get_temperature", "error": "no station"},
            {"name": "get_conditions", "result": "rain"},
        ],
        tool_choice=None,
    ),
    # Small memory: a second question and response evict the first exchange (the first user
    # text is pinned).
    "evicting": conversation_file(
        "openai-chat",
        "openai-python-parse-multiple-pydantic-tools",
        [
            {"id": "call_JMW1whyEaYG438VE1OIflxA2", "result": {"temp_c": 11}},
            {"id": "call_DNYTawLBoN8fj3KN6qU9N1Ou", "result": 187.5},
        ],
        capacity=504,
        more=[
            {"response": str(STREAMS / "anthropic" / "anthropic-sdk-tool-use-response.body"), "provider": "anthropic"},
            {"results": [{"name": "get_weather", "result": {"temp_c": 21}}]},
            {"user": "And now?"},
        ],
    ),
}


def options_of(conv):
    choice = conv.get("tool_choice")
    if isinstance(choice, dict):
        choice = pw.ToolChoice.tool(choice["name"])
    extra = conv.get("extra")
    return pw.RequestOptions(
        conv["model"],
        max_tokens=conv.get("max_tokens"),
        tool_choice=choice,
        extra=None if extra is None else compact(extra),
    )


def declarations_of(conv):
    out = []
    for t in conv.get("tools", []):
        if "mcp" in t:
            out.append(pw.Declaration.from_mcp(compact(t["mcp"])))
        else:
            schema = t.get("input_schema")
            out.append(
                pw.Declaration(
                    t["name"],
                    None if schema is None else compact(schema),
                    t.get("description"),
                    strict=t.get("strict", False),
                )
            )
    return out


def build(conv):
    """The conversation file through the binding, as polyweave-replay reads it: responses
    decoded by the package's `Decoder` (frames as bytes), results as `TOOL_RESULT` frames (the
    result's JSON text as written)."""
    c = pw.Conversation(conv.get("capacity", 16 << 20))
    c.pin_first_user(conv.get("pin_first_user", False))
    if "system" in conv:
        c.set_system(conv["system"])
    held = []
    for turn in conv["turns"]:
        if "user" in turn:
            c.push_user(turn["user"])
        elif "response" in turn:
            path = turn["response"]
            provider = turn["provider"]
            c.begin_response(provider)
            for f in decode_path(provider, path):
                c.push_frame(f)
                v = json.loads(f)
                if v["type"] == "TOOL_CALL":
                    held.append({"id": v["content"].get("id"), "name": v["content"]["name"], "answered": False})
            c.end_response()
        else:
            for r in turn["results"]:
                if "id" in r:
                    call = next(h for h in held if h["id"] == r["id"])
                else:
                    call = next(h for h in held if not h["answered"] and h["name"] == r["name"])
                call["answered"] = True
                content = {} if call["id"] is None else {"id": call["id"]}
                content["name"] = call["name"]
                if "result" in r:
                    content["result"] = r["result"]
                else:
                    content["error"] = r["error"]
                c.push_frame(compact({"type": "TOOL_RESULT", "content": content}))
    return c


def refused_for(name, target):
    """The refusal a case expects instead of a body, or None."""
    conv = CONVERSATIONS[name]
    if target == "ollama" and conv.get("tool_choice") not in (None, "auto"):
        return pw.RequestToolChoiceUnsupported
    return None


def cases():
    return [(name, target) for name in CONVERSATIONS for target in PROVIDERS]


def replay(target, conv):
    """`polyweave-replay --request TARGET FILE` on the conversation: (exit code, stdout, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "conv.json"
        path.write_text(compact(conv), encoding="utf-8")
        out = subprocess.run(
            [os.environ["PW_REPLAY"], "--request", target, str(path)], capture_output=True, timeout=60
        )
    return out.returncode, out.stdout, out.stderr.decode("utf-8", "replace")


def regenerate():
    """Writes request_bodies.json from polyweave-replay (`PW_REPLAY`)."""
    stored = {}
    for name, target in cases():
        code, out, err = replay(target, CONVERSATIONS[name])
        if code == 0:
            stored["%s/%s" % (name, target)] = out.decode("utf-8").rstrip("\n")
        else:
            stored["%s/%s" % (name, target)] = {"refused": err.strip()}
    EXPECTED.write_text(json.dumps(stored, ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8")


class Bodies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.stored = json.loads(EXPECTED.read_text(encoding="utf-8"))

    def test_the_stored_cases_are_the_cases(self):
        self.assertEqual(sorted(self.stored), sorted("%s/%s" % c for c in cases()))

    def test_bodies_are_polyweave_replays(self):
        for name, target in cases():
            conv = CONVERSATIONS[name]
            want = self.stored["%s/%s" % (name, target)]
            with self.subTest(conversation=name, provider=target), build(conv) as c:
                before = c.stats()
                refusal = refused_for(name, target)
                if refusal is not None:
                    self.assertIsInstance(want, dict)
                    with self.assertRaises(refusal) as caught:
                        c.request(target, options_of(conv), declarations_of(conv))
                    self.assertIsNone(caught.exception.index)
                    self.assertEqual(c.stats(), before)
                    continue
                self.assertIsInstance(want, str)
                want_bytes = want.encode("utf-8")
                with c.request(target, options_of(conv), declarations_of(conv)) as r:
                    self.assertEqual(len(r), len(want_bytes))
                    self.assertEqual(r.length, len(want_bytes))
                    self.assertEqual(r.body(), want_bytes)
                    for size in (1, 7):
                        pieces = list(r.chunks(size))
                        self.assertTrue(all(len(p) == size for p in pieces[:-1]))
                        self.assertTrue(1 <= len(pieces[-1]) <= size)
                        self.assertEqual(b"".join(pieces), want_bytes)
                    self.assertEqual(r.body(), want_bytes)
                self.assertEqual(c.stats(), before)

    def test_what_the_bodies_hold(self):
        # A few members spelled out, so that the stored file is known to say what it should.
        s = self.stored
        self.assertTrue(
            s["chat/openai-chat"].startswith(
                '{"model":"m-1","messages":[{"role":"system","content":"You are \\"terse\\"."},'
                '{"role":"user","content":"Over to you \u2713"},{"role":"assistant","content":null,"tool_calls":'
                '[{"id":"call_JMW1whyEaYG438VE1OIflxA2","type":"function","function":{"name":"GetWeatherArgs",'
                '"arguments":"{\\"city\\":\\"Edinburgh\\",\\"country\\":\\"GB\\",\\"units\\":\\"c\\"}"}}'
            ),
            s["chat/openai-chat"],
        )
        self.assertIn(
            '{"role":"tool","tool_call_id":"call_DNYTawLBoN8fj3KN6qU9N1Ou","content":"market closed"}',
            s["chat/openai-chat"],
        )
        # The MCP tool under the name each provider takes, the choice naming it so.
        self.assertIn('"tool_choice":{"type":"tool","name":"fs_read"}', s["anthropic/anthropic"])
        self.assertIn('"allowedFunctionNames":["fs.read"]', s["anthropic/gemini"])
        # Calls without ids get one the provider takes, the same on the call and its result.
        self.assertIn('{"type":"tool_result","tool_use_id":"pwcall_2","content":"no station","is_error":true}', s["ollama/anthropic"])
        self.assertEqual(s["anthropic/ollama"], {"refused": "polyweave-replay: the provider has no tool choice"})

    def test_evicting_conversation_evicts(self):
        with build(CONVERSATIONS["evicting"]) as c:
            s = c.stats()
            self.assertEqual((s.capacity, s.entries, s.evicted), (504, 5, 1))
            self.assertLessEqual(s.used, 504)
        body = self.stored["evicting/openai-chat"]
        # The first user text is pinned; the first exchange went, so the two user texts around
        # it are one message now.
        self.assertIn(
            '{"role":"user","content":[{"type":"text","text":"Over to you \u2713"},{"type":"text","text":"Thanks."}]}', body
        )
        self.assertNotIn("call_JMW1whyEaYG438VE1OIflxA2", body)
        self.assertIn("toolu_01NRLabsLyVHZPKxbKvkfSMn", body)

    def test_polyweave_replay_prints_the_stored_bodies(self):
        if not os.environ.get("PW_REPLAY"):
            # tests/tests/python_binding.rs always sets it; the wheel's run has no cargo build.
            print("PW_REPLAY is not set: the stored bodies are compared, not polyweave-replay", file=sys.stderr)
            return
        for name, target in cases():
            with self.subTest(conversation=name, provider=target):
                code, out, err = replay(target, CONVERSATIONS[name])
                want = self.stored["%s/%s" % (name, target)]
                if isinstance(want, dict):
                    self.assertEqual((code, out, err.strip()), (2, b"", want["refused"]))
                else:
                    self.assertEqual((code, err), (0, ""))
                    self.assertEqual(out, want.encode("utf-8") + b"\n")


FRAMES = [
    b'{"type":"TEXT","content":"Let me "}',
    b'{"type":"TEXT","content":"add."}',
    b'{"type":"TOOL_CALL","content":{"id":"call_1","name":"add","args":{"a":2,"b":3}}}',
    b'{"type":"END","content":{"reason":"tool_calls"}}',
    b'{"type":"TOOL_RESULT","content":{"id":"call_1","name":"add","result":5}}',
]
SCHEMA = '{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}'
ADD = pw.Declaration("add", SCHEMA, "Adds two numbers")


def small():
    """A conversation that has asked, been answered with a call, and holds its result."""
    c = pw.Conversation(2048)
    c.set_system('Be "terse".')
    c.push_user("Add 2 and 3")
    c.begin_response("openai-chat")
    pushed = c.push_frames(FRAMES)
    assert pushed == [pw.Pushed.KEPT, pw.Pushed.KEPT, pw.Pushed.KEPT, pw.Pushed.ENDED, pw.Pushed.KEPT], pushed
    c.push_user("Thanks \u2713")
    return c


ANTHROPIC_BODY = (
    '{"model":"m","max_tokens":100,"system":"Be \\"terse\\".","messages":['
    '{"role":"user","content":"Add 2 and 3"},'
    '{"role":"assistant","content":[{"type":"text","text":"Let me add."},{"type":"tool_use","id":"call_1","name":"add","input":{"a":2,"b":3}}]},'
    '{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"5"},{"type":"text","text":"Thanks \u2713"}]}],'
    '"tools":[{"name":"add","description":"Adds two numbers","input_schema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}},'
    '{"name":"fs_read","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}],'
    '"tool_choice":{"type":"auto"},"stream":true,"temperature":0.2}'
).encode("utf-8")


class Api(unittest.TestCase):
    def test_a_body_spelled_out(self):
        # ffi/tests/request_api.rs's conversation and its Anthropic body, through Python.
        opts = pw.RequestOptions("m", max_tokens=100, tool_choice="auto", extra={"temperature": 0.2})
        with small() as c:
            self.assertEqual(c.stats(), pw.ConversationStats(used=c.stats().used, capacity=2048, entries=4, evicted=0))
            r = c.request("anthropic", opts, [ADD, pw.Declaration.from_mcp(MCP_READ)])
            self.assertEqual((len(r), r.body()), (len(ANTHROPIC_BODY), ANTHROPIC_BODY))
            self.assertEqual(r.provider, pw.Provider.ANTHROPIC)
            # The same from Provider values, the schema as a dict, the entry as its text.
            r2 = c.request(
                pw.Provider.ANTHROPIC,
                opts,
                [pw.Declaration("add", json.loads(SCHEMA), "Adds two numbers"), pw.Declaration.from_mcp(compact(MCP_READ))],
            )
            self.assertEqual(r2.body(), ANTHROPIC_BODY)

    def test_dict_frames_are_the_same_as_their_bytes(self):
        with small() as a, pw.Conversation(2048) as b:
            b.set_system('Be "terse".')
            b.push_user("Add 2 and 3")
            b.begin_response("openai-chat")
            for f in FRAMES:
                b.push_frame(json.loads(f))
            b.push_user("Thanks \u2713")
            self.assertEqual(a.stats(), b.stats())
            self.assertEqual(a.request("gemini", "m").body(), b.request("gemini", "m").body())

    def test_the_options_spelled_per_provider(self):
        with pw.Conversation() as c:
            c.push_user("hi")
            body = lambda p, **o: c.request(p, pw.RequestOptions("m", **o), [ADD]).body().decode()  # noqa: E731
            self.assertEqual(
                body("openai-chat", tool_choice=pw.ToolChoice.tool("add")),
                '{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":'
                '{"name":"add","description":"Adds two numbers","parameters":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}}],'
                '"tool_choice":{"type":"function","function":{"name":"add"}},"stream":true,"stream_options":{"include_usage":true}}',
            )
            self.assertIn('"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}', body("gemini", tool_choice=pw.ToolChoice.REQUIRED))
            self.assertIn('"tool_choice":"none"', body("openai-responses", tool_choice="none"))
            self.assertIn('"options":{"num_predict":7}', body("ollama", max_tokens=7))
            # Anthropic always writes max_tokens: 4096 when none is given.
            self.assertIn('"max_tokens":4096', body("anthropic"))
            # strict, where the schema meets the rules.
            strict = pw.Declaration(
                "add", '{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":false}', strict=True
            )
            self.assertIn('"strict":true', c.request("anthropic", "m", [strict]).body().decode())

    def test_gemini_path(self):
        self.assertEqual(pw.gemini_path("gemini-2.5-flash"), "models/gemini-2.5-flash:streamGenerateContent?alt=sse")
        long = "g" * 300
        self.assertEqual(pw.gemini_path(long), "models/%s:streamGenerateContent?alt=sse" % long)
        with self.assertRaises(pw.TextNotUtf8):
            pw.gemini_path(b"\xff")

    def test_values_the_binding_checks(self):
        self.assertEqual(pw.ToolChoice.tool("x"), pw.ToolChoice("tool", "x"))
        self.assertEqual(repr(pw.ToolChoice.AUTO), "ToolChoice.AUTO")
        self.assertEqual(repr(pw.ToolChoice.tool("x")), "ToolChoice.tool('x')")
        self.assertEqual(pw.RequestOptions("m", tool_choice="required").tool_choice, pw.ToolChoice.REQUIRED)
        for bad in ("any", "tool"):
            with self.assertRaises(ValueError):
                pw.RequestOptions("m", tool_choice=bad)
        with self.assertRaises(ValueError):
            pw.ToolChoice("auto", "x")
        for bad in (0, -1, 1 << 32):
            with self.assertRaises(ValueError):
                pw.RequestOptions("m", max_tokens=bad)
        with self.assertRaises(TypeError):
            pw.RequestOptions("m", max_tokens=True)
        with self.assertRaises(TypeError):
            pw.Conversation(-1)
        with self.assertRaises(TypeError):
            pw.Declaration("x", strict=1)
        with pw.Conversation(0) as c:
            self.assertEqual(c.stats(), pw.ConversationStats(0, 0, 0, 0))
            with self.assertRaises(TypeError):
                c.pin_first_user(2)
            with self.assertRaises(TypeError):
                c.request("openai-chat", "m", ["add"])
            with self.assertRaises(ValueError):
                c.request("openai-chat", "m").chunks(0)
        self.assertEqual([int(p) for p in pw.Pushed], [_ffi.PW_PUSHED_KEPT, _ffi.PW_PUSHED_IGNORED, _ffi.PW_PUSHED_ENDED])

    def test_memory_is_the_capacity_given(self):
        for capacity in (0, 1, 4096, 65536):
            with pw.Conversation(capacity) as c:
                self.assertEqual(c.stats().capacity, capacity)
                self.assertGreaterEqual(c.memory_size, capacity)
        with pw.Conversation() as c:
            self.assertEqual(c.stats().capacity, 65536)

    def test_every_code_has_its_class(self):
        classes = {
            11: (pw.TextNotUtf8, pw.PolyweaveError),
            600: (pw.ConversationNoRoom, pw.ConversationRefused),
            601: (pw.ConversationBadContent, pw.ConversationRefused),
            602: (pw.ConversationNoResponse, pw.ConversationRefused),
            603: (pw.ConversationNoName, pw.ConversationRefused),
            604: (pw.ConversationUnknownCall, pw.ConversationRefused),
            605: (pw.ConversationAlreadyAnswered, pw.ConversationRefused),
            606: (pw.ConversationNoOutcome, pw.ConversationRefused),
            607: (pw.ConversationEmptyText, pw.ConversationRefused),
            610: (pw.DeclarationBadName, pw.DeclarationRefused),
            611: (pw.DeclarationNotStrict, pw.DeclarationRefused),
            612: (pw.DeclarationBadSchema, pw.DeclarationRefused),
            613: (pw.DeclarationBadEntry, pw.DeclarationRefused),
            614: (pw.DeclarationDuplicateName, pw.DeclarationRefused),
            620: (pw.RequestToolChoiceUnsupported, pw.RequestRefused),
            621: (pw.RequestUnknownTool, pw.RequestRefused),
            622: (pw.RequestBadExtra, pw.RequestRefused),
            623: (pw.RequestExtraClash, pw.RequestRefused),
            624: (pw.RequestStale, pw.RequestRefused),
        }
        for code, (cls, base) in classes.items():
            e = pw.error_for(code)
            self.assertIs(type(e), cls)
            self.assertIs(pw.errors.BY_CODE[code], cls)
            self.assertTrue(issubclass(cls, base))
            self.assertTrue(issubclass(cls, ValueError))
            self.assertEqual((e.code, e.message, e.index), (code, pw.result_text(code), None))
        self.assertEqual(len({cls for cls, _ in classes.values()}), len(classes))
        # Nothing else between 600 and 699.
        self.assertEqual(sorted(c for c in pw.errors.BY_CODE if 600 <= c < 700), sorted(c for c in classes if c >= 600))


class Readme(unittest.TestCase):
    def test_the_readme_example_prints_what_it_says(self):
        text = (support.ROOT / "examples" / "python" / "README.md").read_text(encoding="utf-8")
        section = text.split("## Asking the model again", 1)[1].split("\n## ", 1)[0]
        code, printed = re.search(r"```python\n(.*?)```\n\nprints[^\n]*\n\n```text\n(.*?)```", section, re.S).groups()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
        self.assertEqual(out.getvalue(), printed)


class Refusals(unittest.TestCase):
    def assert_refused(self, c, cls, call, *args):
        before = c.stats()
        with self.assertRaises(cls) as caught:
            call(*args)
        self.assertIs(type(caught.exception), cls)
        self.assertEqual(caught.exception.code, cls.code)
        self.assertEqual(c.stats(), before, "%s changed the conversation" % cls.__name__)
        return caught.exception

    def test_conversation_refusals_change_nothing(self):
        with pw.Conversation(256) as c:
            self.assert_refused(c, pw.ConversationEmptyText, c.set_system, "")
            c.set_system("sys")
            c.push_user("go")
            self.assert_refused(c, pw.ConversationNoResponse, c.push_frame, FRAMES[0])
            c.begin_response("anthropic")
            self.assertEqual(c.push_frame(FRAMES[2]), pw.Pushed.KEPT)
            self.assertEqual(c.stats().entries, 3)
            for frame, cls in [
                (b'{"type":"TEXT","content":5}', pw.ConversationBadContent),
                (b'{"type":"TOOL_RESULT","content":{"id":"call_1","result":1}}', pw.ConversationNoName),
                (b'{"type":"TOOL_RESULT","content":{"id":"nope","name":"add","result":1}}', pw.ConversationUnknownCall),
                (b'{"type":"TOOL_RESULT","content":{"id":"call_1","name":"add"}}', pw.ConversationNoOutcome),
                (b"[1]", pw.FrameNotObject),
                (b'{"content":1}', pw.FrameMissingType),
                (b'{"type":"TEXT",', pw.InvalidJson),
                (b"", pw.FrameNotObject),
            ]:
                e = self.assert_refused(c, cls, c.push_frame, frame)
                self.assertIsInstance(e, pw.MalformedFrame if cls.code < 600 else pw.ConversationRefused)
            before = c.stats()
            self.assertEqual(c.push_frame('{"type":"PING","content":1}'), pw.Pushed.IGNORED)
            self.assertEqual(c.stats(), before)
            self.assertEqual(c.push_frame(FRAMES[4]), pw.Pushed.KEPT)
            self.assert_refused(c, pw.ConversationAlreadyAnswered, c.push_frame, FRAMES[4])
            for text, cls in [("", pw.ConversationEmptyText), (b"\xff", pw.TextNotUtf8), ("x" * 300, pw.ConversationNoRoom)]:
                self.assert_refused(c, cls, c.push_user, text)
            self.assert_refused(c, pw.TextNotUtf8, c.set_system, b"\xc3")
            self.assert_refused(c, pw.UnknownProvider, c.begin_response, "nope")
            self.assert_refused(c, pw.UnknownProvider, c.begin_response, 9)
            c.clear()
            self.assertEqual(c.stats(), pw.ConversationStats(0, 256, 0, 0))

    def test_declaration_refusals_name_the_declaration(self):
        def host(name, schema=None, strict=False):
            return pw.Declaration(name, schema, strict=strict)

        with pw.Conversation(512) as c:
            c.push_user("hi")
            kept = c.request("openai-chat", "m")
            body = kept.body()
            for decls, cls, index in [
                ([ADD, host("bad name")], pw.DeclarationBadName, 1),
                ([ADD, host("")], pw.DeclarationBadName, 1),
                ([host("x", SCHEMA, strict=True), ADD], pw.DeclarationNotStrict, 0),
                ([ADD, host("x", "[1]")], pw.DeclarationBadSchema, 1),
                ([ADD, pw.Declaration.from_mcp({"title": "no name"})], pw.DeclarationBadEntry, 1),
                ([ADD, pw.Declaration.from_mcp(b"")], pw.DeclarationBadEntry, 1),
                ([ADD, ADD], pw.DeclarationDuplicateName, 1),
                ([ADD, host(b"\xffx")], pw.TextNotUtf8, 1),
                ([pw.Declaration("add", SCHEMA, b"\xc3"), ADD], pw.TextNotUtf8, 0),
            ]:
                with self.subTest(cls=cls.__name__, index=index):
                    e = self.assert_refused(c, cls, c.request, "openai-chat", "m", decls)
                    self.assertEqual(e.index, index)
            # A name gemini takes and the others do not.
            self.assertIn(b'"name":"fs.read"', c.request("gemini", "m", [host("fs.read")]).body())
            # A request made before is still good: making one only reads the conversation.
            self.assertEqual(kept.body(), body)

    def test_option_refusals(self):
        with pw.Conversation(512) as c:
            c.push_user("hi")
            for provider, opts, cls in [
                ("ollama", pw.RequestOptions("m", tool_choice="required"), pw.RequestToolChoiceUnsupported),
                ("ollama", pw.RequestOptions("m", tool_choice=pw.ToolChoice.tool("add")), pw.RequestToolChoiceUnsupported),
                ("openai-chat", pw.RequestOptions("m", tool_choice=pw.ToolChoice.tool("nothing")), pw.RequestUnknownTool),
                ("openai-chat", pw.RequestOptions("m", extra='{"temperature":}'), pw.RequestBadExtra),
                ("openai-chat", pw.RequestOptions("m", extra="[1]"), pw.RequestBadExtra),
                ("openai-chat", pw.RequestOptions("m", extra=""), pw.RequestBadExtra),
                ("openai-chat", pw.RequestOptions("m", extra={"messages": []}), pw.RequestExtraClash),
                ("anthropic", pw.RequestOptions("m", extra={"max_tokens": 1}), pw.RequestExtraClash),
                ("openai-chat", pw.RequestOptions(b"\xfe"), pw.TextNotUtf8),
                ("nope", pw.RequestOptions("m"), pw.UnknownProvider),
                (9, pw.RequestOptions("m"), pw.UnknownProvider),
            ]:
                with self.subTest(cls=cls.__name__, provider=provider):
                    e = self.assert_refused(c, cls, c.request, provider, opts, [ADD])
                    self.assertIsNone(e.index)
            # Ollama takes `auto`; no tool declared, a choice is not written at all.
            self.assertNotIn(b"tool", c.request("ollama", pw.RequestOptions("m", tool_choice="auto"), [ADD]).body()[-60:])
            self.assertNotIn(b"tool_choice", c.request("openai-chat", pw.RequestOptions("m", tool_choice="required")).body())


class Staleness(unittest.TestCase):
    def test_a_changed_conversation_makes_its_requests_stale(self):
        changes = [
            ("push_user", lambda c: c.push_user("more")),
            # A refused call counts too: it was handed the conversation to change.
            ("push_user refused", lambda c: c.push_user("")),
            ("set_system", lambda c: c.set_system("s")),
            ("pin_first_user", lambda c: c.pin_first_user(True)),
            ("end_response", lambda c: c.end_response()),
            ("begin_response", lambda c: c.begin_response("anthropic")),
            ("push_frame ignored", lambda c: c.push_frame(b'{"type":"PING"}')),
            ("clear", lambda c: c.clear()),
        ]
        for name, change in changes:
            with self.subTest(change=name), small() as c:
                r = c.request("openai-chat", "m", [ADD])
                whole = r.body()
                it = r.chunks(16)
                self.assertEqual(next(it), whole[:16])
                # Queries do not change it.
                c.stats()
                self.assertEqual(len(r), len(whole))
                try:
                    change(c)
                except pw.PolyweaveError:
                    pass
                with self.assertRaises(pw.RequestStale):
                    len(r)
                with self.assertRaises(pw.RequestStale):
                    next(it)
                with self.assertRaises(pw.RequestStale):
                    r.body()
                with self.assertRaises(pw.RequestStale):
                    list(r.chunks(7))
                # Made again, it reads the conversation as it is now.
                again = c.request("openai-chat", "m", [ADD]).body()
                if name == "clear":
                    self.assertIn(b'"messages":[]', again)
                if name == "push_user":
                    self.assertIn(b'{"type":"text","text":"more"}]}', again)

    def test_chunks_overtaken_and_closed_objects(self):
        with small() as c:
            r = c.request("openai-chat", "m")
            whole = r.body()
            it = r.chunks(5)
            self.assertEqual(next(it), whole[:5])
            self.assertEqual(b"".join(r.chunks(3)), whole)
            with self.assertRaises(RuntimeError):
                next(it)
            # Every body() or chunks() starts from the beginning.
            self.assertEqual(r.body(), whole)
            r.close()
            r.close()
            self.assertTrue(r.closed)
            with self.assertRaises(ValueError):
                r.body()
            r2 = c.request("openai-chat", "m")
        with self.assertRaises(ValueError):
            len(r2)
        with self.assertRaises(ValueError):
            r2.body()
        with self.assertRaises(ValueError):
            c.push_user("x")
        self.assertEqual(repr(c), "Conversation(closed)")


if __name__ == "__main__" and sys.argv[1:] == ["--regenerate"]:
    regenerate()
