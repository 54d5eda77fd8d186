"""Checks encoded provider items with each provider SDK's own request types.

Reads a JSON array of {"provider", "kind", "item"} ("kind": "call", "result" or
"assistant", an OpenAI assistant message carrying calls) from the file named on the
command line; validates each with the SDK type for it, and refuses members the type does
not name. Prints "checked N items" and exits 0, or prints each failure and exits 1.
"""
import json
import sys
import typing

import pydantic
from anthropic.types import ToolResultBlockParam, ToolUseBlockParam
from google.genai import types as genai
import ollama
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionToolMessageParam,
)
from openai.types.responses import ResponseFunctionToolCallParam
from openai.types.responses.response_input_param import FunctionCallOutput


def typed_dict(kind):
    adapter = pydantic.TypeAdapter(kind)
    names = set(typing.get_type_hints(kind))

    def check(item):
        adapter.validate_python(item, strict=False)
        extra = set(item) - names
        if extra:
            raise ValueError(f"members the type does not name: {sorted(extra)}")

    return check


def model(cls):
    def check(item):
        cls.model_validate(item)

    return check


CHECKS = {
    ("openai-chat", "call"): typed_dict(ChatCompletionMessageFunctionToolCallParam),
    ("openai-chat", "result"): typed_dict(ChatCompletionToolMessageParam),
    ("openai-chat", "assistant"): typed_dict(ChatCompletionAssistantMessageParam),
    ("openai-responses", "call"): typed_dict(ResponseFunctionToolCallParam),
    ("openai-responses", "result"): typed_dict(FunctionCallOutput),
    ("anthropic", "call"): typed_dict(ToolUseBlockParam),
    ("anthropic", "result"): typed_dict(ToolResultBlockParam),
    ("gemini", "call"): model(genai.Part),
    ("gemini", "result"): model(genai.Part),
    ("ollama", "call"): model(ollama.Message.ToolCall),
    ("ollama", "result"): model(ollama.Message),
}


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)
    failures = []
    for n, case in enumerate(cases):
        try:
            CHECKS[(case["provider"], case["kind"])](case["item"])
        except Exception as e:  # every refusal is reported, whatever the SDK raises
            failures.append(f"{n}: {case['provider']} {case['kind']}: {e}\n  {json.dumps(case['item'])}")
    for line in failures:
        print(line)
    print(f"checked {len(cases)} items, {len(failures)} refused")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
