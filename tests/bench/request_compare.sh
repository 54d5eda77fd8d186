#!/usr/bin/env bash
# Request bodies, in one run: the Rust writer (tests/benches/request.rs, a 20-exchange
# conversation per provider, timed with Instant: best of 7 batches of about 0.1 s) and the
# provider SDKs building the same requests in Python (tests/bench/request_python.py, the
# same bodies, timed the same way); then one table. One after the other, never in parallel.
#
#   bash tests/bench/request_compare.sh             # batches of 0.1 s
#   bash tests/bench/request_compare.sh --quick     # a smoke run (batches of 0.02 s on the Python side)
#
# Needs: cargo; target/sdk-venv with tests/sdk/requirements.txt (bash tests/run.sh makes it;
# PW_SDK_PYTHON names another interpreter). Times vary with the machine's load; instruction
# counts do not: bash tests/bench/instructions.sh request.
set -euo pipefail
cd "$(dirname "$0")/../.."

min_time=0.1
case ${1:-} in
  --quick) min_time=0.02 ;;
  "") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

py=${PW_SDK_PYTHON:-target/sdk-venv/bin/python}
[ -x "$py" ] || { echo "no $py: make it with bash tests/run.sh (or python3 -m venv target/sdk-venv && $py -m pip install -r tests/sdk/requirements.txt)" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

{
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "rustc $(rustc --version | cut -d' ' -f2), $($py --version)"
} >&2

echo "==> Rust: cargo bench -p polyweave-tests --bench request (POLYWEAVE_REQUEST_TIME=1)" >&2
POLYWEAVE_REQUEST_BODIES="$out/bodies.ndjson" POLYWEAVE_REQUEST_TIME=1 \
  cargo bench -q -p polyweave-tests --bench request >"$out/rust.txt" 2>"$out/rust.err" ||
  { cat "$out/rust.err" >&2; exit 1; }
grep '^request bench:' "$out/rust.err" >&2 || true

echo "==> Python SDKs: $py tests/bench/request_python.py --min-time $min_time" >&2
"$py" tests/bench/request_python.py "$out/bodies.ndjson" --min-time "$min_time" >"$out/python.jsonl"

echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$out/rust.txt" "$out/python.jsonl" <<'EOF'
import json, sys
rust = {}
lines = open(sys.argv[1]).read().split("\n")
head = lines[0].split()
for l in lines[1:]:
    if l.strip():
        f = l.split()
        rust[f[0]] = dict(zip(head[1:], map(float, f[1:])))
py = {}
for l in open(sys.argv[2]):
    v = json.loads(l)
    py[v["provider"]] = v
print()
print("| provider | body bytes | Rust ns/body (4096 B buffer) | Rust ns/body (64 B buffer) | json::validate ns/body | Python build+serialize µs/body | Python serialize only µs/body | SDK create() serialisation µs/body | build+serialize ÷ Rust 4096 B |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for p, r in rust.items():
    q = py[p]
    sdk = f"{q['sdk_us']:,.0f}" if q["sdk_us"] is not None else "(= serialize)"
    print(f"| {p} | {int(r['bytes']):,} | {r['write_4096_ns']:,.0f} | {r['write_64_ns']:,.0f} | {r['validate_ns']:,.0f} | "
          f"{q['build_us']:,.0f} | {q['serialize_us']:,.0f} | {sdk} | {q['build_us'] * 1000 / r['write_4096_ns']:,.1f}× |")
print()
for p in rust:
    q = py[p]
    if not q["same_json"]:
        print(f"- {p}: the SDK's body ({q['python_body_bytes']:,} B) differs from the Rust one: {'; '.join(q['differences'])}")
EOF
