"""Decode throughput of the provider SDKs' own Python stream parsers on the recorded bodies.

Run with the SDK environment (tests/run.sh makes it; tests/sdk/requirements.txt pins it):

    target/sdk-venv/bin/python tests/bench/decode_compare.py [--min-time 1.0]

For each provider it reads every `tests/data/provider-streams/<provider>/*.body` (the bytes the
Rust bench `tests/benches/decode.rs` decodes) and times two things over all of them, pass
after pass until `--min-time` seconds (and at least 5 passes), the median pass reported:

* `sdk`: what the SDK does with a streamed response once the bytes have arrived, through the
  SDK's own classes on an `httpx2.Response` holding the body (no network, no request):
  - openai-chat: `openai._streaming.Stream[ChatCompletionChunk]` (its `SSEDecoder`,
    `json.loads`, the chunk models) under `ChatCompletionStream`, which runs
    `ChatCompletionStreamState.handle_chunk` per chunk (what `client.chat.completions.stream`
    iterates), then `get_final_completion()`;
  - openai-responses: `Stream[ResponseStreamEvent]` under `ResponseStream`
    (`ResponseStreamState.handle_event`, what `client.responses.stream` iterates);
  - anthropic: `anthropic._streaming.Stream[RawMessageStreamEvent]` under `MessageStream`
    (`accumulate_event` + `build_events`, what `client.messages.stream` iterates);
  - gemini: `google.genai._api_client.HttpResponse.segments()` (its SSE line reader and
    `json.loads`), then per chunk what `BaseApiClient.request_streamed` and
    `Models._generate_content_stream` do (`json.dumps`, the error check, `json.loads`,
    `_GenerateContentResponse_from_mldev`/`_from_vertex`, `GenerateContentResponse._from_response`);
    the SDK does not merge chunks, so a small loop joins text parts and collects calls;
  - ollama: what `Client._request(..., stream=True)` does (`iter_lines`, `json.loads`, the
    error check, `ChatResponse(**part)`), text and tool calls joined by a small loop.
  Every call's arguments are then parsed with `json.loads` when they are text (the decoder
  validates them too), and text and call names are checked against `NAME.expected.json`.
* `bare`: the SDK's SSE (or line) reader and `json.loads` of each payload only: no models, no
  accumulation. A floor under any Python parser, not an SDK's real cost.

Prints one JSON object a provider on stdout (for tests/bench/decode_compare.sh) and a
readable line a provider on stderr. MB is 10^6 bytes.
"""

import argparse
import json
from importlib.metadata import version
import statistics
import sys
import time
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[2]
STREAMS = ROOT / "tests" / "data" / "provider-streams"
PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]
URL = "http://localhost.invalid/v1/stream"
REQUEST = httpx2.Request("POST", URL)


def response(body):
    return httpx2.Response(200, content=body, request=REQUEST, headers={"content-type": "text/event-stream"})


def args_value(text):
    """What a caller does with a call's argument text: parse it (None when it is not JSON)."""
    if text is None or text == "":
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return None


# --- openai-chat -------------------------------------------------------------------------

import openai
from openai._streaming import SSEDecoder as OpenAISSEDecoder
from openai._streaming import Stream as OpenAIStream
from openai.lib.streaming.chat._completions import ChatCompletionStream
from openai.lib.streaming.responses._responses import ResponseStream
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

OPENAI = openai.OpenAI(api_key="bench", base_url="http://localhost.invalid/v1")


def openai_chat_sdk(name, body):
    raw = OpenAIStream(cast_to=ChatCompletionChunk, response=response(body), client=OPENAI)
    stream = ChatCompletionStream(raw_stream=raw, response_format=openai.omit, input_tools=openai.omit)
    try:
        for _event in stream:
            pass
        completion = stream.get_final_completion()
    except Exception as e:  # the SDK refuses the body
        return {"refused": type(e).__name__}
    message = completion.choices[0].message
    calls = [(c.function.name, args_value(c.function.arguments)) for c in message.tool_calls or []]
    return {"text": message.content or "", "calls": calls}


def openai_responses_sdk(name, body):
    raw = OpenAIStream(cast_to=ResponseStreamEvent, response=response(body), client=OPENAI)
    stream = ResponseStream(raw_stream=raw, text_format=openai.omit, input_tools=openai.omit, starting_after=None)
    try:
        for _event in stream:
            pass
    except Exception as e:  # the SDK refuses the body
        return {"refused": type(e).__name__}
    state = stream._state
    final = state._completed_response or state._ResponseStreamState__current_snapshot
    text, calls = "", []
    for item in final.output if final is not None else []:
        if item.type == "message":
            text += "".join(c.text for c in item.content if c.type == "output_text")
        elif item.type == "function_call":
            calls.append((item.name, args_value(item.arguments)))
    return {"text": text, "calls": calls}


def openai_bare(body):
    n = 0
    try:
        for sse in OpenAISSEDecoder().iter_bytes(iter([body])):
            if sse.data.startswith("[DONE]"):
                break
            json.loads(sse.data)
            n += 1
    except ValueError:  # where the SDK stops too
        pass
    return n


# --- anthropic ---------------------------------------------------------------------------

import anthropic
from anthropic._streaming import SSEDecoder as AnthropicSSEDecoder
from anthropic._streaming import Stream as AnthropicStream
from anthropic.lib.streaming import MessageStream
from anthropic.types import RawMessageStreamEvent

ANTHROPIC = anthropic.Anthropic(api_key="bench", base_url="http://localhost.invalid")


def anthropic_sdk(name, body):
    raw = AnthropicStream(cast_to=RawMessageStreamEvent, response=response(body), client=ANTHROPIC)
    stream = MessageStream(raw, output_format=anthropic.NOT_GIVEN)
    try:
        for _event in stream:
            pass
        message = stream.current_message_snapshot
    except Exception as e:  # the SDK refuses the body
        return {"refused": type(e).__name__}
    text, calls = "", []
    for block in message.content:
        if block.type == "text":
            text += block.text
        elif block.type == "tool_use":
            calls.append((block.name, block.input))
    return {"text": text, "calls": calls}


def anthropic_bare(body):
    n = 0
    try:
        for sse in AnthropicSSEDecoder().iter_bytes(iter([body])):
            if sse.data:
                json.loads(sse.data)
                n += 1
    except ValueError:  # where the SDK stops too
        pass
    return n


# --- gemini ------------------------------------------------------------------------------

from google.genai import _api_client as genai_client
from google.genai import errors as genai_errors
from google.genai import models as genai_models
from google.genai import types as genai_types


def gemini_chunks(body, vertex):
    """What `Models._generate_content_stream` yields for the body, chunk by chunk."""
    session_response = genai_client.HttpResponse(headers={}, response_stream=response(body))
    convert = genai_models._GenerateContentResponse_from_vertex if vertex else genai_models._GenerateContentResponse_from_mldev
    for chunk in session_response.segments():
        # BaseApiClient.request_streamed
        chunk_dump = json.dumps(chunk)
        if chunk_dump.startswith('{"error":'):
            chunk_json = json.loads(chunk_dump)
            genai_errors.APIError.raise_error(chunk_json.get("error", {}).get("code"), chunk_json, session_response)
        sdk_response = genai_types.HttpResponse(headers=session_response.headers, body=chunk_dump)
        # Models._generate_content_stream
        response_dict = {} if not sdk_response.body else json.loads(sdk_response.body)
        response_dict = convert(response_dict, None, None)
        value = genai_types.GenerateContentResponse._from_response(response=response_dict, kwargs={})
        value.sdk_http_response = genai_types.HttpResponse(headers=sdk_response.headers)
        yield value


def gemini_sdk(name, body):
    text, calls = "", []
    try:
        for chunk in gemini_chunks(body, "vertex" in name):
            if not chunk.candidates or not chunk.candidates[0].content:
                continue
            for part in chunk.candidates[0].content.parts or []:
                if part.text and not part.thought:
                    text += part.text
                call = part.function_call
                if call is not None and call.name:
                    # A whole call, or (Vertex streamed arguments) the start of one; its
                    # `partialArgs` pieces carry values the caller assembles by path.
                    calls.append([call.name, dict(call.args or {})])
                if call is not None and call.partial_args and calls:
                    for piece in call.partial_args:
                        value = piece.string_value
                        if value is None:
                            value = piece.number_value if piece.number_value is not None else piece.bool_value
                        path = piece.json_path or ""
                        args = calls[-1][1]
                        if isinstance(value, str) and isinstance(args.get(path), str):
                            args[path] += value
                        else:
                            args[path] = value
    except Exception as e:  # the SDK refuses the body
        return {"refused": type(e).__name__}
    return {"text": text, "calls": [tuple(c) for c in calls]}


def gemini_bare(body):
    n = 0
    try:
        for _chunk in genai_client.HttpResponse(headers={}, response_stream=response(body)).segments():
            n += 1
    except genai_errors.UnknownApiResponseError:  # where the SDK stops too
        pass
    return n


# --- ollama ------------------------------------------------------------------------------

import ollama


def ollama_sdk(name, body):
    text, calls = "", []
    try:
        for line in response(body).iter_lines():
            part = json.loads(line)
            if err := part.get("error"):
                raise ollama.ResponseError(err)
            chunk = ollama.ChatResponse(**part)
            text += chunk.message.content or ""
            for call in chunk.message.tool_calls or []:
                calls.append((call.function.name, dict(call.function.arguments)))
    except Exception as e:  # the SDK refuses the body
        return {"refused": type(e).__name__}
    return {"text": text, "calls": calls}


def ollama_bare(body):
    n = 0
    try:
        for line in response(body).iter_lines():
            json.loads(line)
            n += 1
    except ValueError:  # where the SDK stops too (a blank line)
        pass
    return n


SDK = {
    "openai-chat": (openai_chat_sdk, openai_bare),
    "openai-responses": (openai_responses_sdk, openai_bare),
    "anthropic": (anthropic_sdk, anthropic_bare),
    "gemini": (gemini_sdk, gemini_bare),
    "ollama": (ollama_sdk, ollama_bare),
}

SDK_NAMES = {
    "openai-chat": f"openai {openai.__version__}",
    "openai-responses": f"openai {openai.__version__}",
    "anthropic": f"anthropic {anthropic.__version__}",
    "gemini": f"google-genai {version('google-genai')}",
    "ollama": f"ollama {version('ollama')}",
}


def recordings(provider):
    out = []
    for path in sorted((STREAMS / provider).glob("*.body")):
        expected = json.loads(path.with_name(path.stem + ".expected.json").read_text())
        out.append((path.stem, path.read_bytes(), expected))
    return out


def agrees(result, expected):
    """Text and call names as the expected file has them (a refusal agrees when the expected
    file says the SDK refused, or records an in-stream error)."""
    if "refused" in result:
        return bool(expected.get("sdk_refused") or expected.get("error"))
    names = [c[0] for c in result["calls"]]
    return result["text"] == expected["text"] and names == [c["name"] for c in expected["tool_calls"]]


def median_pass(fn, bodies, min_time):
    """Median seconds of one pass over `bodies`, passes repeated for `min_time` s (at least 5)."""
    for body in bodies:  # warm-up
        fn(body)
    samples, total = [], 0.0
    while total < min_time or len(samples) < 5:
        t0 = time.perf_counter()
        for body in bodies:
            fn(body)
        dt = time.perf_counter() - t0
        samples.append(dt)
        total += dt
    return statistics.median(samples), len(samples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds of passes per measurement")
    ap.add_argument("providers", nargs="*", default=PROVIDERS)
    opts = ap.parse_args()
    for provider in opts.providers:
        recs = recordings(provider)
        sdk, bare = SDK[provider]
        named = [(name, body) for name, body, _ in recs]
        agree = sum(agrees(sdk(name, body), exp) for name, body, exp in recs)
        body_bytes = sum(len(b) for _, b, _ in recs)
        t_sdk, n_sdk = median_pass(lambda item: sdk(*item), named, opts.min_time)
        t_bare, n_bare = median_pass(bare, [b for _, b, _ in recs], opts.min_time)
        row = {
            "provider": provider,
            "sdk": SDK_NAMES[provider],
            "bodies": len(recs),
            "bytes": body_bytes,
            "agree": agree,
            "sdk_s": t_sdk,
            "sdk_passes": n_sdk,
            "sdk_mbps": body_bytes / t_sdk / 1e6,
            "bare_s": t_bare,
            "bare_passes": n_bare,
            "bare_mbps": body_bytes / t_bare / 1e6,
        }
        print(json.dumps(row), flush=True)
        print(
            f"python {provider:<16} {SDK_NAMES[provider]:<20} {len(recs):>2} bodies {body_bytes:>7} B: "
            f"sdk {row['sdk_mbps']:7.2f} MB/s ({n_sdk} passes), "
            f"SSE+json.loads {row['bare_mbps']:7.2f} MB/s ({n_bare} passes); "
            f"{agree}/{len(recs)} agree with the expected files",
            file=sys.stderr,
            flush=True,
        )


if __name__ == "__main__":
    main()
