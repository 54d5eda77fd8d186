#!/usr/bin/env bash
# Decode throughput on the 71 recorded provider bodies (tests/data/provider-streams), in one run:
# the Rust decoders (criterion, tests/benches/decode.rs), the provider SDKs' own Python stream
# parsers (tests/bench/decode_compare.py, in target/sdk-venv) and a Node parser (eventsource-parser
# + JSON.parse, tests/bench/decode_compare.mjs) on the same bytes; then one table of MB/s
# (10^6 bytes of body a second) and ratios. One after the other, never in parallel.
#
#   bash tests/bench/decode_compare.sh            # criterion 1 s warm-up + 3 s, Python/Node >= 1 s each
#   bash tests/bench/decode_compare.sh --quick    # a smoke run (shorter measurements)
#
# Needs: cargo; target/sdk-venv with tests/sdk/requirements.txt (bash tests/run.sh makes it);
# node >= 20 and npm (the pinned packages of tests/bench/package-lock.json are installed into
# tests/bench/node_modules once, when missing). Times vary with the machine's load (the figures
# of each row are taken minutes apart); instruction counts do not: tests/bench/instructions.sh decode.
set -euo pipefail
cd "$(dirname "$0")/../.."

warm=1 measure=3 min_time=1.0
case ${1:-} in
  --quick) warm=0.5 measure=1 min_time=0.3 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

py=target/sdk-venv/bin/python
[ -x "$py" ] || { echo "no $py: make it with bash tests/run.sh (or python3 -m venv target/sdk-venv && $py -m pip install -r tests/sdk/requirements.txt)" >&2; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "node >= 20 and npm are needed" >&2; exit 1; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || { echo "node >= 20 is needed (have $(node --version))" >&2; exit 1; }

# The Node packages, pinned by the lock file: installed only when missing or not the locked version.
want=$(python3 -c 'import json; print(json.load(open("tests/bench/package-lock.json"))["packages"]["node_modules/eventsource-parser"]["version"])')
have=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' tests/bench/node_modules/eventsource-parser/package.json 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  echo "==> npm ci --prefix tests/bench (eventsource-parser $want)" >&2
  npm ci --prefix tests/bench --no-audit --no-fund >&2
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

{
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "rustc $(rustc --version | cut -d' ' -f2), $($py --version), node $(node --version)"
} >&2

echo "==> Rust: cargo bench -p polyweave-tests --bench decode -- --warm-up-time $warm --measurement-time $measure" >&2
cargo bench -q -p polyweave-tests --bench decode -- --warm-up-time "$warm" --measurement-time "$measure" \
  '^decode(_validate)?/' >"$out/criterion.txt" 2>&1 || { cat "$out/criterion.txt" >&2; exit 1; }
grep -E '^decode|time:|thrpt:' "$out/criterion.txt" >&2
criterion=${CARGO_TARGET_DIR:-target}/criterion

echo "==> Python SDKs: $py tests/bench/decode_compare.py --min-time $min_time" >&2
"$py" tests/bench/decode_compare.py --min-time "$min_time" >"$out/python.jsonl"

echo "==> Node: node tests/bench/decode_compare.mjs --min-time $min_time" >&2
node tests/bench/decode_compare.mjs --min-time "$min_time" >"$out/node.jsonl"

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$criterion" "$out/python.jsonl" "$out/node.jsonl" <<'EOF'
import json, sys
from pathlib import Path

criterion, py_file, node_file = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
py = {r["provider"]: r for r in map(json.loads, open(py_file))}
nd = {r["provider"]: r for r in map(json.loads, open(node_file))}

def rust(group, provider):
    d = criterion / group / provider / "new"
    ns = json.loads((d / "estimates.json").read_text())["median"]["point_estimate"]
    nbytes = json.loads((d / "benchmark.json").read_text())["throughput"]["Bytes"]
    return nbytes / ns * 1e3  # bytes per ns -> MB/s

print()
print("MB/s (10^6 bytes of body a second; medians: criterion's per iteration, Python's and Node's per pass)")
print()
print("| provider | body bytes | polyweave | Python SDK | × SDK | Python SSE+json.loads | × | Node | × Node | Node parser+JSON.parse | json::validate (payloads) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
tot = {"bytes": 0, "rust": 0.0, "sdk": 0.0, "bare": 0.0, "node": 0.0}
for p in ["openai-chat", "openai-responses", "anthropic", "gemini", "ollama"]:
    r, v = rust("decode", p), rust("decode_validate", p)
    s, b, n, nb = py[p]["sdk_mbps"], py[p]["bare_mbps"], nd[p]["node_mbps"], nd[p]["bare_mbps"]
    nbytes = py[p]["bytes"]
    tot["bytes"] += nbytes
    for k, x in (("rust", r), ("sdk", s), ("bare", b), ("node", n)):
        tot[k] += nbytes / x  # seconds per MB of this provider's bytes, for the aggregate
    print(f"| {p} | {nbytes:,} | {r:.1f} | {s:.2f} | {r/s:.0f}× | {b:.1f} | {r/b:.1f}× | {n:.1f} | {r/n:.2f}× | {nb:.1f} | {v:.0f} |")
agg = {k: tot["bytes"] / tot[k] for k in ("rust", "sdk", "bare", "node")}
print(f"| all 71 bodies | {tot['bytes']:,} | {agg['rust']:.1f} | {agg['sdk']:.2f} | {agg['rust']/agg['sdk']:.0f}× | {agg['bare']:.1f} | {agg['rust']/agg['bare']:.1f}× | {agg['node']:.1f} | {agg['rust']/agg['node']:.2f}× | | |")
print()
print("Python SDKs: " + ", ".join(sorted({r["sdk"] for r in py.values()})) + "; Node: " + next(iter(nd.values()))["parser"])
print("agree with the expected files (text, call names): Python " +
      ", ".join(f"{p} {r['agree']}/{r['bodies']}" for p, r in py.items()) + "; Node " +
      ", ".join(f"{p} {r['agree']}/{r['bodies']}" for p, r in nd.items()))
EOF
