#!/usr/bin/env python3
"""A stdio proxy in front of an MCP server that misbehaves on one tool call.

    kill_proxy.py [--kill-on-tool NAME] [--after-ms MS] [--drop-response-to-tool NAME] -- SERVER CMD...

Runs SERVER CMD as a child. Lines from our stdin go to the child's stdin, lines from
the child's stdout go to our stdout (one line at a time, flushed); the child's stderr
is inherited.

--kill-on-tool NAME: when a client line is a JSON-RPC `tools/call` request whose
  params.name is NAME, forward it, wait --after-ms (default 200) ms, SIGKILL the child
  and exit, closing our stdout: the client sees the server die in the middle of a call.
  The server's response to that call is never passed on (a fast tool such as `echo`
  answers well within the wait), but what it sends meanwhile (e.g. progress) is.
--drop-response-to-tool NAME: forward `tools/call` requests for NAME, but never pass on
  the server's response to them (notifications, e.g. progress, still pass): a server
  that never answers.

When our stdin closes, the child's stdin is closed and we exit with the child.
Python 3.9+, standard library only.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time


def tool_call(line):
    """(id, tool name) when the line is a JSON-RPC tools/call request, else None."""
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    if not isinstance(msg, dict) or msg.get("method") != "tools/call" or "id" not in msg:
        return None
    params = msg.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return msg["id"], name


def response_id(line):
    """The id of a JSON-RPC response (has result or error and no method), else None."""
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    if isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg):
        return msg.get("id")
    return None


def id_key(value):
    # 1 and "1" are different ids; so are 1 and true.
    return (type(value).__name__, json.dumps(value))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kill-on-tool", metavar="NAME")
    ap.add_argument("--after-ms", type=int, default=200, metavar="MS")
    ap.add_argument("--drop-response-to-tool", metavar="NAME")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        ap.error("no server command (put it after --)")

    try:
        child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as e:
        sys.stderr.write("kill_proxy.py: cannot start %r: %s\n" % (cmd[0], e))
        sys.exit(127)
    out = sys.stdout.buffer
    out_lock = threading.Lock()
    dropped = set()  # id_key of calls whose responses are dropped
    dropped_lock = threading.Lock()

    def pump_out():
        for line in child.stdout:  # readline-sized: yields each line as it arrives
            if dropped:
                rid = response_id(line)
                if rid is not None:
                    with dropped_lock:
                        key = id_key(rid)
                        if key in dropped:
                            dropped.discard(key)
                            continue
            with out_lock:
                try:
                    out.write(line)
                    out.flush()
                except (BrokenPipeError, ValueError):
                    return

    reader = threading.Thread(target=pump_out, daemon=True)
    reader.start()

    def die(code):
        try:
            child.kill()  # SIGKILL
        except OSError:
            pass
        child.wait()
        # Every line written was flushed; exiting closes our stdout at once, even if
        # the reader thread is blocked writing to a client that stopped reading.
        os._exit(code)

    signal.signal(signal.SIGTERM, lambda *_: die(143))

    for line in sys.stdin.buffer:
        call = tool_call(line)
        if call is not None and call[1] is not None \
                and call[1] in (args.drop_response_to_tool, args.kill_on_tool):
            with dropped_lock:
                dropped.add(id_key(call[0]))
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except (BrokenPipeError, OSError):
            break  # the child is gone; its output, if any, is still drained below
        if call is not None and args.kill_on_tool is not None and call[1] == args.kill_on_tool:
            time.sleep(max(args.after_ms, 0) / 1000.0)
            die(0)

    try:
        child.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    code = child.wait()
    reader.join()
    with out_lock:
        try:
            out.flush()
        except (BrokenPipeError, OSError):
            pass
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
