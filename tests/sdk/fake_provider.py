#!/usr/bin/env python3
"""A fake model provider for the agent's test: an HTTP server on 127.0.0.1 that serves
recorded response bodies turn by turn, and refuses any request the provider's SDK request
types or ordering rules refuse (check_request.py's checks).

    fake_provider.py CONFIG.json

CONFIG: {"provider": P, "model": M, "path": "/v1/chat/completions", "key": K or null,
         "log": LOG, "turns": [TURN, ...]}, a TURN being {"body": FILE, "rename": {OLD: NEW}}
(a recorded body, each `"name":"OLD"` in it written `"name":"NEW"`, so that its calls name
the test's tools) or {"text": [DELTA, ...]} (a final text response, written here in P's
format). For gemini `path` is left out: the request must come to
`/v1beta/models/M:streamGenerateContent?alt=sse`.

It prints `listening PORT` on stdout once it listens (on a free port), then answers each
POST: a request is refused with HTTP 400 and the reasons as text when its path, its headers
(Content-Length required; the provider's key header when K is set), its JSON or its body
(check_request.check_body) is wrong, or when no turn is left; otherwise the next turn's body
goes out with Transfer-Encoding: chunked in small pieces, as a provider streams. Every
request is appended to LOG as one JSON line {"path", "headers", "body", "status",
"errors"}. It runs until it is killed.
"""

import http.server
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_request  # noqa: E402

PIECE = 61


def text_body(provider, model, deltas):
    """A streamed response of `deltas` as text, in the provider's own format."""
    def sse(data, event=None):
        head = f"event: {event}\n" if event else ""
        return f"{head}data: {json.dumps(data)}\n\n"

    if provider == "openai-chat":
        chunk = {"id": "chatcmpl-final", "object": "chat.completion.chunk", "created": 1,
                 "model": model}
        out = [sse({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                          "finish_reason": None}]})]
        out += [sse({**chunk, "choices": [{"index": 0, "delta": {"content": d},
                                           "finish_reason": None}]}) for d in deltas]
        out.append(sse({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
        return "".join(out) + "data: [DONE]\n\n"
    if provider == "anthropic":
        out = [sse({"type": "message_start", "message": {
            "id": "msg_final", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}}, "message_start"),
            sse({"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}}, "content_block_start")]
        out += [sse({"type": "content_block_delta", "index": 0,
                     "delta": {"type": "text_delta", "text": d}}, "content_block_delta")
                for d in deltas]
        out += [sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
                sse({"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                        "stop_sequence": None},
                     "usage": {"output_tokens": 5}}, "message_delta"),
                sse({"type": "message_stop"}, "message_stop")]
        return "".join(out)
    if provider == "gemini":
        out = [sse({"candidates": [{"content": {"role": "model", "parts": [{"text": d}]},
                                    "index": 0}], "modelVersion": model}) for d in deltas]
        out.append(sse({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                        "finishReason": "STOP", "index": 0}],
                        "modelVersion": model}))
        return "".join(out)
    if provider == "openai-responses":
        text = "".join(deltas)
        item = {"id": "msg_final", "type": "message", "status": "in_progress", "role": "assistant",
                "content": []}
        part = {"type": "output_text", "text": "", "annotations": []}
        response = {"id": "resp_final", "object": "response", "created_at": 1, "model": model,
                    "status": "in_progress", "output": []}
        done_item = {**item, "status": "completed", "content": [{**part, "text": text}]}
        out = [sse({"type": "response.created", "sequence_number": 0, "response": response},
                   "response.created"),
               sse({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
                    "item": item}, "response.output_item.added"),
               sse({"type": "response.content_part.added", "sequence_number": 2,
                    "item_id": "msg_final", "output_index": 0, "content_index": 0, "part": part},
                   "response.content_part.added")]
        out += [sse({"type": "response.output_text.delta", "sequence_number": 3 + i,
                     "item_id": "msg_final", "output_index": 0, "content_index": 0, "delta": d},
                    "response.output_text.delta") for i, d in enumerate(deltas)]
        n = 3 + len(deltas)
        out += [sse({"type": "response.output_text.done", "sequence_number": n,
                     "item_id": "msg_final", "output_index": 0, "content_index": 0, "text": text},
                    "response.output_text.done"),
                sse({"type": "response.output_item.done", "sequence_number": n + 1,
                     "output_index": 0, "item": done_item}, "response.output_item.done"),
                sse({"type": "response.completed", "sequence_number": n + 2,
                     "response": {**response, "status": "completed", "output": [done_item]}},
                    "response.completed")]
        return "".join(out)
    if provider == "ollama":
        lines = [{"model": model, "created_at": "2026-01-01T00:00:00Z",
                  "message": {"role": "assistant", "content": d}, "done": False} for d in deltas]
        lines.append({"model": model, "created_at": "2026-01-01T00:00:00Z",
                      "message": {"role": "assistant", "content": ""}, "done": True,
                      "done_reason": "stop"})
        return "".join(json.dumps(x) + "\n" for x in lines)
    raise ValueError(f"unknown provider {provider}")


def turn_body(config, turn):
    if "text" in turn:
        return text_body(config["provider"], config["model"], turn["text"]).encode()
    with open(turn["body"], "rb") as f:
        body = f.read()
    for old, new in turn.get("rename", {}).items():
        body = body.replace(f'"name":"{old}"'.encode(), f'"name":"{new}"'.encode())
    return body


def key_errors(provider, key, headers):
    """The reasons the request's key header is wrong ([] when it is right)."""
    if provider == "ollama" or key is None:
        return []
    expected = {
        "openai-chat": ("authorization", f"Bearer {key}"),
        "openai-responses": ("authorization", f"Bearer {key}"),
        "anthropic": ("x-api-key", key),
        "gemini": ("x-goog-api-key", key),
    }[provider]
    errors = []
    if headers.get(expected[0]) != expected[1]:
        errors.append(f"header {expected[0]}: {headers.get(expected[0])!r}")
    if provider == "anthropic" and headers.get("anthropic-version") != "2023-06-01":
        errors.append(f"header anthropic-version: {headers.get('anthropic-version')!r}")
    return errors


def serve(config):
    provider = config["provider"]
    path = config.get("path")
    if provider == "gemini":
        path = f"/v1beta/models/{config['model']}:streamGenerateContent?alt=sse"
    turns = list(config["turns"])
    log = config["log"]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            headers = {k.lower(): v for k, v in self.headers.items()}
            errors, body = [], None
            if "content-length" not in headers or "transfer-encoding" in headers:
                errors.append("no Content-Length (or a Transfer-Encoding)")
                raw = b""
                self.close_connection = True
            else:
                raw = self.rfile.read(int(headers["content-length"]))
            if self.path != path:
                errors.append(f"path {self.path!r}, expected {path!r}")
            errors += key_errors(provider, config.get("key"), headers)
            if headers.get("content-type") != "application/json":
                errors.append(f"header content-type: {headers.get('content-type')!r}")
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError as e:
                    errors.append(f"body: not JSON: {e}")
                else:
                    errors += check_request.check_body(provider, body)
            if not errors and not turns:
                errors.append("no turn left")
            status = 400 if errors else 200
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"path": self.path, "headers": headers, "body": body,
                                    "status": status, "errors": errors}) + "\n")
            if errors:
                text = ("\n".join(errors) + "\n").encode()
                self.send_response(400)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)
                return
            out = turn_body(config, turns.pop(0))
            kind = "application/x-ndjson" if provider == "ollama" else "text/event-stream"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for at in range(0, len(out), PIECE):
                piece = out[at:at + PIECE]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
                time.sleep(0.001)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        serve(json.load(f))
