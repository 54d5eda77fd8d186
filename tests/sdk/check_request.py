"""Checks whole streaming request bodies (SPEC §10) with each provider SDK's own request types
and with the ordering and pairing rules each provider's API enforces.

Reads NDJSON lines {"provider": P, "body": {...}} from the file named on the command line, or
from stdin when none is named (blank lines skipped). For each body:

(a) the SDK's own request types accept it, and every member they do not name is refused, at
    every depth: openai `CompletionCreateParamsStreaming` / `ResponseCreateParamsStreaming`,
    anthropic `MessageCreateParamsStreaming` (TypedDicts, walked member by member because
    pydantic neither refuses a TypedDict's unnamed members below the top nor validates the
    items of an `Iterable` member); google-genai `Content`, `Tool`, `ToolConfig` and
    `GenerationConfig` for the body's members (pydantic models with extra='forbid'), each also
    through the SDK's own Gemini-API converter; ollama `ChatRequest`'s members, `Message` and
    `Tool` (pydantic models that ignore unnamed members, so they are walked too);
(b) the provider's ordering and pairing rules, one message each (RULES below).

Prints "checked N bodies" and exits 0, or one line per failure
("<line>: <provider>: <rule>: <detail>") then "checked N bodies, K refused" and exits 1.
"""
import collections.abc
import json
import re
import sys
import types
import typing

import pydantic
import typing_extensions
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from google.genai import models as genai_models
from google.genai import types as genai
import ollama
from ollama._types import ChatRequest as OllamaChatRequest
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama")

# --- (a) the SDK types -----------------------------------------------------------------------

LITERAL = (typing.Literal, typing_extensions.Literal)
WRAPPERS = (typing_extensions.Required, typing_extensions.NotRequired, typing_extensions.ReadOnly)
SEQUENCES = (list, collections.abc.Iterable, collections.abc.Sequence, collections.abc.Collection)
MAPPINGS = (dict, collections.abc.Mapping)


def _strip(tp):
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated or origin in WRAPPERS:
            tp = typing.get_args(tp)[0]
        else:
            return tp


def _name(tp):
    return getattr(tp, "__name__", None) or str(tp)


def _literal_score(tp, value):
    """How many Literal members of a TypedDict arm the value matches: picks the arm a value
    means (its `type` or `role`) to report its errors when no arm accepts the value."""
    tp = _strip(tp)
    if not (typing_extensions.is_typeddict(tp) and isinstance(value, dict)):
        return -1
    score = 0
    for key, hint in typing.get_type_hints(tp, include_extras=True).items():
        hint = _strip(hint)
        if typing.get_origin(hint) in LITERAL and key in value:
            if value[key] in typing.get_args(hint):
                score += 1
            else:
                return -1
    return score


def _shape_matches(tp, value):
    """Whether `value` has the JSON shape (object, array, string, ...) the type `tp` takes."""
    tp = _strip(tp)
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return any(_shape_matches(a, value) for a in typing.get_args(tp))
    if origin in LITERAL:
        return any(type(value) is type(v) for v in typing.get_args(tp))
    if typing_extensions.is_typeddict(tp) or origin in MAPPINGS or isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        return isinstance(value, dict)
    if origin in SEQUENCES or _name(origin) == "SequenceNotStr":
        return isinstance(value, list)
    if tp is type(None) or tp is None:
        return value is None
    if tp in (str, bool):
        return isinstance(value, tp)
    if tp in (int, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return True


def walk(tp, value, path):
    """The errors of `value` against the type annotation `tp`, refusing members a TypedDict
    (or a pydantic model that ignores extras) does not name; [] when it is accepted."""
    tp = _strip(tp)
    if tp is typing.Any or tp is object:
        return []
    if tp is type(None) or tp is None:
        return [] if value is None else [f"{path}: expected null"]
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        arms = typing.get_args(tp)
        results = [(arm, walk(arm, value, path)) for arm in arms]
        if any(not errs for _, errs in results):
            return []
        # Report the errors of the arm the value was meant for: the only one of its JSON
        # shape, or the one whose Literal members (`type`, `role`) it matches.
        shaped = [r for r in results if _shape_matches(r[0], value)]
        if len(shaped) == 1:
            return shaped[0][1]
        scored = sorted(shaped or results, key=lambda r: (-_literal_score(r[0], value), len(r[1])))
        arm, errs = scored[0]
        if _literal_score(arm, value) > 0:
            return errs
        return [f"{path}: matches none of {len(arms)} types (closest {_name(_strip(arm))}: {errs[0]})"]
    if origin in LITERAL:
        ok = any(value == v and type(value) is type(v) for v in typing.get_args(tp))
        return [] if ok else [f"{path}: {json.dumps(value)} is not one of {list(typing.get_args(tp))}"]
    if typing_extensions.is_typeddict(tp):
        return _typed_dict(tp, value, path)
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        return _model(tp, value, path)
    if origin in SEQUENCES or _name(origin) == "SequenceNotStr":
        if not isinstance(value, list):
            return [f"{path}: expected an array"]
        (item,) = typing.get_args(tp) or (typing.Any,)
        return [e for i, v in enumerate(value) for e in walk(item, v, f"{path}[{i}]")]
    if origin in MAPPINGS:
        if not isinstance(value, dict):
            return [f"{path}: expected an object"]
        _, item = typing.get_args(tp) or (str, typing.Any)
        return [e for k, v in value.items() for e in walk(item, v, f"{path}.{k}")]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: expected a boolean"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected an integer"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a number"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: expected a string"]
    # Anything else (a protocol, a file type) is left to pydantic.
    try:
        pydantic.TypeAdapter(tp).validate_python(value)
    except Exception as e:
        return [f"{path}: {_name(tp)}: {e}"]
    return []


def _required(tp, hints):
    """The members a TypedDict requires. The SDKs' modules use `from __future__ import
    annotations`, so `Required[...]` is a string when the class is made and
    `__required_keys__` misses it: read it from the resolved hints."""
    required = set()
    for key, hint in hints.items():
        while typing.get_origin(hint) is typing.Annotated:
            hint = typing.get_args(hint)[0]
        origin = typing.get_origin(hint)
        if origin is typing_extensions.Required or (key in tp.__required_keys__ and origin is not typing_extensions.NotRequired):
            required.add(key)
    return required


def _typed_dict(tp, value, path):
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({_name(tp)})"]
    hints = typing.get_type_hints(tp, include_extras=True)
    errors = [f"{path}: {_name(tp)} requires `{k}`" for k in sorted(_required(tp, hints)) if k not in value]
    extra = sorted(set(value) - set(hints))
    if extra:
        errors.append(f"{path}: members {_name(tp)} does not name: {extra}")
    for key, member in value.items():
        if key in hints:
            errors += walk(hints[key], member, f"{path}.{key}")
    return errors


# Inside an ollama tool's `parameters` is the host's JSON Schema, sent as given (SPEC §10.1);
# the SDK's `Parameters` model names only some schema keywords and ignores the rest, as the
# Ollama server does, so unnamed members are not refused there (pydantic still checks types).
OPAQUE_MODELS = (ollama.Tool.Function.Parameters,)


def _model(cls, value, path):
    try:
        # JSON mode: bytes members (a Gemini `thoughtSignature`) are read as base64, as on the wire.
        cls.model_validate_json(json.dumps(value))
    except pydantic.ValidationError as e:
        return [f"{path}: {_name(cls)}: {err['loc']}: {err['msg']}" for err in e.errors()]
    if cls.model_config.get("extra") == "forbid" or cls in OPAQUE_MODELS:
        return []
    return _model_extras(cls, value, path)


def _model_extras(cls, value, path):
    """pydantic ignores a model's unnamed members by default: refuse them at every depth."""
    if not isinstance(value, dict):
        return []
    names = {}
    for name, field in cls.model_fields.items():
        names[name] = field.annotation
        if field.alias:
            names[field.alias] = field.annotation
    errors = []
    extra = sorted(set(value) - set(names))
    if extra:
        errors.append(f"{path}: members {_name(cls)} does not name: {extra}")
    for key, member in value.items():
        if key in names:
            errors += _extras_in(names[key], member, f"{path}.{key}")
    return errors


def _extras_in(tp, value, path):
    tp = _strip(tp)
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        models = [a for a in arms if isinstance(a, type) and issubclass(a, pydantic.BaseModel)]
        if len(arms) == 1 or len(models) == 1:
            return _extras_in(arms[0] if len(arms) == 1 else models[0], value, path)
        return []
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        if tp in OPAQUE_MODELS or tp.model_config.get("extra") == "forbid":
            return []
        return _model_extras(tp, value, path)
    if origin in SEQUENCES and isinstance(value, list):
        (item,) = typing.get_args(tp)
        return [e for i, v in enumerate(value) for e in _extras_in(item, v, f"{path}[{i}]")]
    return []


def _gemini_sdk(cls, to_mldev, value, path):
    """A Gemini member: its google-genai model, then the SDK's own Gemini-API converter (which
    refuses what only Vertex takes, e.g. `partialArgs`)."""
    errors = walk(cls, value, path)
    if errors or to_mldev is None:
        return errors
    try:
        to_mldev(cls.model_validate_json(json.dumps(value)))
    except ValueError as e:
        return [f"{path}: {_name(cls)} (Gemini API): {e}"]
    return []


# GenerateContentRequest's members (the REST body google-genai builds from GenerateContentConfig).
GEMINI_BODY = {
    "contents": list[genai.Content],
    "systemInstruction": genai.Content,
    "tools": list[genai.Tool],
    "toolConfig": genai.ToolConfig,
    "generationConfig": genai.GenerationConfig,
    "safetySettings": list[genai.SafetySetting],
    "cachedContent": str,
}
GEMINI_CONVERTERS = {
    genai.Content: lambda c: genai_models._Content_to_mldev(c),
    genai.Tool: lambda t: genai_models._Tool_to_mldev(t),
    genai.ToolConfig: lambda t: genai_models._ToolConfig_to_mldev(t),
}
GENERATE_CONTENT_CONFIG = {f.alias or n for n, f in genai.GenerateContentConfig.model_fields.items()}


def gemini_types(body):
    if not isinstance(body, dict):
        return ["body: expected an object"]
    errors = [] if "contents" in body else ["body: GenerateContentRequest requires `contents`"]
    extra = sorted(set(body) - set(GEMINI_BODY))
    if extra:
        errors.append(f"body: members GenerateContentRequest does not name: {extra}")
    for key, value in body.items():
        tp = GEMINI_BODY.get(key)
        if tp is None:
            continue
        if typing.get_origin(tp) is list:
            (item,) = typing.get_args(tp)
            if not isinstance(value, list):
                errors.append(f"body.{key}: expected an array")
                continue
            for i, v in enumerate(value):
                errors += _gemini_sdk(item, GEMINI_CONVERTERS.get(item), v, f"body.{key}[{i}]")
        elif tp is str:
            errors += walk(str, value, f"body.{key}")
        else:
            member_errors = _gemini_sdk(tp, GEMINI_CONVERTERS.get(tp), value, f"body.{key}")
            errors += member_errors
            if key == "generationConfig" and not member_errors:
                # The SDK's GenerateContentConfig flattens generationConfig: each member is one of its own.
                outside = sorted(set(value) - GENERATE_CONTENT_CONFIG)
                if outside:
                    errors.append(f"body.generationConfig: members GenerateContentConfig does not name: {outside}")
    return errors





def ollama_types(body):
    if not isinstance(body, dict):
        return ["body: expected an object"]
    if isinstance(body.get("messages"), list):
        body = {**body, "messages": [_without_server_ids(m) for m in body["messages"]]}
    errors = walk(OllamaChatRequest, body, "body")
    if errors:
        return errors
    # ChatRequest takes a message as any mapping: each must be a Message.
    for i, m in enumerate(body.get("messages") or []):
        errors += walk(ollama.Message, m, f"body.messages[{i}]")
    return errors


def _without_server_ids(message):
    """The message without the call ids the Ollama server reads and ollama-python 0.6 does not
    name (SPEC §8's table): a call's `id` (the server's `api.ToolCall.ID`) and a tool
    message's `tool_call_id` (`api.Message.ToolCallID`); both must be strings when present."""
    if not isinstance(message, dict):
        return message
    m = dict(message)
    if isinstance(m.get("tool_call_id"), str):
        del m["tool_call_id"]
    calls = m.get("tool_calls")
    if isinstance(calls, list):
        m["tool_calls"] = [
            {k: v for k, v in c.items() if not (k == "id" and isinstance(v, str))}
            if isinstance(c, dict) else c
            for c in calls
        ]
    return m


TYPES = {
    "openai-chat": lambda body: walk(CompletionCreateParamsStreaming, body, "body"),
    "openai-responses": lambda body: walk(ResponseCreateParamsStreaming, body, "body"),
    "anthropic": lambda body: walk(MessageCreateParamsStreaming, body, "body"),
    "gemini": gemini_types,
    "ollama": ollama_types,
}

TYPE_NAMES = {
    "openai-chat": "CompletionCreateParamsStreaming",
    "openai-responses": "ResponseCreateParamsStreaming",
    "anthropic": "MessageCreateParamsStreaming",
    "gemini": "google-genai Content/Tool/ToolConfig/GenerationConfig",
    "ollama": "ollama ChatRequest/Message/Tool",
}

# --- (b) the ordering and pairing rules ------------------------------------------------------


def _dicts(items):
    return [m if isinstance(m, dict) else {} for m in (items if isinstance(items, list) else [])]


def openai_chat_rules(body):
    """Chat Completions: an assistant message's calls are each answered by exactly one `tool`
    message right after it (before any other message); no tool message without its call."""
    errors = []
    messages = _dicts(body.get("messages"))
    pending = None  # call ids of the last assistant message with calls, and whether answered
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            tid = m.get("tool_call_id")
            if pending is None or tid not in pending:
                errors.append(f"orphan-tool-message: messages[{i}] answers tool_call_id {tid!r}, which the assistant message before it did not make")
            elif pending[tid]:
                errors.append(f"call-answered-once: messages[{i}] answers tool_call_id {tid!r} a second time")
            else:
                pending[tid] = True
            continue
        errors += _unanswered(pending, i, len(messages))
        pending = None
        if role == "assistant" and "tool_calls" in m:
            calls = m["tool_calls"] if isinstance(m["tool_calls"], list) else []
            if not calls:
                errors.append(f"no-empty-tool-calls: messages[{i}] has tool_calls: [] (leave the member out)")
            pending = {}
            for c in _dicts(calls):
                if c.get("id") in pending:
                    errors.append(f"call-ids-unique: messages[{i}] makes call {c.get('id')!r} twice")
                pending[c.get("id")] = False
    errors += _unanswered(pending, len(messages), len(messages))
    return errors


def _unanswered(pending, at, end):
    where = "the end of messages" if at == end else f"messages[{at}]"
    return [f"call-answered: call {cid!r} has no tool message before {where}" for cid, done in (pending or {}).items() if not done]


def openai_responses_rules(body):
    """Responses: every function_call has one function_call_output with its call_id after it,
    and every output has its call before it; with store:false a reasoning item carries its
    encrypted_content (the API cannot look it up by id)."""
    errors = []
    items = body.get("input")
    calls = {}  # call_id -> answered
    for i, item in enumerate(_dicts(items)):
        kind = item.get("type")
        if kind == "function_call":
            cid = item.get("call_id")
            if cid in calls:
                errors.append(f"call-ids-unique: input[{i}] repeats call_id {cid!r}")
            calls[cid] = False
        elif kind == "function_call_output":
            cid = item.get("call_id")
            if cid not in calls:
                errors.append(f"orphan-output: input[{i}] answers call_id {cid!r}, which no function_call before it made")
            elif calls[cid]:
                errors.append(f"call-answered-once: input[{i}] answers call_id {cid!r} a second time")
            else:
                calls[cid] = True
        elif kind == "reasoning" and body.get("store") is False and not item.get("encrypted_content"):
            errors.append(f"reasoning-encrypted-content: input[{i}] is a reasoning item without encrypted_content under store:false")
    errors += [f"call-answered: function_call {cid!r} has no function_call_output after it" for cid, done in calls.items() if not done]
    return errors


ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def _blocks(message):
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return _dicts(content)


def anthropic_rules(body):
    """Messages: roles alternate starting with user; a tool_use's tool_result is in the next
    (user) message, tool_result blocks first; no empty or white-space text; tool_use ids
    match ^[a-zA-Z0-9_-]+$; thinking blocks carry their signature."""
    errors = []
    messages = _dicts(body.get("messages"))
    if not messages:
        errors.append("starts-with-user: no messages")
    for i, m in enumerate(messages):
        want = "user" if i % 2 == 0 else "assistant"
        if m.get("role") != want:
            errors.append(f"alternate-roles: messages[{i}] is {m.get('role')!r}, expected {want!r} (user first, then alternating)")
        blocks = _blocks(m)
        for j, b in enumerate(blocks):
            if b.get("type") == "text" and isinstance(b.get("text"), str) and not b["text"].strip():
                errors.append(f"no-blank-text: messages[{i}].content[{j}] is an empty or white-space-only text block")
            if b.get("type") == "thinking" and not b.get("signature"):
                errors.append(f"thinking-signature: messages[{i}].content[{j}] is a thinking block without its signature")
            if b.get("type") == "tool_use" and not ANTHROPIC_ID.match(str(b.get("id", ""))):
                errors.append(f"tool-use-id: messages[{i}].content[{j}] has id {b.get('id')!r}, not ^[a-zA-Z0-9_-]+$")
        calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"] if m.get("role") == "assistant" else []
        if len(set(calls)) != len(calls):
            errors.append(f"tool-use-ids-unique: messages[{i}] repeats a tool_use id")
        following = messages[i + 1] if i + 1 < len(messages) else None
        if calls:
            answers = [b.get("tool_use_id") for b in _blocks(following)] if following and following.get("role") == "user" else []
            for cid in calls:
                if cid not in answers:
                    errors.append(f"tool-result-next: tool_use {cid!r} of messages[{i}] has no tool_result in the next user message")
        if m.get("role") == "user":
            before = messages[i - 1] if i > 0 else {}
            made = {b.get("id") for b in _blocks(before) if b.get("type") == "tool_use"} if before.get("role") == "assistant" else set()
            seen_other = False
            answered = set()
            for j, b in enumerate(blocks):
                if b.get("type") != "tool_result":
                    seen_other = True
                    continue
                tid = b.get("tool_use_id")
                if seen_other:
                    errors.append(f"tool-results-first: messages[{i}].content[{j}] is a tool_result after another block")
                if tid not in made:
                    errors.append(f"orphan-tool-result: messages[{i}].content[{j}] answers {tid!r}, which the message before it did not use")
                elif tid in answered:
                    errors.append(f"tool-result-once: messages[{i}].content[{j}] answers {tid!r} a second time")
                answered.add(tid)
    return errors


def gemini_rules(body):
    """Gemini: contents start with a user turn; a model turn with functionCall parts is followed
    by a user turn with as many functionResponse parts, matched by id when the calls have ids,
    else by name in order; no functionResponse without its call."""
    errors = []
    contents = _dicts(body.get("contents"))
    if not contents or contents[0].get("role") != "user":
        errors.append("starts-with-user: contents do not start with a user turn")
    for i, c in enumerate(contents):
        if c.get("role") not in ("user", "model"):
            errors.append(f"roles: contents[{i}] has role {c.get('role')!r}, not user or model")
        parts = _dicts(c.get("parts"))
        if c.get("role") == "model":
            calls = [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]
            if not calls:
                continue
            following = contents[i + 1] if i + 1 < len(contents) else {}
            answers = []
            if following.get("role") == "user":
                answers = [p["functionResponse"] for p in _dicts(following.get("parts")) if isinstance(p.get("functionResponse"), dict)]
            if len(answers) != len(calls):
                errors.append(f"responses-follow-calls: contents[{i}] makes {len(calls)} function calls; the user turn after it has {len(answers)} functionResponse parts")
                continue
            for n, (call, answer) in enumerate(zip(calls, answers)):
                if call.get("id"):
                    if call["id"] not in [a.get("id") for a in answers]:
                        errors.append(f"response-matches-call: call {call['id']!r} of contents[{i}] has no functionResponse with its id")
                elif answer.get("name") != call.get("name"):
                    errors.append(f"response-matches-call: functionResponse {n} after contents[{i}] is {answer.get('name')!r}, its call is {call.get('name')!r}")
        elif any("functionResponse" in p for p in parts):
            before = contents[i - 1] if i > 0 else {}
            made = any("functionCall" in p for p in _dicts(before.get("parts"))) and before.get("role") == "model"
            if not made:
                errors.append(f"orphan-response: contents[{i}] has functionResponse parts and the turn before it made no call")
    return errors


def ollama_rules(body):
    """Ollama: an assistant message's calls are answered by `tool` messages right after it, one
    per call (by tool_call_id when the call has an id, else by tool_name in order); no tool
    message without its call."""
    errors = []
    messages = _dicts(body.get("messages"))
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.get("role") == "tool":
            errors.append(f"orphan-tool-message: messages[{i}] follows no assistant message with calls")
            i += 1
            continue
        calls = _dicts(m.get("tool_calls")) if m.get("role") == "assistant" else []
        j = i + 1
        results = []
        while j < len(messages) and messages[j].get("role") == "tool":
            results.append((j, messages[j]))
            j += 1
        if calls and len(results) != len(calls):
            errors.append(f"results-follow-calls: messages[{i}] makes {len(calls)} calls; {len(results)} tool messages follow it")
        elif not calls and results:
            errors.append(f"orphan-tool-message: messages[{results[0][0]}] follows no assistant message with calls")
        else:
            for call, (k, result) in zip(calls, results):
                if call.get("id"):
                    if call["id"] not in [r.get("tool_call_id") for _, r in results]:
                        errors.append(f"result-matches-call: call {call['id']!r} of messages[{i}] has no tool message with its tool_call_id")
                else:
                    name = (call.get("function") or {}).get("name")
                    if result.get("tool_name") != name:
                        errors.append(f"result-matches-call: messages[{k}] is for {result.get('tool_name')!r}, its call is {name!r}")
        i = j
    return errors


RULES = {
    "openai-chat": openai_chat_rules,
    "openai-responses": openai_responses_rules,
    "anthropic": anthropic_rules,
    "gemini": gemini_rules,
    "ollama": ollama_rules,
}


def check_body(provider, body):
    """Every failure of one body, each "<rule>: <detail>" ("type <SDK type>: ..." for (a))."""
    if provider not in PROVIDERS:
        return [f"provider: unknown provider {provider!r}"]
    errors = [f"type {TYPE_NAMES[provider]}: {e}" for e in TYPES[provider](body)]
    if isinstance(body, dict):
        errors += RULES[provider](body)
    return errors


def main(argv):
    source = open(argv[1], encoding="utf-8") if len(argv) > 1 else sys.stdin
    checked, failures = 0, []
    refused = 0
    with source:
        for line_no, line in enumerate(source, 1):
            if not line.strip():
                continue
            checked += 1
            try:
                case = json.loads(line)
                provider, body = case["provider"], case["body"]
            except (ValueError, KeyError, TypeError) as e:
                failures.append(f"{line_no}: ?: input: not a {{provider, body}} line: {e}")
                refused += 1
                continue
            errors = check_body(provider, body)
            refused += bool(errors)
            failures += [f"{line_no}: {provider}: {e}" for e in errors]
    for f in failures:
        print(f)
    if failures:
        print(f"checked {checked} bodies, {refused} refused")
        return 1
    print(f"checked {checked} bodies")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
