#!/usr/bin/env python3
"""A stdio proxy in front of an MCP server that logs every line both ways.

    log_proxy.py LOGFILE -- SERVER CMD...

Runs SERVER CMD as a child. Lines from our stdin go to the child's stdin, lines from the
child's stdout go to our stdout (one line at a time, flushed); the child's stderr is
inherited. Each line is first appended to LOGFILE, flushed, prefixed with its direction:
"> " for client -> server, "< " for server -> client (the line as it came, LF ended).

When our stdin closes, the child's stdin is closed and we exit with the child's status
once its stdout has ended. Python 3.9+, standard library only.
"""

import subprocess
import sys
import threading


def main():
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        sys.stderr.write("usage: log_proxy.py LOGFILE -- SERVER CMD...\n")
        sys.exit(2)
    log_path, cmd = args[0], args[2:]
    try:
        child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as e:
        sys.stderr.write("log_proxy.py: cannot start %r: %s\n" % (cmd[0], e))
        sys.exit(127)
    log = open(log_path, "ab")
    log_lock = threading.Lock()

    def note(prefix, line):
        with log_lock:
            log.write(prefix + line if line.endswith(b"\n") else prefix + line + b"\n")
            log.flush()

    out = sys.stdout.buffer

    def pump_out():
        for line in child.stdout:
            note(b"< ", line)
            try:
                out.write(line)
                out.flush()
            except (BrokenPipeError, ValueError):
                return

    reader = threading.Thread(target=pump_out, daemon=True)
    reader.start()
    for line in sys.stdin.buffer:
        note(b"> ", line)
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except (BrokenPipeError, OSError):
            break
    try:
        child.stdin.close()
    except (BrokenPipeError, OSError):
        pass
    code = child.wait()
    reader.join()
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
