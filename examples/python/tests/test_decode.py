"""The stream decoders and item encoders through the Python binding: every recorded provider
body of tests/data/provider-streams, whole and in small random pieces, gives back exactly what
the provider's own SDK reconstructs (its `.expected.json`); items for every provider; every
refusal its own exception with the library's code."""

import json
import random
import unittest
from dataclasses import fields
from decimal import Decimal
from pathlib import Path

import support  # noqa: E402,F401 (first: it decides which package the imports below find)

import polyweave_tool_adapter as pw  # noqa: E402
from polyweave_tool_adapter import _ffi  # noqa: E402

ROOT = support.ROOT
STREAMS = ROOT / "tests" / "data" / "provider-streams"
PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]


def exact(data):
    """JSON with every number an exact `Decimal` (so 1 and 1.0 are equal, 1 and true are not)."""
    return json.loads(data, parse_float=Decimal, parse_int=Decimal)


def same(a, b):
    """Equal JSON values: same types throughout, object member order ignored."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def recordings():
    """(provider, name, body bytes, expected) for every recorded body, sorted by name."""
    out = []
    for provider in PROVIDERS:
        for body in sorted((STREAMS / provider).glob("*.body")):
            expected = exact((body.parent / (body.name[: -len(".body")] + ".expected.json")).read_bytes())
            out.append((provider, "%s/%s" % (provider, body.stem), body.read_bytes(), expected))
    return out


RECORDINGS = recordings()


def wanted(expected):
    """The expected file's fields that the frames decide."""
    calls = []
    for c in expected["tool_calls"]:
        call = {"id": c["id"], "name": c["name"]}
        if c.get("invalid") is True:
            call["arguments_text"] = c["arguments_text"]
            call["invalid"] = True
        else:
            call["arguments"] = c["arguments"]
        calls.append(call)
    return {"text": expected["text"], "tool_calls": calls, "finish": expected["finish"], "error": expected["error"]}


def reconstruct(test, frames):
    """What the provider's SDK rebuilds, read back from the frames (exact bytes)."""
    text, calls, finish, error, ends = "", [], None, None, 0
    for f in frames:
        test.assertNotIn(b"\n", f)
        v = exact(f)
        test.assertIsInstance(v, dict)
        content = v["content"]
        kind = v["type"]
        if kind == "TEXT":
            test.assertIsInstance(content, str)
            text += content
        elif kind in ("REASONING", "STATE"):
            pass
        elif kind == "TOOL_CALL":
            call = {"id": content.get("id"), "name": content["name"]}
            if "args_error" in content:
                call["arguments_text"] = content["args"]
                call["invalid"] = True
            else:
                call["arguments"] = content["args"]
            calls.append(call)
        elif kind == "ERROR":
            error = content["message"]
        elif kind == "END":
            ends += 1
            finish = content["reason"]
        else:
            test.fail("unexpected frame type %r" % kind)
    test.assertEqual(ends, 1, "one END per body")
    return {"text": text, "tool_calls": calls, "finish": finish, "error": error}


def pieces(body, rng, most):
    at = 0
    while at < len(body):
        n = rng.randint(1, most)
        yield body[at : at + n]
        at += n


def decode_raw(provider, chunks, **options):
    """Every frame of one body and the decoder's stats."""
    with pw.Decoder(provider, **options) as d:
        frames = []
        for c in chunks:
            frames.extend(d.feed_raw(c))
        frames.extend(d.finish_raw())
        return frames, d.stats


class Recordings(unittest.TestCase):
    def check(self, name, frames, stats, expected, how):
        got = reconstruct(self, frames)
        want = wanted(expected)
        self.assertTrue(same(got, want), "%s %s:\n got  %r\n want %r" % (name, how, got, want))
        self.assertEqual(stats.calls_started, stats.calls_written, "%s %s" % (name, how))
        self.assertEqual(stats.calls_written, sum(1 for f in frames if f.startswith(b'{"type":"TOOL_CALL"')))

    def test_there_are_71_recordings_with_87_calls(self):
        self.assertEqual(len(RECORDINGS), 71)
        self.assertEqual(sum(len(e["tool_calls"]) for _, _, _, e in RECORDINGS), 87)

    def test_every_recording_whole_gives_what_its_sdk_reconstructs(self):
        for provider, name, body, expected in RECORDINGS:
            frames, stats = decode_raw(provider, [body])
            self.check(name, frames, stats, expected, "whole")

    def test_every_recording_in_small_random_pieces_gives_the_same_frames(self):
        rng = random.Random(0x5EED_0071)
        for provider, name, body, expected in RECORDINGS:
            whole, _ = decode_raw(provider, [body])
            for most in (1, 3, 7, 16, 64):
                frames, stats = decode_raw(provider, pieces(body, rng, most))
                self.assertEqual(frames, whole, "%s in pieces of 1..%d" % (name, most))
                self.check(name, frames, stats, expected, "pieces of 1..%d" % most)

    def test_decode_gives_the_parsed_frames_of_a_chunked_body(self):
        rng = random.Random(7)
        for provider, name, body, expected in RECORDINGS:
            whole, _ = decode_raw(provider, [body])
            got = list(pw.decode(provider, pieces(body, rng, 32)))
            self.assertEqual(got, [json.loads(f) for f in whole], name)
            self.assertEqual(list(pw.decode_raw(provider, pieces(body, rng, 32))), whole, name)

    def test_memoryview_bytearray_and_str_chunks(self):
        provider, name, body, expected = RECORDINGS[0]
        whole, _ = decode_raw(provider, [body])
        half = len(body) // 2
        frames, _ = decode_raw(provider, [memoryview(body)[:half], bytearray(body[half:])])
        self.assertEqual(frames, whole)
        ollama = next(r for r in RECORDINGS if r[0] == "ollama")
        text = ollama[2].decode("utf-8")
        self.assertEqual(decode_raw("ollama", [text])[0], decode_raw("ollama", [ollama[2]])[0])

    def test_a_small_frame_buffer_is_grown_when_the_library_asks(self):
        for provider, name, body, expected in RECORDINGS[::5]:
            whole, _ = decode_raw(provider, [body])
            frames, stats = decode_raw(provider, [body], frame_buffer=1)
            self.assertEqual(frames, whole, name)


class DecoderObject(unittest.TestCase):
    BODY = (
        b'data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":'
        b'{"name":"add","arguments":"{\\"a\\":1}"}}]},"finish_reason":"tool_calls"}]}\n\n'
        b"data: [DONE]\n\n"
    )
    FRAMES = [
        {"type": "TEXT", "content": "Hi"},
        {"type": "TOOL_CALL", "content": {"id": "c1", "name": "add", "args": {"a": 1}}},
        {"type": "END", "content": {"reason": "tool_calls"}},
    ]

    def test_feed_returns_what_the_bytes_completed_and_finish_the_rest(self):
        with pw.Decoder("openai-chat") as d:
            self.assertEqual(d.provider, pw.Provider.OPENAI_CHAT)
            self.assertEqual(d.feed(self.BODY[:20]), [])
            self.assertEqual(d.feed(self.BODY[20:60]), [self.FRAMES[0]])
            self.assertEqual(d.feed(self.BODY[60:]), self.FRAMES[1:])
            self.assertEqual(d.finish(), [])
            # The next body.
            self.assertEqual(d.feed(self.BODY) + d.finish(), self.FRAMES)
            s = d.stats
            self.assertIsInstance(s, pw.DecoderStats)
            self.assertEqual((s.calls_started, s.calls_written, s.not_json, s.overlong), (2, 2, 0, 0))
            d.reset()
            self.assertEqual(d.stats.calls_started, 0)

    def test_decode_is_lazy(self):
        read = []

        def chunks():
            read.append(1)
            yield self.BODY[:60]
            read.append(2)
            yield self.BODY[60:]

        it = pw.decode("openai-chat", chunks())
        self.assertEqual((next(it), read), (self.FRAMES[0], [1]))
        self.assertEqual(list(it), self.FRAMES[1:])
        self.assertEqual(read, [1, 2])

    def test_finish_writes_open_calls_and_end(self):
        with pw.Decoder(pw.Provider.OPENAI_CHAT) as d:
            cut = self.BODY[: self.BODY.index(b"data: [DONE]")].replace(b',"finish_reason":"tool_calls"', b"")
            frames = d.feed(cut)
            self.assertEqual(frames, [self.FRAMES[0]])
            self.assertEqual(d.stats.calls_started, 1)
            self.assertEqual(d.stats.calls_written, 0)
            last = d.finish()
            self.assertEqual([f["type"] for f in last], ["TOOL_CALL", "END"])
            # Cut off by the body's end: its arguments' text, with why they are not taken.
            self.assertEqual(last[0]["content"]["args"], '{"a":1}')
            self.assertIn("args_error", last[0]["content"])
            self.assertEqual(d.stats.calls_written, 1)

    def test_stats_are_pw_decoder_stats(self):
        self.assertEqual([f.name for f in fields(pw.DecoderStats)], [n for n, _ in _ffi.pw_decoder_stats._fields_])
        with pw.Decoder("openai-chat", event_cap=16) as d:
            d.feed(self.BODY)
            d.finish()
            s = d.stats
            self.assertGreater(s.overlong, 0)
            self.assertEqual(s.calls_started, 0)

    def test_capacities_and_memory(self):
        d = pw.Decoder("anthropic", event_cap=4096, args_cap=512, calls=2)
        small = d.memory_size
        self.assertGreater(small, 4096)
        self.assertGreater(pw.Decoder("anthropic").memory_size, small)
        self.assertGreaterEqual(d.max_frame_len, 2 * 4096)
        d.close()
        self.assertTrue(d.closed)
        with self.assertRaises(ValueError):
            d.feed(b"x")
        with self.assertRaises(ValueError):
            d.stats
        with self.assertRaises(pw.BadConfig):
            pw.Decoder("gemini", event_cap=3)
        with self.assertRaises(TypeError):
            pw.Decoder("gemini", args_cap="big")

    def test_unknown_providers(self):
        for name in ("bedrock", "", "OpenAI-Chat"):
            with self.assertRaises(pw.UnknownProvider) as e:
                pw.Decoder(name)
            self.assertEqual(e.exception.code, _ffi.PW_UNKNOWN_PROVIDER)
            self.assertIsInstance(e.exception, ValueError)
        for number in (0, 6):
            with self.assertRaises(pw.UnknownProvider):
                pw.Decoder(number)
            with self.assertRaises(pw.UnknownProvider):
                pw.encode_item(number, self.FRAMES[1])
        self.assertEqual([pw.provider_from_name(n) for n in PROVIDERS], list(pw.Provider))


CALL = '{"type":"TOOL_CALL","content":{"id":"c1","name":"get","args":{"q":[1, 2]}}}'
RESULT = '{"type":"TOOL_RESULT","content":{"id":"c1","name":"get","result":{"t":"5\\u00b0"}}}'
ERROR = '{"type":"TOOL_RESULT","content":{"id":"c1","name":"get","error":"Tool get failed"}}'

# SPEC §8's table: the call, the result and the error of each provider, byte for byte.
ITEMS = {
    "openai-chat": [
        b'{"id":"c1","type":"function","function":{"name":"get","arguments":"{\\"q\\":[1,2]}"}}',
        b'{"role":"tool","tool_call_id":"c1","content":"{\\"t\\":\\"5\\\\u00b0\\"}"}',
        b'{"role":"tool","tool_call_id":"c1","content":"Tool get failed"}',
    ],
    "openai-responses": [
        b'{"type":"function_call","call_id":"c1","name":"get","arguments":"{\\"q\\":[1,2]}"}',
        b'{"type":"function_call_output","call_id":"c1","output":"{\\"t\\":\\"5\\\\u00b0\\"}"}',
        b'{"type":"function_call_output","call_id":"c1","output":"Tool get failed"}',
    ],
    "anthropic": [
        b'{"type":"tool_use","id":"c1","name":"get","input":{"q":[1,2]}}',
        b'{"type":"tool_result","tool_use_id":"c1","content":"{\\"t\\":\\"5\\\\u00b0\\"}"}',
        b'{"type":"tool_result","tool_use_id":"c1","content":"Tool get failed","is_error":true}',
    ],
    "gemini": [
        b'{"functionCall":{"id":"c1","name":"get","args":{"q":[1,2]}}}',
        b'{"functionResponse":{"id":"c1","name":"get","response":{"output":{"t":"5\\u00b0"}}}}',
        b'{"functionResponse":{"id":"c1","name":"get","response":{"error":"Tool get failed"}}}',
    ],
    "ollama": [
        b'{"id":"c1","function":{"name":"get","arguments":{"q":[1,2]}}}',
        b'{"role":"tool","tool_name":"get","content":"{\\"t\\":\\"5\\\\u00b0\\"}","tool_call_id":"c1"}',
        b'{"role":"tool","tool_name":"get","content":"Tool get failed","tool_call_id":"c1"}',
    ],
}


class Items(unittest.TestCase):
    def test_each_provider_writes_its_row_of_the_table(self):
        for provider, want in ITEMS.items():
            for frame, item in zip([CALL, RESULT, ERROR], want):
                self.assertEqual(pw.encode_item_raw(provider, frame), item, "%s %s" % (provider, frame))
                self.assertEqual(pw.encode_item(provider, frame), json.loads(item))
                # The same frame as bytes, as a dict (sent as compact JSON, non-ASCII as is),
                # and with the provider as a number.
                self.assertEqual(pw.encode_item(provider, frame.encode()), json.loads(item))
                compact = json.dumps(json.loads(frame), ensure_ascii=False, separators=(",", ":"))
                self.assertEqual(pw.encode_item(provider, json.loads(frame)), pw.encode_item(provider, compact))
                self.assertEqual(pw.encode_item(pw.provider_from_name(provider), frame), json.loads(item))

    def test_a_result_item_for_each_provider_from_a_dict(self):
        result = {"type": "TOOL_RESULT", "content": {"id": "call_9", "name": "weather", "result": "sunny"}}
        self.assertEqual(
            [pw.encode_item(p, result) for p in PROVIDERS],
            [
                {"role": "tool", "tool_call_id": "call_9", "content": "sunny"},
                {"type": "function_call_output", "call_id": "call_9", "output": "sunny"},
                {"type": "tool_result", "tool_use_id": "call_9", "content": "sunny"},
                {"functionResponse": {"id": "call_9", "name": "weather", "response": {"output": "sunny"}}},
                {"role": "tool", "tool_name": "weather", "content": "sunny", "tool_call_id": "call_9"},
            ],
        )

    def test_a_large_item_grows_the_buffer(self):
        big = "x" * 100000
        frame = {"type": "TOOL_RESULT", "content": {"id": "c", "name": "n", "result": {"blob": big}}}
        item = pw.encode_item("openai-chat", frame)
        self.assertEqual(json.loads(item["content"]), {"blob": big})

    def test_refusals_raise_the_code_s_error(self):
        for frame, cls, code in [
            ('{"type":"TEXT","content":"x"}', pw.ItemNotCallOrResult, _ffi.PW_ITEM_NOT_CALL_OR_RESULT),
            ('{"type":"TOOL_CALL","content":{"id":"c"}}', pw.ItemNoName, _ffi.PW_ITEM_NO_NAME),
            ('{"type":"TOOL_CALL","content":{"name":"n"}}', pw.ItemNoId, _ffi.PW_ITEM_NO_ID),
            ('{"type":"TOOL_RESULT","content":{"name":"n","result":1}}', pw.ItemNoId, _ffi.PW_ITEM_NO_ID),
            ('{"type":"TOOL_RESULT","content":{"id":"c","name":"n"}}', pw.ItemNoOutcome, _ffi.PW_ITEM_NO_OUTCOME),
        ]:
            with self.assertRaises(cls) as e:
                pw.encode_item("openai-chat", frame)
            self.assertEqual(e.exception.code, code, frame)
            self.assertIsInstance(e.exception, pw.ItemRefused)
            self.assertIsInstance(e.exception, pw.PolyweaveError)
            self.assertEqual(pw.error_for(code).__class__, cls)
        for frame, cls in [
            ('{"type":"TOOL_CALL",', pw.InvalidJson),
            ("[1]", pw.FrameNotObject),
            ('{"content":{}}', pw.FrameMissingType),
        ]:
            with self.assertRaises(cls) as e:
                pw.encode_item("anthropic", frame)
            self.assertIsInstance(e.exception, pw.MalformedFrame)
        with self.assertRaises(pw.UnknownProvider):
            pw.encode_item("bedrock", CALL)
        # Gemini and Ollama match by name: no id is fine there.
        self.assertEqual(
            pw.encode_item("gemini", '{"type":"TOOL_CALL","content":{"name":"get"}}'),
            {"functionCall": {"name": "get", "args": {}}},
        )

    def test_every_recorded_call_and_a_result_for_it_encode_for_their_provider(self):
        n = 0
        for provider, name, body, _ in RECORDINGS:
            frames, _ = decode_raw(provider, [body])
            for f in frames:
                frame = json.loads(f)
                if frame["type"] != "TOOL_CALL":
                    continue
                call = pw.encode_item(provider, f)
                self.assertIsInstance(call, dict, name)
                c = frame["content"]
                result = {"type": "TOOL_RESULT", "content": {"name": c["name"], "result": {"ok": True}}}
                if "id" in c:
                    result["content"]["id"] = c["id"]
                item = pw.encode_item(provider, result)
                self.assertIn(json.dumps(c["name"])[1:-1], json.dumps(item) + json.dumps(call), name)
                n += 1
        self.assertEqual(n, 87)


if __name__ == "__main__":
    unittest.main()
