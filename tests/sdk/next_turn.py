"""What a provider's own SDK keeps from a recorded streaming response for the next request
(SPEC §10.4): the reference an assistant turn written back by the library is compared with.

    next_turn.py PROVIDER BODY_FILE    one JSON object (exit 2 with {"skipped": why} when the
                                       SDK refuses the body or stops at an in-stream error)
    next_turn.py --all                 one JSON line per recording in tests/data/provider-streams

Each object has `provider`, `name`, `text` (the assistant text, concatenated), `calls`
([{id, name, arguments}] in order; `arguments` parsed, or `arguments_text` + `invalid` when the
text is not JSON, as in the recordings' expected files) and the provider's state as its SDK
holds it, members with null values left out (SPEC compares absent and null alike):

- openai-chat: `message`, the final message of `ChatCompletionStreamState`
  (openai.lib.streaming.chat), without the SDK-side `parsed` members;
- openai-responses: `reasoning`, the `reasoning` items of the final `response.output` as they
  are, and `function_calls`, its `function_call` items' `call_id`, `name` and `arguments`
  (ResponseStreamState: the `response.completed` response, or the snapshot when the body ends
  before one);
- anthropic: `content`, the content blocks of MessageStream's final message snapshot
  (`thinking` with its `signature`, `redacted_thinking` with its `data`, `tool_use` with the
  `input` the SDK parsed from the `partial_json` pieces);
- gemini: `parts`, every part of every chunk's candidate 0 in order, as google-genai parses
  each chunk into a GenerateContentResponse (its Chat keeps exactly these, one Content a
  chunk), and `signatures`, each `thoughtSignature` with the part it came on;
- ollama: `message`, the `content` (joined) and `tool_calls` (in order) of the ChatResponse
  chunks (the SDK parses lines but does not merge them).

The SDKs are driven as decode_compare.py drives them: their own stream classes over an
in-memory response holding the body, no network.
"""
import json
import re
import sys
from pathlib import Path

import httpx2

import anthropic
from anthropic._streaming import Stream as AnthropicStream
from anthropic.lib.streaming import MessageStream
from anthropic.types import RawMessageStreamEvent
from google.genai import _api_client as genai_client
from google.genai import errors as genai_errors
from google.genai import models as genai_models
from google.genai import types as genai_types
import ollama
import openai
from openai._streaming import Stream as OpenAIStream
from openai.lib.streaming.chat._completions import ChatCompletionStream
from openai.lib.streaming.responses._responses import ResponseStream
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

ROOT = Path(__file__).resolve().parents[2]
STREAMS = ROOT / "tests" / "data" / "provider-streams"
PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]
REQUEST = httpx2.Request("POST", "http://localhost.invalid/v1/stream")
OPENAI = openai.OpenAI(api_key="oracle", base_url="http://localhost.invalid/v1")
ANTHROPIC = anthropic.Anthropic(api_key="oracle", base_url="http://localhost.invalid")


class Refused(Exception):
    """The SDK refuses the body, or stops at an in-stream error: nothing is kept."""


def response(body):
    return httpx2.Response(200, content=body, request=REQUEST, headers={"content-type": "text/event-stream"})


def dump(model, drop=()):
    """A pydantic object as the JSON it stands for, null members and SDK-side members left out."""
    return prune(model.model_dump(mode="json", by_alias=True, exclude_none=True), drop)


def prune(value, drop):
    if isinstance(value, dict):
        return {k: prune(v, drop) for k, v in value.items() if k not in drop and v is not None}
    if isinstance(value, list):
        return [prune(v, drop) for v in value]
    return value


def call(cid, name, arguments):
    """A call as the recordings' expected files write it: arguments as a JSON value."""
    out = {"id": cid or None, "name": name}
    if isinstance(arguments, str):
        if not arguments.strip():
            out["arguments"] = {}
        else:
            try:
                out["arguments"] = json.loads(arguments)
            except ValueError:
                out["arguments_text"] = arguments
                out["invalid"] = True
    else:
        out["arguments"] = arguments if arguments is not None else {}
    return out


def openai_chat(name, body):
    raw = OpenAIStream(cast_to=ChatCompletionChunk, response=response(body), client=OPENAI)
    stream = ChatCompletionStream(raw_stream=raw, response_format=openai.omit, input_tools=openai.omit)
    try:
        for _event in stream:
            pass
        completion = stream.get_final_completion()
    except Exception as e:
        raise Refused(f"{type(e).__name__}: {e}") from e
    message = completion.choices[0].message
    return {
        "text": message.content or "",
        "calls": [call(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []],
        "message": dump(message, drop=("parsed", "parsed_arguments")),
    }


def openai_responses(name, body):
    raw = OpenAIStream(cast_to=ResponseStreamEvent, response=response(body), client=OPENAI)
    stream = ResponseStream(raw_stream=raw, text_format=openai.omit, input_tools=openai.omit, starting_after=None)
    try:
        for event in stream:
            if event.type == "error":
                raise Refused(f"error event: {event.message}")
            if event.type == "response.failed":
                raise Refused(f"response.failed: {event.response.error}")
    except Refused:
        raise
    except Exception as e:
        raise Refused(f"{type(e).__name__}: {e}") from e
    state = stream._state
    final = state._completed_response or state._ResponseStreamState__current_snapshot
    if final is None:
        raise Refused("no response in the body")
    text, calls, reasoning, function_calls = "", [], [], []
    for item in final.output:
        if item.type == "message":
            text += "".join(c.text for c in item.content if c.type == "output_text")
        elif item.type == "function_call":
            calls.append(call(item.call_id, item.name, item.arguments))
            function_calls.append({"call_id": item.call_id, "name": item.name, "arguments": item.arguments})
        elif item.type == "reasoning":
            reasoning.append(dump(item))
    return {"text": text, "calls": calls, "reasoning": reasoning, "function_calls": function_calls}


def anthropic_(name, body):
    raw = AnthropicStream(cast_to=RawMessageStreamEvent, response=response(body), client=ANTHROPIC)
    stream = MessageStream(raw, output_format=anthropic.NOT_GIVEN)
    try:
        for _event in stream:
            pass
        message = stream.current_message_snapshot
    except Exception as e:
        raise Refused(f"{type(e).__name__}: {e}") from e
    # The SDK parses the joined `partial_json` pieces leniently (a cut object keeps what came);
    # `calls` judge the raw text it joined, as the recordings' expected files do, so a cut call
    # is `invalid` there while `content` shows the input the SDK would send back.
    raw_args = stream._MessageStream__json_bufs
    text, calls = "", []
    for index, block in enumerate(message.content):
        if block.type == "text":
            text += block.text
        elif block.type == "tool_use":
            raw = raw_args.get(index)
            calls.append(call(block.id, block.name, raw.decode("utf-8") if raw else block.input))
    return {"text": text, "calls": calls, "content": [dump(b) for b in message.content]}


def gemini_chunks(body, vertex):
    """What `Models._generate_content_stream` yields for the body, chunk by chunk."""
    session_response = genai_client.HttpResponse(headers={}, response_stream=response(body))
    convert = genai_models._GenerateContentResponse_from_vertex if vertex else genai_models._GenerateContentResponse_from_mldev
    for chunk in session_response.segments():
        chunk_dump = json.dumps(chunk)
        if chunk_dump.startswith('{"error":'):
            chunk_json = json.loads(chunk_dump)
            genai_errors.APIError.raise_error(chunk_json.get("error", {}).get("code"), chunk_json, session_response)
        response_dict = convert(json.loads(chunk_dump), None, None)
        yield genai_types.GenerateContentResponse._from_response(response=response_dict, kwargs={})


def gemini(name, body):
    parts = []
    try:
        for chunk in gemini_chunks(body, "vertex" in name):
            if chunk.candidates and chunk.candidates[0].content:
                parts += chunk.candidates[0].content.parts or []
    except Exception as e:
        raise Refused(f"{type(e).__name__}: {e}") from e
    text = "".join(p.text for p in parts if p.text and not p.thought)
    calls, open_paths = [], {}
    for p in parts:
        fc = p.function_call
        if fc is not None and fc.name:
            calls.append(call(fc.id, fc.name, dict(fc.args or {})))
            open_paths = {}
        if fc is not None and fc.partial_args and calls:
            # Vertex streamed arguments: the SDK hands them over piece by piece and leaves
            # them apart; as the recordings' oracle does, each value goes to its jsonPath and a
            # string piece continuing one that had willContinue is appended.
            for piece in fc.partial_args:
                value = piece.string_value
                if value is None:
                    value = piece.number_value if piece.number_value is not None else piece.bool_value
                calls[-1]["arguments"] = put(calls[-1]["arguments"], path_steps(piece.json_path or "$"), value, open_paths)
                open_paths[piece.json_path] = bool(piece.will_continue) and isinstance(value, str)
    dumped = [dump(p) for p in parts]
    signatures = []
    for d in dumped:
        if "thoughtSignature" in d:
            signatures.append({"thoughtSignature": d["thoughtSignature"], "part": {k: v for k, v in d.items() if k != "thoughtSignature"}})
    return {"text": text, "calls": calls, "parts": dumped, "signatures": signatures}


def path_steps(path):
    """`$.a.b[0].c` as ["a", "b", 0, "c"]."""
    steps = []
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path.removeprefix("$")):
        steps.append(int(index) if index else name)
    return steps


def put(container, steps, value, open_paths, path="$"):
    """`container` with `value` at `steps` (dicts and lists made as needed)."""
    if not steps:
        previous_open = open_paths.get(path, False)
        return container + value if previous_open and isinstance(container, str) and isinstance(value, str) else value
    step, rest = steps[0], steps[1:]
    here = f"{path}.{step}" if isinstance(step, str) else f"{path}[{step}]"
    if isinstance(step, int):
        container = container if isinstance(container, list) else []
        while len(container) <= step:
            container.append(None)
        container[step] = put(container[step], rest, value, open_paths, here)
    else:
        container = container if isinstance(container, dict) else {}
        container[step] = put(container.get(step), rest, value, open_paths, here)
    return container


def ollama_(name, body):
    content, tool_calls = "", []
    try:
        for line in response(body).iter_lines():
            part = json.loads(line)
            if err := part.get("error"):
                raise ollama.ResponseError(err)
            chunk = ollama.ChatResponse(**part)
            content += chunk.message.content or ""
            tool_calls += chunk.message.tool_calls or []
    except Exception as e:
        raise Refused(f"{type(e).__name__}: {e}") from e
    return {
        "text": content,
        "calls": [call(None, c.function.name, dict(c.function.arguments)) for c in tool_calls],
        "message": {"content": content, "tool_calls": [dump(c) for c in tool_calls]},
    }


SDK = {
    "openai-chat": openai_chat,
    "openai-responses": openai_responses,
    "anthropic": anthropic_,
    "gemini": gemini,
    "ollama": ollama_,
}


def next_turn(provider, path):
    """The provider's SDK's next-turn state for one recorded body (raises Refused)."""
    path = Path(path)
    name = path.name.removesuffix(".body")
    return {"provider": provider, "name": name, **SDK[provider](name, path.read_bytes())}


def main(argv):
    if argv[1:] == ["--all"]:
        for provider in PROVIDERS:
            for path in sorted((STREAMS / provider).glob("*.body")):
                try:
                    out = next_turn(provider, path)
                except Refused as e:
                    out = {"provider": provider, "name": path.name.removesuffix(".body"), "skipped": str(e)}
                print(json.dumps(out, ensure_ascii=False))
        return 0
    if len(argv) != 3 or argv[1] not in SDK:
        print(f"usage: next_turn.py {{{','.join(PROVIDERS)}}} BODY_FILE | --all", file=sys.stderr)
        return 2
    try:
        print(json.dumps(next_turn(argv[1], argv[2]), ensure_ascii=False))
    except Refused as e:
        print(json.dumps({"provider": argv[1], "name": Path(argv[2]).name, "skipped": str(e)}))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
