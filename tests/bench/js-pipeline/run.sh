#!/usr/bin/env bash
# Issue 28's bench: installs the pinned AI SDK (npm ci, into node_modules here), builds the
# checkout's npm package if its module is missing, then runs the pipeline bench and the
# package's own round-trip bench against the pure-JS reference (examples/node/bench.mjs).
#   bash tests/bench/js-pipeline/run.sh [bench.mjs options, e.g. --iterations 400 --chunks whole]
#   PW_REFERENCE=/path/to/reference-js/tool-adapter.mjs bash tests/bench/js-pipeline/run.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
export npm_config_cache="${npm_config_cache:-$root/target/npm-cache}"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
if [ ! -f "$root/examples/node/polyweave_tool_adapter.wasm" ]; then
  (cd "$root/examples/node" && npm run build)
fi
echo "== node $(node --version), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "== the pipeline: framesFromResponse → createToolAdapterWrapper → encodeItem vs the AI SDK's streamText"
node "$here/bench.mjs" "$@"
echo "== one round trip (a TOOL_CALL frame to its TOOL_RESULT) vs the pure-JS reference: examples/node/bench.mjs"
# The reference is not part of the repository: PW_REFERENCE, or shared/ beside the checkout.
ref="${PW_REFERENCE:-$root/../shared/reference-js/tool-adapter.mjs}"
node "$root/examples/node/bench.mjs" --reference "$ref"
