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

import json
import os
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
        capacity=480,
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
            self.assertEqual((s.capacity, s.entries, s.evicted), (480, 5, 1))
            self.assertLessEqual(s.used, 480)
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


if __name__ == "__main__" and sys.argv[1:] == ["--regenerate"]:
    regenerate()
