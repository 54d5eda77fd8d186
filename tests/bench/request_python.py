"""The provider SDKs building the request bodies of `tests/benches/request.rs`, timed.

Run with the SDK environment (tests/run.sh makes it; tests/sdk/requirements.txt pins it):

    POLYWEAVE_REQUEST_BODIES=/tmp/bodies.ndjson cargo bench -p polyweave-tests --bench request
    target/sdk-venv/bin/python tests/bench/request_python.py /tmp/bodies.ndjson [--min-time 0.1]

(`tests/bench/request_compare.sh` does both and prints the table.)

The input holds, a line a provider, the body the Rust writer wrote for the 20-exchange
conversation of that provider. Each body is first read back (not timed) into the
conversation as a Python program holds one: plain objects (`User`, `Assistant` with its
text, calls and provider state, `Results`), the tools already in the SDK's shape (they are
built once, like the Rust `Declaration`s). Then three things are timed, each the best of 7
batches of `--min-time` seconds, per body:

* `build`: what the SDK user's code does for each request: the provider's message
  structures built from the conversation, then turned into the body's text the way the SDK
  does it (the issue's comparison):
  - openai-chat, openai-responses, anthropic: the `messages`/`input` dict literals (the SDK's
    params TypedDicts are dicts), the params dict, `json.dumps`;
  - gemini: `types.Content`/`types.Part` (`FunctionCall`, `FunctionResponse`) objects, then
    what `Models.generate_content_stream` does with them: `types._GenerateContentParameters`,
    `_GenerateContentParameters_to_mldev`, `_common.convert_to_dict`,
    `_common.encode_unserializable_types` (the `thoughtSignature` bytes to base64), `json.dumps`;
  - ollama: `ollama.Message` objects, then what `Client.chat` does: `ChatRequest(...)` over
    `_copy_messages` and `_copy_tools`, `model_dump(exclude_none=True)`, `json.dumps`.
* `serialize`: the second half alone, on structures already built (a program that keeps the
  history in the SDK's shape between requests): the floor of any Python SDK user.
* `sdk`: for openai and anthropic, what `create()` itself does with the params before
  sending, on structures already built: openai `maybe_transform` against the SDK's
  `...CreateParamsStreaming` TypedDict, then `openapi_dumps` (its `_base_client`); anthropic
  `serialize_data` (`prepare_request_data`'s copy, then its encoder). Gemini's and Ollama's
  `serialize` already are their SDK's path.

`json.dumps` is compact (`separators=(",", ":")`, `ensure_ascii=False`), as the Rust body
is. Each body built is compared with the Rust body as JSON values; a difference the SDK
makes (a member it drops or re-encodes) is reported, not hidden.

Prints one JSON object a provider on stdout and a readable line on stderr.
"""

import argparse
import base64
import json
import sys
import time

PROVIDERS = ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]


def dumps(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


class User:
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text


class Call:
    __slots__ = ("id", "name", "args", "signature")

    def __init__(self, id, name, args, signature=None):
        self.id, self.name, self.args, self.signature = id, name, args, signature


class Assistant:
    """One response: its parts in order, each ("text", text, signature, thought),
    ("call", Call) or ("state", the provider's item as the SDK gave it)."""

    __slots__ = ("parts",)

    def __init__(self):
        self.parts = []

    def text(self):
        return "".join(p[1] for p in self.parts if p[0] == "text")

    def calls(self):
        return [p[1] for p in self.parts if p[0] == "call"]


class Result:
    __slots__ = ("call_id", "name", "output", "is_error")

    def __init__(self, call_id, name, output, is_error=False):
        self.call_id, self.name, self.output, self.is_error = call_id, name, output, is_error


class Results:
    __slots__ = ("results",)

    def __init__(self):
        self.results = []


class Conversation:
    __slots__ = ("model", "system", "entries", "tools", "max_tokens")

    def __init__(self):
        self.model, self.system, self.entries, self.tools, self.max_tokens = None, None, [], None, None

    def results(self):
        if not self.entries or not isinstance(self.entries[-1], Results):
            self.entries.append(Results())
        return self.entries[-1].results


# ---- reading a body back into a conversation (not timed) ------------------------------------


def read_chat(body, c):
    c.model = body["model"]
    names = {}
    for m in body["messages"]:
        role = m["role"]
        if role == "system":
            c.system = m["content"]
        elif role == "user":
            c.entries.append(User(m["content"]))
        elif role == "assistant":
            a = Assistant()
            if m.get("content") is not None:
                a.parts.append(("text", m["content"], None, False))
            for tc in m.get("tool_calls", []):
                a.parts.append(("call", Call(tc["id"], tc["function"]["name"], tc["function"]["arguments"])))
                names[tc["id"]] = tc["function"]["name"]
            c.entries.append(a)
        else:
            c.results().append(Result(m["tool_call_id"], names[m["tool_call_id"]], m["content"]))
    c.tools = body["tools"]


def read_responses(body, c):
    c.model, c.system = body["model"], body.get("instructions")
    names = {}
    for it in body["input"]:
        if it.get("role") == "user":
            c.entries.append(User(it["content"]))
            continue
        if it.get("type") == "function_call_output":
            c.results().append(Result(it["call_id"], names[it["call_id"]], it["output"]))
            continue
        if not c.entries or not isinstance(c.entries[-1], Assistant):
            c.entries.append(Assistant())
        a = c.entries[-1]
        if it.get("role") == "assistant":
            a.parts.append(("text", it["content"], None, False))
        elif it.get("type") == "function_call":
            a.parts.append(("call", Call(it["call_id"], it["name"], it["arguments"])))
            names[it["call_id"]] = it["name"]
        else:
            a.parts.append(("state", it))
    c.tools = body["tools"]


def read_anthropic(body, c):
    c.model, c.system, c.max_tokens = body["model"], body.get("system"), body["max_tokens"]
    names = {}
    for m in body["messages"]:
        content = m["content"]
        if m["role"] == "assistant":
            a = Assistant()
            for b in content:
                if b["type"] == "text":
                    a.parts.append(("text", b["text"], None, False))
                elif b["type"] == "tool_use":
                    a.parts.append(("call", Call(b["id"], b["name"], b["input"])))
                    names[b["id"]] = b["name"]
                else:
                    a.parts.append(("state", b))
            c.entries.append(a)
        elif isinstance(content, str):
            c.entries.append(User(content))
        else:
            for b in content:
                if b["type"] == "tool_result":
                    r = Result(b["tool_use_id"], names[b["tool_use_id"]], b["content"], b.get("is_error", False))
                    c.results().append(r)
                else:
                    c.entries.append(User(b["text"]))
    c.tools = body["tools"]


def read_gemini(body, c, model):
    c.model = model
    c.system = body["systemInstruction"]["parts"][0]["text"]
    for m in body["contents"]:
        if m["role"] == "model":
            a = Assistant()
            for p in m["parts"]:
                sig = p.get("thoughtSignature")
                sig = base64.b64decode(sig) if sig is not None else None
                if "functionCall" in p:
                    fc = p["functionCall"]
                    a.parts.append(("call", Call(fc.get("id"), fc["name"], fc["args"], sig)))
                else:
                    a.parts.append(("text", p["text"], sig, p.get("thought", False)))
            c.entries.append(a)
            continue
        for p in m["parts"]:
            if "functionResponse" in p:
                fr = p["functionResponse"]
                resp = fr["response"]
                err = "error" in resp
                r = Result(fr.get("id"), fr["name"], resp["error"] if err else resp["output"], err)
                c.results().append(r)
            else:
                c.entries.append(User(p["text"]))
    c.tools = body["tools"]


def read_ollama(body, c):
    c.model = body["model"]
    for m in body["messages"]:
        role = m["role"]
        if role == "system":
            c.system = m["content"]
        elif role == "user":
            c.entries.append(User(m["content"]))
        elif role == "assistant":
            a = Assistant()
            a.parts.append(("text", m["content"], None, False))
            for tc in m.get("tool_calls", []):
                a.parts.append(("call", Call(tc.get("id"), tc["function"]["name"], tc["function"]["arguments"])))
            c.entries.append(a)
        else:
            c.results().append(Result(m.get("tool_call_id"), m["tool_name"], m["content"]))
    c.tools = body["tools"]


# ---- building the request as an SDK user does (timed) ---------------------------------------


def build_chat(c):
    messages = [{"role": "system", "content": c.system}]
    for e in c.entries:
        if type(e) is User:
            messages.append({"role": "user", "content": e.text})
        elif type(e) is Assistant:
            text = e.text()
            m = {"role": "assistant", "content": text or None}
            calls = e.calls()
            if calls:
                m["tool_calls"] = [
                    {"id": k.id, "type": "function", "function": {"name": k.name, "arguments": k.args}}
                    for k in calls
                ]
            messages.append(m)
        else:
            for r in e.results:
                messages.append({"role": "tool", "tool_call_id": r.call_id, "content": r.output})
    return {
        "model": c.model,
        "messages": messages,
        "tools": c.tools,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def build_responses(c):
    items = []
    for e in c.entries:
        if type(e) is User:
            items.append({"role": "user", "content": e.text})
        elif type(e) is Assistant:
            for p in e.parts:
                if p[0] == "text":
                    items.append({"role": "assistant", "content": p[1]})
                elif p[0] == "call":
                    k = p[1]
                    items.append({"type": "function_call", "call_id": k.id, "name": k.name, "arguments": k.args})
                else:
                    items.append(p[1])
        else:
            for r in e.results:
                items.append({"type": "function_call_output", "call_id": r.call_id, "output": r.output})
    return {
        "model": c.model,
        "instructions": c.system,
        "input": items,
        "tools": c.tools,
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }


def build_anthropic(c):
    messages = []
    results_open = None  # the results message a following user text joins
    for e in c.entries:
        if type(e) is User:
            if results_open is not None:
                results_open.append({"type": "text", "text": e.text})
            else:
                messages.append({"role": "user", "content": e.text})
            results_open = None
        elif type(e) is Assistant:
            content = [p[1] for p in e.parts if p[0] == "state"]
            text = e.text()
            if text.strip():
                content.append({"type": "text", "text": text})
            for k in e.calls():
                content.append({"type": "tool_use", "id": k.id, "name": k.name, "input": k.args})
            messages.append({"role": "assistant", "content": content})
            results_open = None
        else:
            blocks = []
            for r in e.results:
                b = {"type": "tool_result", "tool_use_id": r.call_id, "content": r.output}
                if r.is_error:
                    b["is_error"] = True
                blocks.append(b)
            messages.append({"role": "user", "content": blocks})
            results_open = blocks
    return {
        "model": c.model,
        "max_tokens": c.max_tokens,
        "system": c.system,
        "messages": messages,
        "tools": c.tools,
        "stream": True,
    }


def gemini_sdk():
    from google.genai import _api_client, _common, types
    from google.genai.models import _GenerateContentParameters_to_mldev

    client = _api_client.BaseApiClient(api_key="not-used")
    return _api_client, _common, types, _GenerateContentParameters_to_mldev, client


def build_gemini(c, sdk):
    _, _, types, _, _ = sdk
    contents = []
    results_open = None
    for e in c.entries:
        if type(e) is User:
            part = types.Part(text=e.text)
            if results_open is not None:
                results_open.parts.append(part)
            else:
                contents.append(types.Content(role="user", parts=[part]))
            results_open = None
        elif type(e) is Assistant:
            parts = []
            for p in e.parts:
                if p[0] == "call":
                    k = p[1]
                    parts.append(
                        types.Part(
                            function_call=types.FunctionCall(id=k.id, name=k.name, args=k.args),
                            thought_signature=k.signature,
                        )
                    )
                else:
                    parts.append(types.Part(text=p[1], thought_signature=p[2], thought=p[3] or None))
            contents.append(types.Content(role="model", parts=parts))
            results_open = None
        else:
            parts = [
                types.Part(
                    function_response=types.FunctionResponse(
                        id=r.call_id,
                        name=r.name,
                        response={"error": r.output} if r.is_error else {"output": r.output},
                    )
                )
                for r in e.results
            ]
            results_open = types.Content(role="user", parts=parts)
            contents.append(results_open)
    return contents


def gemini_config(c, sdk):
    _, _, types, _, _ = sdk
    decls = [
        types.FunctionDeclaration(
            name=d["name"], description=d.get("description"), parameters_json_schema=d["parametersJsonSchema"]
        )
        for d in c.tools[0]["functionDeclarations"]
    ]
    return types.GenerateContentConfig(system_instruction=c.system, tools=[types.Tool(function_declarations=decls)])


def serialize_gemini(c, contents, config, sdk):
    _, common, types, to_mldev, client = sdk
    params = types._GenerateContentParameters(model=c.model, contents=contents, config=config)
    request = to_mldev(client, params, None, params)
    request.pop("config", None)
    request.pop("_url", None)
    request = common.convert_to_dict(request)
    request = common.encode_unserializable_types(request)
    return dumps(request)


def build_ollama(c):
    from ollama import Message

    messages = [Message(role="system", content=c.system)]
    for e in c.entries:
        if type(e) is User:
            messages.append(Message(role="user", content=e.text))
        elif type(e) is Assistant:
            calls = [
                Message.ToolCall(function=Message.ToolCall.Function(name=k.name, arguments=k.args)) for k in e.calls()
            ]
            messages.append(Message(role="assistant", content=e.text(), tool_calls=calls or None))
        else:
            for r in e.results:
                messages.append(Message(role="tool", tool_name=r.name, content=r.output))
    return messages


def serialize_ollama(c, messages):
    from ollama._client import _copy_messages, _copy_tools
    from ollama._types import ChatRequest

    request = ChatRequest(
        model=c.model, messages=list(_copy_messages(messages)), tools=list(_copy_tools(c.tools)), stream=True
    ).model_dump(exclude_none=True)
    return dumps(request)


def sdk_transform(provider):
    """What `create()` does with the params before sending, for the SDKs that take dicts:
    openai `maybe_transform` against the streaming params TypedDict, then `openapi_dumps`
    (`_base_client`); anthropic `serialize_data` (`prepare_request_data`, then its encoder)."""
    if provider == "anthropic":
        from anthropic._utils import serialize_data

        return lambda params: serialize_data(params, location="body")
    if provider == "openai-responses":
        from openai.types.responses.response_create_params import ResponseCreateParamsStreaming as T
    elif provider == "openai-chat":
        from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming as T
    else:
        return None
    from openai._utils import maybe_transform
    from openai._utils._json import openapi_dumps

    return lambda params: openapi_dumps(maybe_transform(params, T))


# ---- timing ---------------------------------------------------------------------------------


def best_us(f, min_time):
    """Microseconds per call of f: the best of 7 batches of about min_time seconds."""
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < 0.02:
        f()
        calls += 1
    n = max(1, int(min_time / ((time.perf_counter() - start) / calls)))
    best = float("inf")
    for _ in range(7):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def differences(a, b, path="", out=None):
    """Where two JSON values differ (at most 5 places)."""
    out = [] if out is None else out
    if len(out) >= 5:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'rust' if k in a else 'python'}")
            else:
                differences(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            differences(x, y, f"{path}/{i}", out)
    elif a != b:
        out.append(f"{path}: {json.dumps(a)[:60]} vs {json.dumps(b)[:60]}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bodies")
    ap.add_argument("--min-time", type=float, default=0.1)
    args = ap.parse_args()
    bodies, raw_lens = {}, {}
    with open(args.bodies, "rb") as f:
        for line in f:
            if line.strip():
                v = json.loads(line)
                p = v["provider"]
                bodies[p] = v["body"]
                # The Rust body's own bytes: the line less its `{"provider":…,"body":…}` wrapper.
                raw_lens[p] = len(line.rstrip(b"\n")) - len(f'{{"provider":"{p}","body":}}'.encode())
    gsdk = None
    for provider in PROVIDERS:
        body = bodies[provider]
        c = Conversation()
        transform = sdk_transform(provider)
        if provider == "openai-chat":
            read_chat(body, c)
            build = lambda: dumps(build_chat(c))  # noqa: E731
            held = build_chat(c)
            serialize = lambda: dumps(held)  # noqa: E731
        elif provider == "openai-responses":
            read_responses(body, c)
            build = lambda: dumps(build_responses(c))  # noqa: E731
            held = build_responses(c)
            serialize = lambda: dumps(held)  # noqa: E731
        elif provider == "anthropic":
            read_anthropic(body, c)
            build = lambda: dumps(build_anthropic(c))  # noqa: E731
            held = build_anthropic(c)
            serialize = lambda: dumps(held)  # noqa: E731
        elif provider == "gemini":
            gsdk = gsdk or gemini_sdk()
            read_gemini(body, c, "gemini-2.5-flash")
            config = gemini_config(c, gsdk)
            build = lambda: serialize_gemini(c, build_gemini(c, gsdk), config, gsdk)  # noqa: E731
            held_contents = build_gemini(c, gsdk)
            serialize = lambda: serialize_gemini(c, held_contents, config, gsdk)  # noqa: E731
        else:
            read_ollama(body, c)
            build = lambda: serialize_ollama(c, build_ollama(c))  # noqa: E731
            held_messages = build_ollama(c)
            serialize = lambda: serialize_ollama(c, held_messages)  # noqa: E731
        built = build()
        diff = differences(body, json.loads(built))
        row = {
            "provider": provider,
            "rust_body_bytes": raw_lens[provider],
            "python_body_bytes": len(built.encode()),
            "same_json": not diff,
            "differences": diff,
            "build_us": best_us(build, args.min_time),
            "serialize_us": best_us(serialize, args.min_time),
            "sdk_us": best_us(lambda: transform(held), args.min_time) if transform else None,
        }
        print(json.dumps(row), flush=True)
        sdk = f", sdk transform+dumps {row['sdk_us']:,.0f} us" if transform else ""
        print(
            f"{provider:<16} {row['python_body_bytes']:>7} B: build {row['build_us']:,.0f} us, "
            f"serialize {row['serialize_us']:,.0f} us{sdk}; same JSON as Rust: {row['same_json']}"
            + (f" ({'; '.join(diff)})" if diff else ""),
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
