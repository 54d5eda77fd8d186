#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz, libFuzzer, nightly). Seeds each target's corpus from
# the project's test data, then runs each target for SECONDS_EACH seconds (default 60), as many
# at once as there are cores (FUZZ_JOBS), and fails on any finding; crashes are kept under
# tests/fuzz/artifacts/<target>/.
#   tests/fuzz/fuzz.sh                 # every target, 60 s each (what the test command runs)
#   SECONDS_EACH=3600 tests/fuzz/fuzz.sh wrapper   # one target for an hour
set -euo pipefail
cd "$(dirname "$0")"
each="${SECONDS_EACH:-60}"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(json framing wrapper ffi
  decode_openai_chat decode_openai_responses decode_anthropic decode_gemini decode_ollama mcp mcp_http request
  schema)

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

data=../data
seed() { # seed <target> <file>...: one corpus entry per file, named by its content
  local dir="corpus/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do cp "$f" "$dir/seed-$(sha1sum <"$f" | cut -c1-16)"; done
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# json: the JSONTestSuite files, and BFCL frames one per file.
seed json "$data"/json-test-suite/*.json
head -n 300 "$data/bfcl/tool-calls.ndjson" | split -l 1 - "$tmp/bfcl-"
seed json "$tmp"/bfcl-*
# framing: a buffer size byte, eight cut bytes, then a stream (BFCL lines, scenario files).
i=0
for f in "$tmp"/bfcl-a[a-e]* "$data"/scenarios/*.json; do
  i=$((i + 1))
  { printf "\\x$(printf %02x $((i % 40 + 1)))"; printf '\x03\x07\x01\x10\x02\x05\x0b\x00'; cat "$f"; } >"$tmp/fr-$i"
done
seed framing "$tmp"/fr-*
# wrapper and ffi: their inputs are choices (one byte each); seeds of every length up to 256.
for n in 1 2 3 5 8 13 21 34 55 89 144 233; do
  head -c "$n" /dev/urandom >"$tmp/ch-$n"
done
seed wrapper "$tmp"/ch-*
seed mcp "$tmp"/ch-*
seed mcp_http "$tmp"/ch-*
seed request "$tmp"/ch-*
seed ffi "$tmp"/ch-*
# wrapper: also 512 cases of the model test's generator (a fixed seed) as choice bytes; they
# reach every status and kind of output that test lists (tests/tests/model.rs).
mkdir -p "$tmp/gen"
POLYWEAVE_SEED_DIR="$tmp/gen" cargo test -q --manifest-path ../../Cargo.toml -p polyweave-tests \
  --test model write_wrapper_fuzz_seeds -- --ignored --exact >/dev/null
seed wrapper "$tmp"/gen/*
# decode_<provider>: the recorded bodies of the provider, each behind three headers
# (fuzz_targets/decode_common.rs, HEADER bytes: event, args, name and id caps, depth, slots,
# frame buffer, four piece sizes): roomy and fed in pieces of all sizes; middling with a
# frame buffer of 288 bytes; tight (events of 144 bytes, one slot) fed a byte at a time.
headers=('\xff\xff\xff\xff\x1d\x04\xff\x20\x05\xff\x01'
  '\x80\x80\x40\x40\x0f\x02\x60\x03\x11\x07\x2a'
  '\x20\x30\x20\x20\x05\x01\x10\x00\x00\x00\x00')
for p in openai-chat openai-responses anthropic gemini ollama; do
  for f in "$data/provider-streams/$p"/*.body; do
    for i in "${!headers[@]}"; do
      { printf "${headers[$i]}"; cat "$f"; } >"$tmp/dec-$p-$i-$(basename "$f")"
    done
  done
  seed "decode_${p//-/_}" "$tmp"/dec-"$p"-*
done
# schema: a schema's length (two bytes, little-endian), the schema, a value
# (fuzz_targets/schema.rs): the MCP servers' tool schemas with `{}`, 300 BFCL declarations
# each with its first call's args and with `{}`, and every case of the JSON Schema Test Suite.
mkdir -p "$tmp/schema"
python3 - "$data" "$tmp/schema" <<'PY'
import json, pathlib, sys
data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
pairs = []
for line in (data / "mcp-tool-schemas.ndjson").read_text(encoding="utf-8").splitlines():
    pairs.append((json.loads(line)["schema"], {}))
args = {}
for line in (data / "bfcl/tool-calls.ndjson").read_text(encoding="utf-8").splitlines():
    content = json.loads(line)["content"]
    args.setdefault(content["name"], content["args"])
for line in (data / "bfcl/functions.ndjson").read_text(encoding="utf-8").splitlines()[:300]:
    f = json.loads(line)
    pairs += [(f["input_schema"], args.get(f["name"], {})), (f["input_schema"], {})]
for file in sorted((data / "json-schema-test-suite").glob("*/*.json")):
    for group in json.loads(file.read_text(encoding="utf-8")):
        pairs += [(group["schema"], test["data"]) for test in group["tests"]]
for i, (schema, value) in enumerate(pairs):
    s = json.dumps(schema, ensure_ascii=False).encode()
    v = json.dumps(value, ensure_ascii=False).encode()
    (out / f"s{i}").write_bytes(len(s).to_bytes(2, "little") + s + v)
PY
seed schema "$tmp"/schema/*

mkdir -p logs
# Each target is one libFuzzer process on one core: FUZZ_JOBS of them run at once (default: one
# per core), so every target still gets its full SECONDS_EACH of fuzzing. Built first, one at a
# time, so the runs only check their build.
jobs_max="${FUZZ_JOBS:-$(nproc)}"
for t in "${targets[@]}"; do
  cargo +nightly fuzz build --fuzz-dir . "$t" >/dev/null 2>"logs/$t.build.log" ||
    { cat "logs/$t.build.log" >&2; echo "fuzz $t: build failed" >&2; exit 1; }
done
fuzz_one() {
  local t=$1 max_len=4096
  # The decode targets' bodies go up to 60 KB (a header before them).
  case "$t" in decode_*) max_len=65536 ;; esac
  rm -f "logs/$t.rc"
  local rc=0
  cargo +nightly fuzz run --fuzz-dir . "$t" "corpus/$t" -- \
    -max_total_time="$each" -max_len="$max_len" -timeout=10 -print_final_stats=1 >"logs/$t.log" 2>&1 || rc=$?
  echo "$rc" >"logs/$t.rc"
}
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  echo "== fuzz $t for ${each}s"
  fuzz_one "$t" &
done
wait
failed=0
for t in "${targets[@]}"; do
  rc=$(cat "logs/$t.rc" 2>/dev/null || echo missing)
  if [ "$rc" != 0 ]; then
    tail -n 60 "logs/$t.log" >&2
    echo "fuzz $t failed (status $rc): findings (if any) in tests/fuzz/artifacts/$t, log in tests/fuzz/logs/$t.log" >&2
    failed=1
    continue
  fi
  echo "== $t"
  grep -E '^#[0-9]+ +DONE|^stat::(number_of_executed_units|peak_rss_mb|new_units_added)|^Done' "logs/$t.log" || true
done
exit "$failed"
