#!/usr/bin/env bash
# Installs the two pinned MCP servers the MCP client tests run against, into
# <checkout>/target/mcp-servers/:
#   npm/   @modelcontextprotocol/server-everything (run: node "$PW_MCP_EVERYTHING" stdio)
#   venv/  mcp-server-time and its pinned dependencies (tests/mcp/requirements.txt),
#          among them the Python mcp package that tests/mcp/http_server.py runs on
#          ("$(dirname "$PW_MCP_TIME")/python" tests/mcp/http_server.py --port N), and
#          jsonschema 4.26.0, the reference tests/schema/differential.py checks the argument
#          validator against
# Idempotent: a stamp keyed on the pinned versions (and requirements.txt) skips the
# install when it matches and both servers are in place; otherwise it reinstalls.
# Writes target/mcp-servers/env.sh with two export lines and prints them last on
# stdout (all install chatter goes to stderr), so either works:
#   tests/mcp/install.sh >/dev/null && . target/mcp-servers/env.sh
#   eval "$(tests/mcp/install.sh | tail -2)"
set -euo pipefail

EVERYTHING_PKG=@modelcontextprotocol/server-everything
EVERYTHING_VERSION=2026.8.31
TIME_PKG=mcp-server-time
TIME_VERSION=2026.10.19
# Pinned in requirements.txt (a dependency of mcp): checked here because differential.py needs it.
JSONSCHEMA_VERSION=4.26.0

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dest="$root/target/mcp-servers"
npm_dir="$dest/npm"
venv="$dest/venv"
req="$here/requirements.txt"
everything_js="$npm_dir/node_modules/$EVERYTHING_PKG/dist/index.js"
time_bin="$venv/bin/mcp-server-time"

log() { echo "mcp install: $*" >&2; }
die() { log "error: $*"; exit 1; }

mkdir -p "$dest"
# Two runs at once (parallel test jobs) would trample each other: take a lock.
if command -v flock >/dev/null 2>&1; then
    exec 9>"$dest/.lock"
    flock 9
fi

req_sum=$(sha256sum "$req" | cut -d' ' -f1)
stamp_want="everything=$EVERYTHING_VERSION time=$TIME_VERSION requirements=$req_sum"
stamp="$dest/.stamp"

installed_ok() {
    [[ -f $stamp && "$(cat "$stamp")" == "$stamp_want" ]] || return 1
    [[ -f $everything_js && -x $time_bin ]] || return 1
    # The installed versions, and the venv's python still runs (removing or
    # upgrading the python under a venv breaks it).
    node -e 'const p=require(process.argv[1]); if (p.version !== process.argv[2]) process.exit(1)' \
        "$npm_dir/node_modules/$EVERYTHING_PKG/package.json" "$EVERYTHING_VERSION" 2>/dev/null || return 1
    "$venv/bin/python" -c 'import sys, importlib.metadata as m; sys.exit(m.version(sys.argv[1]) != sys.argv[2])' \
        "$TIME_PKG" "$TIME_VERSION" 2>/dev/null || return 1
    # The Streamable HTTP test server's class.
    "$venv/bin/python" -c 'from mcp.server.mcpserver import MCPServer' 2>/dev/null || return 1
    # The schema validator's reference (tests/schema/differential.py).
    "$venv/bin/python" -c 'import sys, importlib.metadata as m; import jsonschema; sys.exit(m.version("jsonschema") != sys.argv[1])' \
        "$JSONSCHEMA_VERSION" 2>/dev/null || return 1
}

with_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

make_venv() {
    rm -rf "$venv"
    python3 -m venv "$venv" >&2 && return 0
    rm -rf "$venv"
    # Debian's python3 lacks ensurepip until python3-venv is installed.
    command -v apt-get >/dev/null 2>&1 \
        || die "python3 -m venv fails and there is no apt-get to install python3-venv"
    log "python3 -m venv fails: installing python3-venv"
    with_root apt-get install -y python3-venv >&2 \
        || { with_root apt-get update >&2 && with_root apt-get install -y python3-venv >&2; }
    python3 -m venv "$venv" >&2
}

write_env() {
    {
        printf 'export PW_MCP_EVERYTHING=%q\n' "$everything_js"
        printf 'export PW_MCP_TIME=%q\n' "$time_bin"
    } > "$dest/env.sh"
    cat "$dest/env.sh"
}

if installed_ok; then
    log "up to date ($stamp_want)"
    write_env
    exit 0
fi

command -v node >/dev/null 2>&1 || die "node is not on PATH"
command -v npm >/dev/null 2>&1 || die "npm is not on PATH"
command -v python3 >/dev/null 2>&1 || die "python3 is not on PATH"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "python3 is $(python3 -V 2>&1); the pinned $TIME_PKG set needs Python >= 3.11"

rm -f "$stamp"

log "installing $EVERYTHING_PKG@$EVERYTHING_VERSION into $npm_dir"
rm -rf "$npm_dir"
mkdir -p "$npm_dir"
npm install --prefix "$npm_dir" --no-audit --no-fund --save-exact \
    "$EVERYTHING_PKG@$EVERYTHING_VERSION" >&2
[[ -f $everything_js ]] || die "$everything_js missing after npm install"

log "installing $TIME_PKG==$TIME_VERSION into $venv"
make_venv
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)
grep -qx "$TIME_PKG==$TIME_VERSION" "$req" || die "$req does not pin $TIME_PKG==$TIME_VERSION"
grep -qx "jsonschema==$JSONSCHEMA_VERSION" "$req" || die "$req does not pin jsonschema==$JSONSCHEMA_VERSION"
# Every package is pinned in requirements.txt: --no-deps installs exactly that set,
# and pip check proves it is complete and consistent for this Python.
"${pip[@]}" install -q --no-deps -r "$req" >&2
"${pip[@]}" check >&2 || die "the pinned set in $req is not consistent for $(python3 -V 2>&1)"
[[ -x $time_bin ]] || die "$time_bin missing after pip install"

echo "$stamp_want" > "$stamp"
installed_ok || die "installed, but the check of the install fails"
log "done"
write_env
