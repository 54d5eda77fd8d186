"""Tests of check_request.py and next_turn.py. Plain asserts: runs under pytest, or as

    target/sdk-venv/bin/python tests/sdk/test_check_request.py

(the SDK venv has no pytest), which runs every test_* function and prints "N tests passed".
"""
import copy
import json
import base64
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check_request  # noqa: E402
import next_turn  # noqa: E402

TOOL_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

# One two-turn conversation per provider: a question, the model's call (with the provider's
# state for it), the call's result, and the user's next text.
VALID = {
    "openai-chat": {
        "model": "gpt-5",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "{\"temp_c\":21}"},
            {"role": "user", "content": "Thanks."},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": TOOL_SCHEMA}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_completion_tokens": 1024,
        "temperature": 0.2,
    },
    "openai-responses": {
        "model": "gpt-5",
        "instructions": "You are terse.",
        "input": [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Look it up."}], "encrypted_content": "gAAAAABp"},
            {"role": "assistant", "content": "Checking."},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "{\"temp_c\":21}"},
            {"role": "user", "content": "Thanks."},
        ],
        "tools": [{"type": "function", "name": "get_weather", "description": "Weather now", "parameters": TOOL_SCHEMA, "strict": False}],
        "tool_choice": "required",
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "max_output_tokens": 1024,
    },
    "anthropic": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Look it up.", "signature": "EqQBCkYIBxgCKkD"},
                    {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p"},
                    {"type": "text", "text": "Checking."},
                    {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01", "content": "{\"temp_c\":21}"},
                    {"type": "text", "text": "Thanks."},
                ],
            },
        ],
        "tools": [{"name": "get_weather", "description": "Weather now", "input_schema": TOOL_SCHEMA}],
        "tool_choice": {"type": "auto"},
        "stream": True,
    },
    "gemini": {
        "systemInstruction": {"parts": [{"text": "You are terse."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Checking.", "thoughtSignature": "c2lnbmF0dXJlLTE="},
                    {"functionCall": {"id": "c1", "name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnbmF0dXJlLTI="},
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "get_weather", "response": {"output": {"temp_c": 21}}}}]},
            {"role": "user", "parts": [{"text": "Thanks."}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "get_weather", "description": "Weather now", "parametersJsonSchema": TOOL_SCHEMA}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
        "generationConfig": {"maxOutputTokens": 1024},
    },
    "ollama": {
        "model": "qwen3",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
            {"role": "tool", "tool_name": "get_weather", "content": "{\"temp_c\":21}"},
            {"role": "user", "content": "Thanks."},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather now", "parameters": TOOL_SCHEMA}}],
        "stream": True,
        "options": {"num_predict": 1024},
    },
}

# Gemini calls without ids are matched by name and order.
GEMINI_NO_IDS = {
    "contents": [
        {"role": "user", "parts": [{"text": "Weather and time in Paris?"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                {"functionCall": {"name": "get_time", "args": {"city": "Paris"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"output": 21}}},
                {"functionResponse": {"name": "get_time", "response": {"error": "no clock"}}},
            ],
        },
    ],
}


def body(provider, edit=None):
    b = copy.deepcopy(VALID[provider] if isinstance(provider, str) else provider)
    if edit:
        edit(b)
    return b


def errors_of(provider, b):
    return check_request.check_body(provider, b)


def test_valid_bodies_pass():
    for provider in check_request.PROVIDERS:
        assert errors_of(provider, body(provider)) == [], (provider, errors_of(provider, body(provider)))
    assert errors_of("gemini", copy.deepcopy(GEMINI_NO_IDS)) == []


def _insert(key, index, item):
    return lambda b: b[key].insert(index, item)


def _set(path, value):
    def edit(b):
        *head, last = path
        target = b
        for step in head:
            target = target[step]
        target[last] = value

    return edit


def _delete(path):
    def edit(b):
        *head, last = path
        target = b
        for step in head:
            target = target[step]
        del target[last]

    return edit


def _two_calls_one_id(b):
    calls = b["messages"][2]["tool_calls"]
    calls.append(copy.deepcopy(calls[0]))


def _duplicate(key, index):
    return lambda b: b[key].insert(index, copy.deepcopy(b[key][index]))


def _anthropic_dup_tool_use(b):
    content = b["messages"][1]["content"]
    content.append(copy.deepcopy(content[-1]))


def _anthropic_text_first(b):
    content = b["messages"][2]["content"]
    content.reverse()


def _anthropic_bad_id(b):
    b["messages"][1]["content"][3]["id"] = "functions.get_weather:0"
    b["messages"][2]["content"][0]["tool_use_id"] = "functions.get_weather:0"


def _swap_responses(b):
    b["contents"][2]["parts"].reverse()


# (provider, the rule the edit breaks, the edit): the body is refused by that rule and no other.
BROKEN = [
    ("openai-chat", "no-empty-tool-calls", _insert("messages", 5, {"role": "assistant", "content": "Sure.", "tool_calls": []})),
    ("openai-chat", "call-answered", _delete(["messages", 3])),
    ("openai-chat", "call-answered-once", _duplicate("messages", 3)),
    ("openai-chat", "orphan-tool-message", _insert("messages", 5, {"role": "tool", "tool_call_id": "call_9", "content": "x"})),
    ("openai-chat", "call-ids-unique", _two_calls_one_id),
    ("openai-responses", "call-answered", _delete(["input", 4])),
    ("openai-responses", "call-answered-once", _duplicate("input", 4)),
    ("openai-responses", "orphan-output", _insert("input", 5, {"type": "function_call_output", "call_id": "call_9", "output": "x"})),
    ("openai-responses", "call-ids-unique", _duplicate("input", 3)),
    ("openai-responses", "reasoning-encrypted-content", _delete(["input", 1, "encrypted_content"])),
    ("anthropic", "alternate-roles", _insert("messages", 0, {"role": "user", "content": "Hello."})),
    ("anthropic", "alternate-roles", _delete(["messages", 0])),
    ("anthropic", "starts-with-user", _set(["messages"], [])),
    ("anthropic", "tool-result-next", _delete(["messages", 2, "content", 0])),
    ("anthropic", "tool-results-first", _anthropic_text_first),
    ("anthropic", "orphan-tool-result", lambda b: b["messages"][2]["content"].insert(1, {"type": "tool_result", "tool_use_id": "toolu_99", "content": "x"})),
    ("anthropic", "tool-result-once", lambda b: b["messages"][2]["content"].insert(1, copy.deepcopy(b["messages"][2]["content"][0]))),
    ("anthropic", "no-blank-text", _set(["messages", 1, "content", 2, "text"], " \n")),
    ("anthropic", "no-blank-text", _set(["messages", 1, "content", 2, "text"], "")),
    ("anthropic", "tool-use-id", _anthropic_bad_id),
    ("anthropic", "thinking-signature", _set(["messages", 1, "content", 0, "signature"], "")),
    ("anthropic", "tool-use-ids-unique", _anthropic_dup_tool_use),
    ("gemini", "starts-with-user", _delete(["contents", 0])),
    ("gemini", "roles", _set(["contents", 3, "role"], "system")),
    ("gemini", "responses-follow-calls", _delete(["contents", 2])),
    ("gemini", "response-matches-call", _set(["contents", 2, "parts", 0, "functionResponse", "id"], "c9")),
    ("gemini", "orphan-response", _insert("contents", 4, {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"output": 1}}}]})),
    (GEMINI_NO_IDS, "response-matches-call", _swap_responses),
    (GEMINI_NO_IDS, "responses-follow-calls", _delete(["contents", 2, "parts", 1])),
    ("ollama", "results-follow-calls", _delete(["messages", 3])),
    ("ollama", "orphan-tool-message", _insert("messages", 5, {"role": "tool", "tool_name": "get_weather", "content": "x"})),
    ("ollama", "result-matches-call", _set(["messages", 3, "tool_name"], "get_time")),
]


def test_each_rule_refuses_the_body_that_breaks_it_and_only_that_rule():
    for source, rule, edit in BROKEN:
        provider = "gemini" if source is GEMINI_NO_IDS else source
        errors = errors_of(provider, body(source, edit))
        assert errors, (provider, rule, "not refused")
        assert all(e.startswith(rule + ": ") for e in errors), (provider, rule, errors)


# Members the SDK types do not name, at several depths, and values of the wrong type.
TYPE_REFUSALS = [
    ("openai-chat", _set(["reasoning"], "high"), "body: members CompletionCreateParamsStreaming does not name: ['reasoning']"),
    ("openai-chat", _set(["messages", 2, "tool_calls", 0, "index"], 0), "body.messages[2].tool_calls[0]: members ChatCompletionMessageFunctionToolCallParam does not name: ['index']"),
    ("openai-chat", _set(["messages", 2, "tool_calls", 0, "function", "parsed_arguments"], {}), "body.messages[2].tool_calls[0].function: members Function does not name: ['parsed_arguments']"),
    ("openai-chat", _set(["stream"], False), "body.stream: false is not one of [True]"),
    ("openai-responses", _set(["input", 3, "id"], 7), "body.input[3].id: expected a string"),
    ("openai-responses", _set(["input", 1, "summary", 0, "index"], 0), "body.input[1].summary[0]: members Summary does not name: ['index']"),
    ("anthropic", _set(["messages", 1, "content", 3, "index"], 3), "body.messages[1].content[3]: members ToolUseBlockParam does not name: ['index']"),
    ("anthropic", _delete(["max_tokens"]), "body: MessageCreateParamsStreaming requires `max_tokens`"),
    ("anthropic", _set(["tools", 0, "input_schema"], "object"), "body.tools[0]: matches none of 21 types (closest ToolParam: body.tools[0].input_schema: matches none of 2 types (closest InputSchemaTyped: body.tools[0].input_schema: expected an object (InputSchemaTyped)))"),
    # The server reads string call ids the SDK's models do not name (SPEC §8); anything else is refused.
    ("ollama", _set(["messages", 2, "tool_calls", 0, "id"], 7), "body.messages[2].tool_calls[0]: members ToolCall does not name: ['id']"),
    ("ollama", _set(["messages", 3, "tool_call_id"], None), "body.messages[3]: members Message does not name: ['tool_call_id']"),
    ("ollama", _set(["messages", 2, "tool_calls", 0, "index"], 0), "body.messages[2].tool_calls[0]: members ToolCall does not name: ['index']"),
    ("ollama", _set(["tools", 0, "function", "strict"], True), "body.tools[0].function: members Function does not name: ['strict']"),
    ("ollama", _set(["temperature"], 0.2), "body: members ChatRequest does not name: ['temperature']"),
    ("gemini", _set(["temperature"], 0.2), "body: members GenerateContentRequest does not name: ['temperature']"),
    ("gemini", _set(["generationConfig", "max_tokens"], 5), "body.generationConfig: GenerationConfig: ('max_tokens',): Extra inputs are not permitted"),
    ("gemini", _set(["contents", 1, "parts", 1, "thoughtSignature"], "not base64!"), "body.contents[1]: Content: ('parts', 1, 'thoughtSignature'): Data should be valid base64: Invalid symbol 32, offset 3."),
    ("gemini", _set(["contents", 1, "parts", 1, "functionCall", "willContinue"], True), "body.contents[1]: Content (Gemini API): will_continue parameter is only supported in Gemini Enterprise Agent Platform mode, not in Gemini Developer API mode."),
]


def test_the_sdk_types_refuse_unnamed_members_and_wrong_types():
    for provider, edit, want in TYPE_REFUSALS:
        errors = [e for e in errors_of(provider, body(provider, edit)) if e.startswith("type ")]
        assert errors == [f"type {check_request.TYPE_NAMES[provider]}: {want}"], (provider, want, errors)


def test_ollama_schema_keywords_the_sdk_does_not_name_pass():
    # The tool's JSON Schema is sent as given (SPEC §10.1); only Tool and Function refuse members.
    b = body("ollama", _set(["tools", 0, "function", "parameters", "properties", "city", "minLength"], 1))
    assert errors_of("ollama", b) == []


def _run(args, stdin=None):
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, cwd=HERE.parents[1])


def test_the_command_line():
    lines = [json.dumps({"provider": p, "body": body(p)}) for p in check_request.PROVIDERS]
    good = "\n".join(lines) + "\n\n"
    out = _run([str(HERE / "check_request.py")], stdin=good)
    assert (out.returncode, out.stdout) == (0, "checked 5 bodies\n"), out
    bad = good + json.dumps({"provider": "anthropic", "body": body("anthropic", _delete(["messages", 2, "content", 0]))}) + "\n"
    with tempfile.NamedTemporaryFile("w", suffix=".ndjson", delete=False) as f:
        f.write(bad)
    try:
        out = _run([str(HERE / "check_request.py"), f.name])
    finally:
        Path(f.name).unlink()
    assert out.returncode == 1, out
    assert out.stdout == (
        "7: anthropic: tool-result-next: tool_use 'toolu_01' of messages[1] has no tool_result in the next user message\n"
        "checked 6 bodies, 1 refused\n"
    ), out.stdout


STREAMS = HERE.parents[1] / "tests" / "data" / "provider-streams"


def test_next_turn_agrees_with_the_expected_files_and_skips_what_the_sdk_refuses():
    out = _run([str(HERE / "next_turn.py"), "--all"])
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    bodies = sorted(STREAMS.glob("*/*.body"))
    assert len(rows) == len(bodies) == 71
    skipped = []
    for row in rows:
        expected = json.loads((STREAMS / row["provider"] / f"{row['name']}.expected.json").read_text())
        if "skipped" in row:
            skipped.append(row["name"])
            assert expected.get("sdk_refused") or expected.get("error"), row
            continue
        assert row["text"] == expected["text"], row["name"]
        assert row["calls"] == expected["tool_calls"], row["name"]
    assert skipped == [
        "variant-blocks-without-data",
        "vercel-ai-mistral-tool-call",
        "vercel-ai-openai-error",
        "variant-comments-id-retry",
        "variant-blank-lines-no-final-newline",
        "variant-error-line",
    ]


def _raw_signatures(path):
    sigs = []
    for line in path.read_text().splitlines():
        if line.startswith("data:"):
            chunk = json.loads(line[5:])
            for cand in chunk.get("candidates", []):
                for part in cand.get("content", {}).get("parts", []):
                    if "thoughtSignature" in part:
                        sigs.append(part["thoughtSignature"])
    return sigs


def test_next_turn_keeps_state_the_provider_needs_back():
    path = STREAMS / "gemini" / "vercel-ai-google-tool-call-gemini3.body"
    turn = next_turn.next_turn("gemini", path)
    (sig,) = turn["signatures"]
    assert sig["part"] == {"functionCall": {"name": "weather", "args": {"location": "San Francisco"}}}
    # google-genai holds the signature as bytes and sends it back in base64's URL-safe alphabet;
    # the bytes are the ones that came.
    (raw,) = _raw_signatures(path)
    assert "+" in raw and "+" not in sig["thoughtSignature"]
    assert base64.urlsafe_b64decode(sig["thoughtSignature"]) == base64.b64decode(raw)

    path = STREAMS / "openai-responses" / "vercel-ai-openai-reasoning-encrypted-content-step1.body"
    turn = next_turn.next_turn("openai-responses", path)
    (item,) = turn["reasoning"]
    assert sorted(item) == ["encrypted_content", "id", "summary", "type"]
    assert item["id"] == "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9"
    assert item["encrypted_content"].startswith("gAAAAABpPDIVYBwu") and item["encrypted_content"] in path.read_text()
    assert turn["function_calls"] == [{"call_id": "call_AB6AaRZ1FYZB2RwS6A5vbdqn", "name": "calculator", "arguments": "{\"a\":12,\"b\":7,\"op\":\"add\"}"}]

    turn = next_turn.next_turn("anthropic", STREAMS / "anthropic" / "anthropic-sdk-incomplete-partial-json-response.body")
    # The SDK sends back what it parsed of a cut input; the call itself is judged on the raw text.
    assert turn["content"][1]["input"] == {"filename": "taxes.txt", "lines_of_text": ["# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s", "", "## INTRODUCTION", ""]}
    assert turn["calls"][0]["invalid"] is True

    turn = next_turn.next_turn("openai-chat", STREAMS / "openai-chat" / "vercel-ai-deepseek-tool-call.body")
    assert turn["message"]["reasoning_content"].startswith("The user is asking for the weather in San Francisco.")
    assert turn["message"]["tool_calls"] == [
        {"id": "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "type": "function", "index": 0, "function": {"name": "weather", "arguments": "{\"location\": \"San Francisco\"}"}}
    ]

    turn = next_turn.next_turn("ollama", STREAMS / "ollama" / "variant-text-and-parallel-calls.body")
    assert turn["message"]["content"] == "Checking both cities."
    assert [c["function"]["name"] for c in turn["message"]["tool_calls"]] == ["get_temperature", "get_conditions"] * 2


def test_next_turn_assembles_streamed_gemini_arguments_by_path():
    assert next_turn.path_steps("$.recipe.ingredients[10].name") == ["recipe", "ingredients", 10, "name"]
    args = next_turn.put({}, ["a", 1, "b"], "x", {})
    assert args == {"a": [None, {"b": "x"}]}
    assert next_turn.put({"s": "ab"}, ["s"], "cd", {"$.s": True}) == {"s": "abcd"}
    assert next_turn.put({"s": "ab"}, ["s"], "cd", {"$.s": False}) == {"s": "cd"}


if __name__ == "__main__":
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    for name, fn in tests:
        fn()
        print(f"ok {name}")
    print(f"{len(tests)} tests passed")
