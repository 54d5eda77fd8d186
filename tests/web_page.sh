#!/usr/bin/env bash
# The npm package in a browser: examples/web's two pages, served with the package as `npm pack`
# makes it (prepack builds the wasm) from a static localhost server, loaded in headless
# Chromium (Debian's `chromium`, installed when missing); each page writes its own verdict into
# #verdict, and this script reads it back from the DOM and wants it exact.
# - index.html decodes a recorded Anthropic stream, runs it through the wrapper with a JS tool,
#   shows the frames and the next request the library writes (the second turn).
# - mcp.html?server=<url> is the MCP client over Streamable HTTP (`connectMcpServer({ url })`,
#   `fetch` only) against a real server, @modelcontextprotocol/server-everything
#   `streamableHttp` on another loopback port (so every request is cross-origin, under CORS):
#   it lists the tools, calls `echo` and `get-sum` and checks the exact results and the
#   session's protocol version; the server's log must show the page's 6 POSTs. The server comes
#   from `PW_MCP_EVERYTHING`, else tests/mcp/install.sh (idempotent; tests/run.sh has run it
#   before this step).
# `PW_NPM_TGZ` (a path): the tarball to serve, e.g. the one tests/npm_package.sh leaves in
# target/npm-pack/, so the wasm is not built and packed twice; unset, this script packs.
# Everything goes to a temporary folder (removed on exit, both servers stopped by their pids),
# Chromium's own files too: its HOME and XDG folders are there, and the script checks that it
# wrote nothing into the real ones (it writes `Crash Reports` and dconf's cache there whatever
# `--user-data-dir` says).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/tests/lib.sh"
tmp=$(mktemp -d)
server=""
mcp=""
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
cleanup() {
  if [ -n "$server" ]; then stop "$server"; fi
  if [ -n "$mcp" ]; then stop "$mcp"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
export npm_config_cache="$root/target/npm-cache" npm_config_update_notifier=false
log() { echo "web page: $*" >&2; }
die() { log "error: $*"; exit 1; }

if ! command -v chromium >/dev/null; then
  log "installing Debian's chromium"
  apt_install chromium >/dev/null
fi

# The tarball: PW_NPM_TGZ, or packed here.
if [ -n "${PW_NPM_TGZ:-}" ]; then
  tgz=$PW_NPM_TGZ
  [ -f "$tgz" ] || die "PW_NPM_TGZ=$tgz: no such file"
  log "serving $tgz (PW_NPM_TGZ)"
else
  log "npm pack (prepack builds the wasm)"
  tgz=$(npm_pack "$tmp") || die "npm pack failed"
fi

# The served folder: the pages, the recording, and the package as its tarball holds it.
site="$tmp/site"
mkdir -p "$site/node_modules/polyweave-tool-adapter"
tar xzf "$tgz" -C "$site/node_modules/polyweave-tool-adapter" --strip-components=1
cp "$root/examples/web/index.html" "$root/examples/web/page.mjs" "$root/examples/web/demo.mjs" \
  "$root/examples/web/mcp.html" "$root/examples/web/mcp.mjs" "$site/"
cp "$root/tests/data/provider-streams/anthropic/anthropic-sdk-tool-use-response.body" "$site/recording.body"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
port=$(free_port)
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.html')" 2>/dev/null; then break; fi
  sleep 0.1
done

# The MCP server for mcp.html, on another port: another origin than the page's.
if [ -z "${PW_MCP_EVERYTHING:-}" ] || [ ! -f "$PW_MCP_EVERYTHING" ]; then
  bash "$root/tests/mcp/install.sh" >/dev/null || die "tests/mcp/install.sh failed"
  . "$root/target/mcp-servers/env.sh"
fi
[ -f "$PW_MCP_EVERYTHING" ] || die "PW_MCP_EVERYTHING=$PW_MCP_EVERYTHING: no such file"
mcp_port=$(free_port)
PORT=$mcp_port node "$PW_MCP_EVERYTHING" streamableHttp >"$tmp/mcp.log" 2>&1 &
mcp=$!
for _ in $(seq 1 100); do
  if python3 -c "import socket; socket.create_connection(('127.0.0.1', $mcp_port), 1).close()" 2>/dev/null; then break; fi
  kill -0 "$mcp" 2>/dev/null || die "server-everything exited:\n$(cat "$tmp/mcp.log")"
  sleep 0.1
done
mcp_url="http://127.0.0.1:$mcp_port/mcp"

# Chromium's home: the real folders it would write to, and a mark of the time before it ran.
real_config="${XDG_CONFIG_HOME:-$HOME/.config}/chromium"
real_cache="${XDG_CACHE_HOME:-$HOME/.cache}/dconf"
home="$tmp/home"
mkdir -p "$home/.config" "$home/.cache"
touch "$tmp/before-chromium"

chromium=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$tmp/profile")
in_home() { HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_CACHE_HOME="$home/.cache" "$@"; }
chromium_failed() {
  tail -20 "$tmp/chromium.log" >&2
  die "chromium failed on $1"
}

# index.html: its DOM once its virtual time has run out (network fetches stop that clock).
log "chromium --headless on http://127.0.0.1:$port/index.html"
in_home timeout 120 "${chromium[@]}" --virtual-time-budget=20000 --dump-dom \
  "http://127.0.0.1:$port/index.html" >"$tmp/dom.html" 2>"$tmp/chromium.log" ||
  chromium_failed index.html

# mcp.html in real time: virtual time runs on while a response body is still being read (a
# fetch whose headers came is no longer pending for it) and jumps to the next timer, so the
# client's call and start-up timeouts fired at once. Chromium is driven instead over
# --remote-debugging-pipe (the DevTools protocol: JSON messages ending in NUL, commands on its
# fd 3, answers on its fd 4): open the page, read #verdict every 100 ms until it is no longer
# RUNNING (30 s at most: the page's own start-up timeout is 20 s), then take the DOM.
mcp_page="http://127.0.0.1:$port/mcp.html?server=$mcp_url"
log "chromium --headless on $mcp_page"
in_home timeout 120 python3 - "$tmp/mcp-dom.html" "$mcp_page" 30 "${chromium[@]}" 2>"$tmp/chromium.log" <<'PY' ||
import fcntl, json, os, select, subprocess, sys, time
out, url, wait_s, chromium = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
commands_r, commands_w = os.pipe()
answers_r, answers_w = os.pipe()
# Above fd 4, so that putting them on 3 and 4 in the child overwrites neither.
commands_hi = fcntl.fcntl(commands_r, fcntl.F_DUPFD_CLOEXEC, 10)
answers_hi = fcntl.fcntl(answers_w, fcntl.F_DUPFD_CLOEXEC, 10)
os.close(commands_r)
os.close(answers_w)
def child_fds():
    os.dup2(commands_hi, 3)
    os.dup2(answers_hi, 4)
proc = subprocess.Popen(chromium + ["--remote-debugging-pipe", "about:blank"], stdin=subprocess.DEVNULL,
                        preexec_fn=child_fds, close_fds=False)
os.close(commands_hi)
os.close(answers_hi)
pending = b""
last_id = 0
def call(method, params=None, session=None, timeout=10):
    global pending, last_id
    last_id += 1
    msg = {"id": last_id, "method": method, "params": params or {}}
    if session:
        msg["sessionId"] = session
    os.write(commands_w, json.dumps(msg).encode() + b"\0")
    end = time.monotonic() + timeout
    while True:
        while b"\0" in pending:
            line, pending = pending.split(b"\0", 1)
            m = json.loads(line)
            if m.get("id") == last_id:
                if "error" in m:
                    sys.exit(f"web page: error: chromium answered {method} with {m['error']}")
                return m["result"]
        left = end - time.monotonic()
        if left <= 0 or not select.select([answers_r], [], [], left)[0]:
            sys.exit(f"web page: error: chromium did not answer {method} within {timeout} s")
        chunk = os.read(answers_r, 1 << 16)
        if not chunk:
            sys.exit(f"web page: error: chromium closed its pipe (exit {proc.wait()})")
        pending += chunk
try:
    target = call("Target.createTarget", {"url": url})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    def value(expression):
        return call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session)["result"].get("value")
    end = time.monotonic() + wait_s
    while value("document.getElementById('verdict')?.textContent ?? null") in (None, "RUNNING") and time.monotonic() < end:
        time.sleep(0.1)
    with open(out, "w", encoding="utf-8") as f:
        f.write(value("document.documentElement.outerHTML"))
    call("Browser.close")
finally:
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
PY
  chromium_failed mcp.html
# What it writes there went to the temporary home, and nothing new is in the real folders (a
# folder made by this run is newer than the mark too; another Chromium running meanwhile as
# this user would show up here as well).
for d in "$home/.config/chromium/Crash Reports" "$home/.cache/dconf"; do
  [ -d "$d" ] || die "chromium wrote no $d: where did its files go? (its HOME is $home)"
done
for d in "$real_config" "$real_cache"; do
  if [ -e "$d" ]; then
    new=$(find "$d" -newer "$tmp/before-chromium" | head -5)
    [ -z "$new" ] || die "chromium wrote outside its temporary home, in $d:
$new"
  fi
done
log "chromium's files stayed in its temporary home: $(cd "$home" && find . -mindepth 2 -maxdepth 3 -type d | sort | tr '\n' ' ')"

python3 - "$tmp/dom.html" <<'PY'
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
def pre(i):
    m = re.search(r'<pre id="%s">(.*?)</pre>' % i, dom, re.S)
    if not m:
        sys.exit(f"web page: error: no #{i} in the DOM:\n{dom[:2000]}")
    return html.unescape(m.group(1))
verdict = pre("verdict")
want = ("PASS 10 frames: 4 decoded from the recording, 2 to the model, 4 to the consumer; "
        "next request: 705 bytes in 12 chunks, 1 call with its result")
frames = [l for l in pre("frames").split("\n") if l]
print(f"web page: verdict: {verdict}", file=sys.stderr)
if verdict != want:
    sys.exit(f"web page: error: the verdict is {verdict!r}, not {want!r}")
if len(frames) != 10:
    sys.exit(f"web page: error: {len(frames)} frames shown, not 10")
import json
request = json.loads(pre("request"))
if [m["role"] for m in request["messages"]] != ["user", "assistant", "user"]:
    sys.exit(f"web page: error: the next request shown is {request!r}")
PY
grep -q '"GET /node_modules/polyweave-tool-adapter/polyweave_tool_adapter.wasm HTTP/1.[01]" 200' "$tmp/server.log" ||
  die "the page did not load the package's wasm from the server:\n$(cat "$tmp/server.log")"

# mcp.html: its verdict, exact; then the server's side: the page's POSTs reached it.
python3 - "$tmp/mcp-dom.html" "http://127.0.0.1:$port" "http://127.0.0.1:$mcp_port" <<'PY'
import html, re, sys
path, page, server = sys.argv[1:]
dom = open(path, encoding="utf-8").read()
m = re.search(r'<pre id="verdict">(.*?)</pre>', dom, re.S)
if not m:
    sys.exit(f"web page: error: no #verdict in mcp.html's DOM:\n{dom[:2000]}")
verdict = html.unescape(m.group(1))
want = (f"PASS 2025-11-25 from {page} to {server} (cross-origin), 6 POSTs: 13 tools; "
        'echo → [{"type":"text","text":"Echo: hi"}]; '
        'get-sum → [{"type":"text","text":"The sum of 2 and 3 is 5."}]')
print(f"web page: mcp.html verdict: {verdict}", file=sys.stderr)
if verdict != want:
    sys.exit(f"web page: error: mcp.html's verdict is {verdict!r}, not {want!r}")
PY
posts=$(grep -c '^Received MCP POST request' "$tmp/mcp.log" || true)
[ "$posts" = 6 ] || die "server-everything got $posts POSTs, not the page's 6:\n$(cat "$tmp/mcp.log")"
grep -q '"GET /node_modules/polyweave-tool-adapter/mcp.mjs HTTP/1.[01]" 200' "$tmp/server.log" ||
  die "mcp.html did not load the package's mcp.mjs from the server:\n$(cat "$tmp/server.log")"
log "ok"
