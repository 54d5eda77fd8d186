#!/usr/bin/env python3
"""The binding's round-trip cost on the BFCL corpus: every TOOL_CALL line of
tests/data/bfcl/tool-calls.ndjson through one `Wrapper` with a sync echo tool registered for
every tool name (handle_response, the Python tool through its ctypes trampoline, then draining
the TOOL_RESULT and the continue prompts). Prints µs per call, best of 3 (time.perf_counter).

    python3 examples/python/bench.py [CORPUS.ndjson]
"""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import polyweave_tool_adapter as pw  # noqa: E402


def main(argv):
    path = argv[1] if len(argv) > 1 else os.path.join(HERE, "..", "..", "tests", "data", "bfcl", "tool-calls.ndjson")
    with open(path, "rb") as f:
        lines = [line for line in f.read().split(b"\n") if line]
    names = list(dict.fromkeys(json.loads(line)["content"]["name"] for line in lines))

    def echo(args):
        return args

    w = pw.Wrapper(
        {name: echo for name in names},
        name_cap=1024,
        id_cap=1024,
        args_cap=4096,
        result_cap=4096,
        message_cap=4096,
    )
    best = None
    for _ in range(3):
        frames = 0
        start = time.perf_counter()
        for line in lines:
            w.handle_response(0, line)
            for _t in w.transmits():
                frames += 1
        elapsed = time.perf_counter() - start
        assert frames == 3 * len(lines), frames
        best = elapsed if best is None else min(best, elapsed)
    errors = [e for e in w.trace() if e.error is not None]
    assert not errors, errors
    w.close()
    print(
        "%d calls, %d tools: %.2f us per call (best of 3, %.1f ms total; %s)"
        % (len(lines), len(names), best / len(lines) * 1e6, best * 1e3, pw.version())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
