#!/usr/bin/env python3
"""Runs a firmware ELF under QEMU (mps2-an386) with its UART0 wired to an MCP server process.

    bridge.py --elf ELF [--timeout S] [--log FILE] [--transcript FILE] -- SERVER COMMAND...

The server is started as a child with pipes for stdin and stdout (its stderr is ours). The
bridge listens on a TCP port of 127.0.0.1 that the OS picks, and QEMU connects to it as a
client (`-chardev socket,...,server=off`): QEMU makes that connection while it sets up its
chardevs, before the guest runs, so no byte the firmware writes is lost, and there is no port
to guess. Two threads copy bytes both ways, unchanged. QEMU's stdout (the firmware's binary
defmt log over semihosting) goes to --log (default: our stdout).

Exit status: QEMU's (the firmware's verdict through semihosting), or 124 after --timeout
seconds, when QEMU and the server are killed. Python 3.9+, standard library only.
"""

import argparse
import os
import socket
import subprocess
import sys
import threading

QEMU = [
    "qemu-system-arm",
    "-machine", "mps2-an386",
    "-cpu", "cortex-m4",
    "-nographic",
    # With an explicit -serial, -nographic would put the monitor on stdio, in the defmt log.
    "-monitor", "none",
    "-semihosting-config", "enable=on,target=native",
]


# Set once QEMU is done: from then on the children going away is expected.
FINISHING = threading.Event()


def log(msg):
    print(f"bridge: {msg}", file=sys.stderr, flush=True)


class Transcript:
    """Both directions of the UART, one line per chunk: `> ` firmware to server, `< ` back."""

    def __init__(self, path):
        self.file = open(path, "wb") if path else None
        self.lock = threading.Lock()

    def write(self, prefix, data):
        if self.file:
            with self.lock:
                self.file.write(prefix + data.replace(b"\n", b"\\n") + b"\n")
                self.file.flush()


def uart_to_server(conn, server, transcript):
    """Firmware -> server. At EOF (QEMU gone) closes the server's stdin."""
    try:
        while True:
            data = conn.recv(65536)
            if not data:
                # QEMU closed the connection: it is exiting, so the server's going away
                # (once its stdin closes) is expected, even before the main thread sees it.
                FINISHING.set()
                break
            transcript.write(b"> ", data)
            server.stdin.write(data)
            server.stdin.flush()
    except (OSError, ValueError):
        pass
    finally:
        try:
            server.stdin.close()
        except (OSError, ValueError):
            pass


def server_to_uart(conn, server, transcript):
    """Server -> firmware. QEMU takes a byte only when the guest's RX register is empty, so
    `sendall` blocks while the firmware is slow: backpressure, nothing dropped."""
    fd = server.stdout.fileno()
    try:
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            transcript.write(b"< ", data)
            conn.sendall(data)
    except OSError:
        pass
    if not FINISHING.is_set():
        log(f"the server closed its stdout (exit status {server.poll()})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--elf", required=True, help="the firmware to run")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds (default 60)")
    ap.add_argument("--log", help="QEMU's stdout, the defmt log (default: stdout)")
    ap.add_argument("--transcript", help="write the UART traffic, both ways, to this file")
    ap.add_argument("--qemu", default=QEMU[0], help="the QEMU binary")
    ap.add_argument("server", nargs="+", help="the MCP server command (after --)")
    args = ap.parse_args()

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]

    out = open(args.log, "wb") if args.log else sys.stdout.buffer
    out.flush()
    server = qemu = conn = None
    transcript = Transcript(args.transcript)
    try:
        server = subprocess.Popen(args.server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        cmd = [args.qemu] + QEMU[1:] + [
            "-chardev", f"socket,id=uart0,host=127.0.0.1,port={port},server=off",
            "-serial", "chardev:uart0",
            "-kernel", args.elf,
        ]
        qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out)
        listener.settimeout(min(10.0, args.timeout))
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            log(f"QEMU did not connect to 127.0.0.1:{port} (exit status {qemu.poll()})")
            return 124 if qemu.poll() is None else qemu.returncode or 1
        conn.settimeout(None)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for target in (uart_to_server, server_to_uart):
            threading.Thread(target=target, args=(conn, server, transcript), daemon=True).start()
        try:
            return qemu.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            log(f"timeout after {args.timeout:g} s: killing QEMU and the server")
            return 124
    finally:
        FINISHING.set()
        killed = qemu is not None and qemu.poll() is None
        if killed:
            qemu.kill()
            qemu.wait()
        if conn:
            conn.close()
        if server and server.poll() is None:
            # EOF on its stdin is how a stdio MCP server is told to stop: it gets 2 s for
            # that after a firmware that finished, none after a timeout.
            try:
                server.stdin.close()
            except (OSError, ValueError):
                pass
            try:
                server.wait(timeout=0 if killed else 2)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        listener.close()
        if out is not sys.stdout.buffer:
            out.close()


if __name__ == "__main__":
    sys.exit(main())
