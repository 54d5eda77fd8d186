#!/usr/bin/env python3
"""Runs one replay scenario (SPEC §6) through the Python binding (and so the C API) on a
simulated clock, and prints what happened, one JSON value per line: the same events, in the
same order, as the Rust replay program (examples/replay/src/main.rs).

    python3 examples/python/replay.py SCENARIO.json

Exit codes: 0 when the scenario ran (whatever it printed); 2 for bad arguments or a scenario
it cannot run, with one line on stderr naming the file (and the step).
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import polyweave_tool_adapter as pw  # noqa: E402

PROG = "replay.py"

# The replay's capacities (SPEC §6 minimums met or exceeded; args, results and depth exact).
NAME_CAP = 1024
ARGS_CAP = 4096
RESULT_CAP = 4096
MESSAGE_CAP = 64 * 1024
MAX_DEPTH = 32
TRACE_ENTRIES = 32
TRACE_ENTRY_HEADER = 12
HELD_ENDS = 8
END_CAP = 8 * 1024
MAX_PENDING = 1024
# The hook log: hook events between two drains, each 28 bytes plus its texts.
HOOK_LOG_BYTES = 16 << 20
CALL_RESULT_CAP = RESULT_CAP  # SPEC §6: a call's result capacity is the replay's 4096


class Bad(Exception):
    """The scenario cannot run: the message goes to stderr."""


# ------------------------------------------------------------ raw spans of the file

_WS = " \t\r\n"


def _ws(t, i):
    while i < len(t) and t[i] in _WS:
        i += 1
    return i


def _string_end(t, i):
    """`t[i]` is `"`: the index after the closing quote."""
    i += 1
    while True:
        c = t[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        else:
            i += 1


def _value_end(t, i):
    """The index after the JSON value at `i` (the file is known to be valid JSON)."""
    c = t[i]
    if c == '"':
        return _string_end(t, i)
    if c in "{[":
        depth = 0
        while True:
            c = t[i]
            if c == '"':
                i = _string_end(t, i)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
    while i < len(t) and t[i] not in _WS and t[i] not in ",]}":
        i += 1
    return i


class Raw:
    """A value of the file: its text as written (`text`), decoded only on demand."""

    __slots__ = ("src", "start", "end")

    def __init__(self, src, start, end):
        self.src, self.start, self.end = src, start, end

    @property
    def text(self):
        return self.src[self.start : self.end]

    def raw(self):
        return self.text.encode("utf-8")

    def value(self):
        return fffd(json.loads(self.text))

    def is_string(self):
        return self.src[self.start] == '"'

    def obj(self):
        """An object's members (a repeated name keeps its first place and its last value),
        or None when the value is not an object."""
        t, i = self.src, self.start
        if t[i] != "{":
            return None
        members = {}
        i = _ws(t, i + 1)
        if t[i] == "}":
            return members
        while True:
            k_end = _string_end(t, i)
            key = fffd(json.loads(t[i:k_end]))
            i = _ws(t, _ws(t, k_end) + 1)  # past ':'
            end = _value_end(t, i)
            members[key] = Raw(t, i, end)
            i = _ws(t, end)
            if t[i] == "}":
                return members
            i = _ws(t, i + 1)

    def elements(self):
        t, i = self.src, self.start
        if t[i] != "[":
            return None
        out = []
        i = _ws(t, i + 1)
        if t[i] == "]":
            return out
        while True:
            end = _value_end(t, i)
            out.append(Raw(t, i, end))
            i = _ws(t, end)
            if t[i] == "]":
                return out
            i = _ws(t, i + 1)


def fffd(v):
    """Lone surrogates (`\\ud800` escapes Python's json keeps) read as U+FFFD, as in the core."""
    if isinstance(v, str):
        return re.sub("[\ud800-\udfff]", "\ufffd", v)
    return v


def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


# ------------------------------------------------------------ the scenario


def is_true(obj, key):
    return key in obj and obj[key].text == "true"


def whole(obj, key, default, limit, what):
    if key not in obj:
        return default
    v = obj[key].value()
    if type(v) is not int or v < 0 or v > limit:
        raise Bad(what)
    return v


def u32(obj, key, default):
    return whole(obj, key, default, 0xFFFFFFFF, "%s must be a whole number of at most 4294967295" % key)


def flag(obj, key, default):
    if key not in obj:
        return default
    v = obj[key].value()
    if type(v) is not bool:
        raise Bad("%s must be true or false" % key)
    return v


def frame_of(v):
    """A frame as an object (its text as written) or as a string (its decoded text)."""
    return v.value().encode("utf-8") if v.is_string() else v.raw()


def message_of(v):
    return v.value() if v.is_string() else v.text


def call_index(step, key):
    return whole(step, key, None, 2**64 - 1, "%s must be a call number (0 or more)" % key)


def parse_step(raw, call_mode):
    step = raw.obj()
    if step is None:
        raise Bad("a step must be an object")
    at = None
    if "at" in step:
        at = step["at"].value()
        if type(at) is not int or at < 0 or at >= 2**64:
            raise Bad("at must be a whole number of milliseconds")
    if call_mode:
        if "frame" in step:
            return at, ("frame", frame_of(step["frame"]))
        if is_true(step, "close"):
            return at, ("close",)
        if is_true(step, "tick"):
            return at, ("tick",)
        raise Bad("a call step needs frame, close: true or tick: true")
    if "response" in step:
        return at, ("response", frame_of(step["response"]))
    if "request" in step:
        return at, ("request", frame_of(step["request"]))
    if "complete" in step:
        error = None
        if "error" in step and step["error"].text != "null":
            error = message_of(step["error"])
        result = step["result"].raw() if "result" in step else b"null"
        return at, ("complete", call_index(step, "complete"), result, error)
    if "adapter" in step:
        call = call_index(step, "adapter")
        frame = frame_of(step["frame"]) if "frame" in step else None
        close = is_true(step, "close")
        if frame is None and not close:
            raise Bad("an adapter step needs frame or close: true")
        return at, ("adapter", call, frame, close)
    if is_true(step, "abort"):
        return at, ("abort",)
    if "cancel" in step:
        if not step["cancel"].is_string():
            raise Bad("cancel must be a string (the reason)")
        return at, ("cancel", step["cancel"].value())
    if is_true(step, "clearTrace"):
        return at, ("clearTrace",)
    if is_true(step, "tick"):
        return at, ("tick",)
    raise Bad("unknown step: expected response, request, complete, adapter, abort, cancel, clearTrace or tick")


def parse_steps(doc, call_mode):
    steps = doc["steps"].elements() if "steps" in doc else None
    if steps is None:
        raise Bad("steps must be an array")
    out, clock = [], 0
    for i, s in enumerate(steps):
        try:
            at, kind = parse_step(s, call_mode)
        except Bad as e:
            raise Bad("step %d: %s" % (i, e)) from None
        if at is not None:
            if at < clock:
                raise Bad("step %d: at %d is earlier than the previous step's %d" % (i, at, clock))
            clock = at
        out.append((at, kind))
    return out


def parse_tool(spec):
    spec = spec.obj() or {}
    kind = spec["kind"].value() if "kind" in spec else None
    if kind == "deferred":
        return ("deferred",)
    if kind == "adapter":
        return ("adapter",)
    if kind == "sync":
        if "error" in spec and spec["error"].text != "null":
            return ("error", message_of(spec["error"]))
        if is_true(spec, "echo"):
            return ("echo",)
        return ("result", spec["result"].raw() if "result" in spec else b"null")
    raise Bad("kind must be sync, deferred or adapter")


def load(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Bad("cannot read: %s" % (e.strerror or e)) from None
    try:
        text = data.decode("utf-8")
        json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise Bad("not JSON: %s" % e) from None
    start = _ws(text, 0)
    doc = Raw(text, start, _value_end(text, start)).obj()
    if doc is None:
        raise Bad("a scenario must be a JSON object")
    mode = doc["mode"].value() if "mode" in doc else "wrapper"
    if mode == "wrapper":
        opts = {}
        if "options" in doc:
            opts = doc["options"].obj()
            if opts is None:
                raise Bad("options must be an object")
        tools = []
        if "tools" in doc:
            table = doc["tools"].obj()
            if table is None:
                raise Bad("tools must be an object")
            for name, spec in table.items():
                try:
                    tools.append((name, parse_tool(spec)))
                except Bad as e:
                    raise Bad("tool %s: %s" % (json.dumps(name, ensure_ascii=False), e)) from None
        max_pending = u32(opts, "maxPending", 8)
        if max_pending > MAX_PENDING:
            raise Bad("maxPending %d exceeds the replay's %d slots" % (max_pending, MAX_PENDING))
        return {
            "mode": "wrapper",
            "tools": tools,
            "mirror_continue": flag(opts, "mirrorContinue", True),
            "tool_timeout_ms": u32(opts, "toolTimeoutMs", 30000),
            "max_total_timeout_ms": u32(opts, "maxTotalTimeoutMs", 0),
            "max_pending": max_pending,
            "max_rounds": u32(opts, "maxRounds", 0),
            "aborted": flag(opts, "aborted", False),
            "full_validation": flag(opts, "fullValidation", False),
            "steps": parse_steps(doc, False),
        }
    if mode == "call":
        name = "unknown"
        if "name" in doc:
            if not doc["name"].is_string():
                raise Bad("name must be a string")
            name = doc["name"].value()
        call_id = None
        if "id" in doc and doc["id"].text != "null":
            if not doc["id"].is_string():
                raise Bad("id must be a string")
            call_id = doc["id"].value()
        return {
            "mode": "call",
            "name": name,
            "timeout_ms": u32(doc, "timeoutMs", 30000),
            "max_total_timeout_ms": u32(doc, "maxTotalTimeoutMs", 0),
            "id": call_id,
            "args": doc["args"].raw() if "args" in doc else b"{}",
            "steps": parse_steps(doc, True),
        }
    raise Bad('mode must be "wrapper" or "call"')


# ------------------------------------------------------------ printing

_STRIP = re.compile(rb'("(?:[^"\\]|\\.)*")|[ \t\r\n]+', re.S)


def jstr(text):
    return json.dumps(text, ensure_ascii=False)


def is_json(raw):
    try:
        pw.validate_json(raw, 255)
        return True
    except pw.JsonTooDeep:
        pass
    except pw.MalformedFrame:
        return False
    # Deeper than the library's widest limit: Python's json decides.
    try:
        json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        return True
    except (ValueError, RecursionError):
        return False


def json_value(raw):
    """A raw JSON value as it goes into one line: its own text without white space outside
    strings; anything that is not JSON becomes a JSON string of its text."""
    if is_json(raw):
        return _STRIP.sub(lambda m: m.group(1) or b"", raw).decode("utf-8")
    return jstr(raw.decode("utf-8", "replace"))


def name_of(name):
    return "null" if name is None else jstr(name)


def outcome_of(result, error):
    if error is not None:
        return '"result":null,"error":%s' % jstr(error)
    return '"result":%s,"error":null' % json_value(result)


class Out:
    def __init__(self):
        self.stream = sys.stdout.buffer

    def line(self, text):
        self.stream.write(text.encode("utf-8") + b"\n")


# ------------------------------------------------------------ wrapper mode


class ToolFailure(Exception):
    pass


def sync_tool(spec):
    kind = spec[0]
    if kind == "echo":
        return lambda args: args
    if kind == "result":
        raw = spec[1]
        return lambda args: raw
    message = spec[1]

    def fail(args):
        raise ToolFailure(message)

    return fail


class WrapperRun:
    def __init__(self, sc, out):
        self.out = out
        self.known = {}  # call index -> handle (None: completed at once)
        tools = {}
        for name, spec in sc["tools"]:
            if spec[0] == "deferred":
                tools[name] = pw.deferred()
            elif spec[0] == "adapter":
                tools[name] = pw.adapter()
            else:
                tools[name] = pw.sync(sync_tool(spec))
        cfg = pw.WrapperConfig(
            tool_timeout_ms=sc["tool_timeout_ms"],
            max_total_timeout_ms=sc["max_total_timeout_ms"],
            mirror_continue=sc["mirror_continue"],
            max_rounds=sc["max_rounds"],
            full_validation=sc["full_validation"],
            max_depth=MAX_DEPTH,
            name_cap=NAME_CAP,
            id_cap=NAME_CAP,
            args_cap=ARGS_CAP,
            result_cap=RESULT_CAP,
            message_cap=MESSAGE_CAP,
            trace_entries=TRACE_ENTRIES,
            trace_bytes=TRACE_ENTRIES * (TRACE_ENTRY_HEADER + NAME_CAP + ARGS_CAP + max(RESULT_CAP, MESSAGE_CAP)),
            held_bytes=HELD_ENDS * (END_CAP + 4),
            hook_log_bytes=HOOK_LOG_BYTES,
        )
        try:
            # No hook functions: the log keeps the events for `outputs()`, in their place.
            self.w = pw.Wrapper(tools, slots=sc["max_pending"], config=cfg)
        except pw.PolyweaveError as e:
            raise Bad("cannot build the wrapper: %s" % e) from None

    def flush(self):
        """Frames and hook events in the order they happened (as the library orders them:
        `Wrapper.outputs`), then the calls that started, until nothing is left."""
        while True:
            for o in self.w.outputs():
                if isinstance(o, pw.HookEvent):
                    if o.cut:
                        raise Bad("the hook log (%d bytes) lacked room for call %d" % (HOOK_LOG_BYTES, o.call.index))
                    c = o.call
                    if o.kind == "toolCall":
                        self.out.line('{"hook":"toolCall","name":%s,"args":%s}' % (name_of(c.name), json_value(c.args)))
                    else:
                        self.out.line(
                            '{"hook":"toolResult","name":%s,"args":%s,%s}'
                            % (name_of(c.name), json_value(c.args), outcome_of(o.outcome.result, o.outcome.error))
                        )
                    continue
                frame = json_value(o.frame)
                if o.route == pw.Route.MODEL:
                    self.out.line('{"to":"model","frame":%s}' % frame)
                elif o.route == pw.Route.CONSUMER:
                    self.out.line('{"to":"consumer","frame":%s}' % frame)
                else:
                    self.out.line('{"to":"adapter","call":%d,"frame":%s}' % (o.handle.index, frame))
            dropped = self.w.stats().hook_events_dropped
            if dropped:
                raise Bad("the hook log (%d bytes) dropped %d events" % (HOOK_LOG_BYTES, dropped))
            if not any(True for _ in self.w.events()):
                return

    def refused(self, call):
        self.out.line('{"refused":{"call":%d}}' % call)

    def step(self, now, kind):
        w, what = self.w, kind[0]
        if what == "response":
            try:
                d = w.handle_response(now, kind[1])
            except pw.MalformedFrame:
                self.out.line('{"rejected":{"path":"response"}}')
                return
            except pw.PolyweaveError as e:
                raise Bad("response refused: %s" % e) from None
            if d.disposition == pw.Disposition.FORWARD:
                self.out.line('{"to":"consumer","frame":%s}' % json_value(kind[1]))
            elif d.disposition == pw.Disposition.INTERCEPTED:
                self.known[d.index] = d.handle
        elif what == "request":
            try:
                w.handle_request(now, kind[1])
            except pw.MalformedFrame:
                self.out.line('{"rejected":{"path":"request"}}')
                return
            except pw.PolyweaveError as e:
                raise Bad("request refused: %s" % e) from None
            self.out.line('{"to":"model","frame":%s}' % json_value(kind[1]))
        elif what == "complete":
            _, call, result, error = kind
            h = self.known.get(call)
            if h is None:
                return self.refused(call)
            try:
                w.complete(now, h, result, error=error)
            except pw.CallNotWaiting:
                self.refused(call)
            except pw.PolyweaveError as e:
                raise Bad("completion refused: %s" % e) from None
        elif what == "adapter":
            _, call, frame, close = kind
            h = self.known.get(call)
            if h is None:
                return self.refused(call)
            # The frame, then the close; a refused frame (the call is not waiting) ends the
            # step, a rejected (malformed) one does not (SPEC §6, §7.10).
            if frame is not None:
                try:
                    w.handle_adapter_frame(now, h, frame)
                except pw.MalformedFrame:
                    self.out.line('{"rejected":{"path":"adapter","call":%d}}' % call)
                except pw.CallNotWaiting:
                    return self.refused(call)
                except pw.PolyweaveError as e:
                    raise Bad("adapter frame refused: %s" % e) from None
            if close:
                self.flush()  # what the frame queued comes before what the close prints
                try:
                    w.handle_adapter_closed(now, h)
                except pw.CallNotWaiting:
                    self.refused(call)
                except pw.PolyweaveError as e:
                    raise Bad("adapter close refused: %s" % e) from None
        elif what == "abort":
            w.abort()
        elif what == "cancel":
            try:
                left = w.cancel(now, kind[1])
            except pw.PolyweaveError as e:
                raise Bad("cancel refused: %s" % e) from None
            if left > 0:
                raise Bad("cancel left %d calls pending: the output queue is full" % left)
        elif what == "clearTrace":
            w.clear_trace()

    def run(self, sc):
        now = 0
        if sc["aborted"]:
            self.w.abort()
        for i, (at, kind) in enumerate(sc["steps"]):
            try:
                if at is not None:
                    now = at
                try:
                    self.w.handle_timeout(now)
                except pw.PolyweaveError as e:
                    raise Bad("clock: %s" % e) from None
                self.flush()
                self.step(now, kind)
                self.flush()
            except Bad as e:
                raise Bad("step %d: %s" % (i, e)) from None
        entries = []
        for e in self.w.trace():
            cut = ',"truncated":true' if e.truncated else ""
            entries.append(
                '{"name":%s,"args":%s,%s%s}' % (name_of(e.name), json_value(e.args), outcome_of(e.result, e.error), cut)
            )
        self.out.line('{"trace":[%s]}' % ",".join(entries))
        self.w.close()


# ------------------------------------------------------------ call mode


def run_call(sc, out):
    try:
        call = pw.AdapterCall(
            0, name=sc["name"], id=sc["id"], args=sc["args"], timeout_ms=sc["timeout_ms"],
            max_total_timeout_ms=sc["max_total_timeout_ms"], result_cap=CALL_RESULT_CAP
        )
    except pw.PolyweaveError as e:
        raise Bad("cannot start the call: %s" % e) from None
    settled = [False]

    def flush():
        for frame in call.transmits():
            out.line('{"to":"adapter","call":0,"frame":%s}' % json_value(frame))
        if not settled[0]:
            s = call.outcome
            if s is not None:
                settled[0] = True
                if s.error is not None:
                    out.line('{"settled":{"error":%s}}' % jstr(s.error))
                else:
                    out.line('{"settled":{"result":%s}}' % json_value(s.result))

    with call:
        flush()
        now = 0
        for i, (at, kind) in enumerate(sc["steps"]):
            if at is not None:
                now = at
            try:
                call.handle_timeout(now)
                flush()
                if kind[0] == "frame":
                    call.handle_frame(now, kind[1])
                elif kind[0] == "close":
                    call.handle_closed(now)
            except pw.MalformedFrame:
                out.line('{"rejected":{"path":"adapter","call":0}}')
            except (pw.CallCompleted, pw.CallTimedOut):
                pass  # after the settlement input is refused and nothing is printed
            except pw.PolyweaveError as e:
                raise Bad("step %d: adapter input refused: %s" % (i, e)) from None
            flush()


# ------------------------------------------------------------ main


def main(argv):
    args = argv[1:]
    if args in (["-h"], ["--help"]):
        print("usage: replay.py SCENARIO.json")
        return 0
    if len(args) != 1:
        sys.stderr.write("usage: replay.py SCENARIO.json\n")
        return 2
    path = args[0]
    out = Out()
    try:
        sc = load(path)
        if sc["mode"] == "call":
            run_call(sc, out)
        else:
            WrapperRun(sc, out).run(sc)
        sys.stdout.flush()
    except Bad as e:
        sys.stdout.flush()
        sys.stderr.write("%s: %s: %s\n" % (PROG, path, str(e).replace("\n", "\\n")))
        return 2
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
