#!/usr/bin/env bash
# Instruction counts (callgrind) of the benchmark workloads: each workload runs N and 2N
# times and the difference is divided by the work done, so set-up and criterion cost
# nothing. Counts do not depend on the machine's load, unlike criterion's times.
#
#   bash tests/bench/instructions.sh                 # every workload in tests/README.md "Speed"
#   bash tests/bench/instructions.sh sync_echo       # some of them (names below)
#   bash tests/bench/instructions.sh decode          # every decode_* and validate_* workload
#
# wrapper workloads (per call, 3,302 BFCL calls): sync_echo sync_echo_unsorted deferred
#   full_sync_echo; schema_sync_echo (tools with their BFCL schemas), schema_sync_echo_indexed
#   (the same schemas indexed) and sync_echo_checked (the
#   same 3,106 calls without), per call and as a ratio with `schema_roundtrip`; per frame: passthrough_64B passthrough_16KiB full_passthrough_64B
#   full_passthrough_16KiB
# frames workloads (per byte of the 560 KB corpus): polyweave serde_json frame_parse_validated;
#   per frame: kind_64B kind_16KiB
# c_abi workloads (per call, the same round trip, bare host loops): rust_sync_echo c_sync_echo
# decode workloads (the 71 recorded provider bodies, tests/benches/decode.rs), per byte of body and
#   per byte of their JSON payloads: decode_openai-chat decode_openai-responses decode_anthropic
#   decode_gemini decode_ollama; json::validate over the same payloads, per byte of payload:
#   validate_openai-chat validate_openai-responses validate_anthropic validate_gemini validate_ollama
# request workloads (tests/benches/request.rs: a 20-exchange conversation per provider), per byte
#   of body: request_<provider> (Request::new and write through a 4096-byte buffer),
#   request64_<provider> (the same through 64 bytes), measure_request_<provider> (Request::new
#   alone: the counting pass), validate_request_<provider> (json::validate over the body);
#   `request` runs them all for every provider, with the write/validate ratio
# schema workloads (tests/benches/schema.rs: the 2,935 BFCL calls that have a function, each
#   against its function's schema), per byte of args: schema_validate (Schema::validate),
#   schema_validate_indexed (the same, each schema indexed),
#   jsonschema_validate (serde_json::from_slice + the jsonschema crate); schema_new (Schema::new)
#   and schema_index (Schema::index_words + Schema::indexed) per byte of schema and per
#   declaration (2,452); `schema` runs the five
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }

bin() { # bin <bench> [package]: path of the bench executable
  cargo bench -q -p "${2:-polyweave-tests}" --bench "$1" --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == sys.argv[1]:
        print(m["executable"])' "$1" | tail -1
}

count() { # count <binary> <workload> <iters> [toggle]: instructions collected (in toggle only)
  local out; out=$(mktemp)
  local toggle=(); [ -z "$4" ] || toggle=(--toggle-collect="$4")
  POLYWEAVE_BENCH_ONCE=$2 POLYWEAVE_BENCH_ITERS=$3 valgrind --tool=callgrind \
    --callgrind-out-file="$out" "${toggle[@]}" "$1" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
  rm -f "$out"
}

per() { # per <binary> <workload> <toggle> <units per iteration> <unit>
  local a b
  a=$(count "$1" "$2" 1 "$3"); b=$(count "$1" "$2" 2 "$3")
  python3 -c "import sys; print(f'{sys.argv[1]:<24} {(int(sys.argv[3])-int(sys.argv[2]))/float(sys.argv[4]):>10,.1f} instructions per {sys.argv[5]}')" "$2" "$a" "$b" "$4" "$5"
}

# pass_bytes <binary> <workload>: the bytes one pass of a decode bench workload covers (it says).
pass_bytes() {
  POLYWEAVE_BENCH_ONCE=$2 POLYWEAVE_BENCH_ITERS=0 "$1" 2>/dev/null | sed -n 's/.*(\([0-9]*\) bytes a pass).*/\1/p'
}

# per_decode <binary> <provider>: decode_<provider> per byte of body and per byte of payload.
per_decode() {
  local a b body payload
  a=$(count "$1" "decode_$2" 1 '*run_once*'); b=$(count "$1" "decode_$2" 2 '*run_once*')
  body=$(pass_bytes "$1" "decode_$2"); payload=$(pass_bytes "$1" "validate_$2")
  python3 -c "import sys; d=int(sys.argv[3])-int(sys.argv[2]); print(f'{sys.argv[1]:<26} {d/float(sys.argv[4]):>10,.1f} instructions per byte of body ({d/float(sys.argv[5]):,.1f} per byte of payload)')" "decode_$2" "$a" "$b" "$body" "$payload"
}

# per_request <binary> <provider>: the request workloads of one provider, per byte of body, and
# how many times json::validate's count writing the body takes.
per_request() {
  local bytes w a b out=()
  bytes=$(pass_bytes "$1" "request_$2")
  for w in "request_$2" "request64_$2" "measure_request_$2" "validate_request_$2"; do
    a=$(count "$1" "$w" 1 '*run_once*'); b=$(count "$1" "$w" 2 '*run_once*')
    out+=("$((b - a))")
  done
  python3 -c "import sys
p, n = sys.argv[1], int(sys.argv[2]); w, w64, m, v = (int(x) / n for x in sys.argv[3:])
print(f'request_{p:<18} {n:>6} B body: write {w:6.1f}, write via 64 B {w64:6.1f}, of which Request::new {m:5.1f}; validate {v:5.1f} instructions per byte; write/validate {w / v:4.2f}x (64 B: {w64 / v:4.2f}x)')" \
    "$2" "$bytes" "${out[@]}"
}

# per_roundtrip <binary>: the sync round trip with schemas and without, on the same calls.
per_roundtrip() {
  local n a b out=()
  n=$(POLYWEAVE_BENCH_ONCE=schema_sync_echo POLYWEAVE_BENCH_ITERS=0 "$1" 2>/dev/null | sed -n 's/.*(\([0-9]*\) calls a pass).*/\1/p')
  for w in schema_sync_echo schema_sync_echo_indexed sync_echo_checked; do
    a=$(count "$1" "$w" 1 '*run_once*'); b=$(count "$1" "$w" 2 '*run_once*')
    out+=("$((b - a))")
  done
  python3 -c "import sys
n = int(sys.argv[1]); s, x, p = (int(v) / n for v in sys.argv[2:])
print(f'sync round trip, {n} calls: with schemas {s:,.1f} (ratio {s / p:.2f}x), indexed {x:,.1f} (ratio {x / p:.2f}x), without {p:,.1f} instructions per call')" "$n" "${out[@]}"
}

wanted=()
for w in "$@"; do
  case $w in
    request) for p in openai-chat openai-responses anthropic gemini ollama; do wanted+=("request:$p"); done ;;
    schema_roundtrip) wanted+=(roundtrip:schema) ;;
    schema) wanted+=(schema_validate schema_validate_indexed jsonschema_validate schema_new schema_index) ;;
    decode) for p in openai-chat openai-responses anthropic gemini ollama; do wanted+=("decode_$p" "validate_$p"); done ;;
    *) wanted+=("$w") ;;
  esac
done
[ ${#wanted[@]} -gt 0 ] || wanted=(kind_64B kind_16KiB polyweave serde_json frame_parse_validated
  passthrough_64B passthrough_16KiB full_passthrough_64B full_passthrough_16KiB
  sync_echo full_sync_echo sync_echo_unsorted deferred rust_sync_echo c_sync_echo)

corpus_bytes=$(python3 -c 'import sys; print(sum(len(l) for l in open(sys.argv[1], "rb").read().split(b"\n") if l.strip()))' tests/data/bfcl/tool-calls.ndjson)
calls=$(grep -c . tests/data/bfcl/tool-calls.ndjson)
for w in "${wanted[@]}"; do
  case $w in
    # The frames bench's loop is inlined into main: the whole run is counted, N and 2N apart.
    kind_*) per "$(bin frames)" "$w" '' 1 frame ;;
    polyweave|serde_json|frame_parse_validated) per "$(bin frames)" "$w" '' "$corpus_bytes" byte ;;
    passthrough_*|full_passthrough_*) per "$(bin wrapper)" "$w" '*run_once*' 1 frame ;;
    rust_sync_echo|c_sync_echo) per "$(bin c_abi)" "$w" '*run_once*' "$calls" call ;;
    roundtrip:schema) per_roundtrip "$(bin wrapper)" ;;
    request:*) per_request "$(bin request)" "${w#request:}" ;;
    request_*|request64_*|measure_request_*|validate_request_*) b=$(bin request); per "$b" "$w" '*run_once*' "$(pass_bytes "$b" "$w")" 'byte of body' ;;
    decode_*) per_decode "$(bin decode)" "${w#decode_}" ;;
    schema_validate|schema_validate_indexed|jsonschema_validate) b=$(bin schema); per "$b" "$w" '*run_once*' "$(pass_bytes "$b" "$w")" 'byte of args' ;;
    schema_new|schema_index) b=$(bin schema); per "$b" "$w" '*run_once*' "$(pass_bytes "$b" "$w")" 'byte of schema'
      per "$b" "$w" '*run_once*' 2452 declaration ;;
    validate_*) b=$(bin decode); per "$b" "$w" '*run_once*' "$(pass_bytes "$b" "$w")" 'byte of payload' ;;
    schema_sync_echo|schema_sync_echo_indexed|sync_echo_checked) per "$(bin wrapper)" "$w" '*run_once*' 3106 call ;;
    *) per "$(bin wrapper)" "$w" '*run_once*' "$calls" call ;;
  esac
done
