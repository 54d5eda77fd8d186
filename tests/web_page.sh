#!/usr/bin/env bash
# The npm package in a browser: examples/web's page, served with the package as `npm pack`
# makes it (prepack builds the wasm) from a static localhost server, loaded in headless
# Chromium (Debian's `chromium`, installed when missing). The page decodes a recorded
# Anthropic stream, runs it through the wrapper with a JS tool, shows the frames and the next
# request the library writes (the second turn), and writes its own verdict into #verdict; this
# script reads it back from the DOM and wants it exact.
# `PW_NPM_TGZ` (a path): the tarball to serve, e.g. the one tests/npm_package.sh leaves in
# target/npm-pack/, so the wasm is not built and packed twice; unset, this script packs.
# Everything goes to a temporary folder (removed on exit, the server stopped by its pid),
# Chromium's own files too: its HOME and XDG folders are there, and the script checks that it
# wrote nothing into the real ones (it writes `Crash Reports` and dconf's cache there whatever
# `--user-data-dir` says).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/tests/lib.sh"
tmp=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
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

# The served folder: the page, the recording, and the package as its tarball holds it.
site="$tmp/site"
mkdir -p "$site/node_modules/polyweave-tool-adapter"
tar xzf "$tgz" -C "$site/node_modules/polyweave-tool-adapter" --strip-components=1
cp "$root/examples/web/index.html" "$root/examples/web/page.mjs" "$root/examples/web/demo.mjs" "$site/"
cp "$root/tests/data/provider-streams/anthropic/anthropic-sdk-tool-use-response.body" "$site/recording.body"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$site" >"$tmp/server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/index.html')" 2>/dev/null; then break; fi
  sleep 0.1
done

# Chromium's home: the real folders it would write to, and a mark of the time before it ran.
real_config="${XDG_CONFIG_HOME:-$HOME/.config}/chromium"
real_cache="${XDG_CACHE_HOME:-$HOME/.cache}/dconf"
home="$tmp/home"
mkdir -p "$home/.config" "$home/.cache"
touch "$tmp/before-chromium"

log "chromium --headless on http://127.0.0.1:$port/index.html"
HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_CACHE_HOME="$home/.cache" \
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$tmp/profile" --virtual-time-budget=20000 --dump-dom \
  "http://127.0.0.1:$port/index.html" >"$tmp/dom.html" 2>"$tmp/chromium.log" || {
  tail -20 "$tmp/chromium.log" >&2
  die "chromium failed"
}
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
log "ok"
