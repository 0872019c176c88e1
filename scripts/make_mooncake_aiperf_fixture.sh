#!/usr/bin/env bash
# Replays the Mooncake slice (tests/fixtures/mooncake_conversation_240.jsonl, timestamps × 0.1)
# through servebench and through aiperf 0.13 (`--custom-dataset-type mooncake_trace
# --fixed-schedule`), each against a fresh example server recording its timeline, and writes
# tests/fixtures/aiperf-mooncake/: aiperf's per-request export and aggregate, and both
# server timelines cut to what the comparison needs (request id, arrival, prompt and output
# tokens, outcome). See tests/fixtures/README.md.
#
# Usage: AIPERF=/path/to/venv/bin/aiperf HF_CACHE=/path/to/fake/hf scripts/make_mooncake_aiperf_fixture.sh
set -euo pipefail
cd "$(dirname "$0")/.."
AIPERF=${AIPERF:-.venvs/aiperf/bin/aiperf}
PY=$(dirname "$AIPERF")/python
HF_CACHE=${HF_CACHE:-.venvs/rc/hf}
SERVER=${SERVER_BIN:-target/debug/examples/h200_server}
BENCH=${BENCH_BIN:-target/debug/servebench}
TRACE=tests/fixtures/mooncake_conversation_240.jsonl
OUT=tests/fixtures/aiperf-mooncake
RC=$(mktemp -d)
SPEED=10
mkdir -p "$OUT"
cp -r "$HF_CACHE" "$RC/hf"
# aiperf has no time scale for mooncake traces: the timestamps are scaled in a copy.
"$PY" -c "
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], 'w') as o:
    for l in f:
        d = json.loads(l); d['timestamp'] = d['timestamp'] * 0.1; o.write(json.dumps(d) + '\n')
" "$TRACE" "$RC/trace-x0.1.jsonl"

serve() { # $1: timeline file; sets PORT and SPID
  PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$SERVER" --serve "127.0.0.1:$PORT" --speed "$SPEED" --timeline "$1" > "$RC/server.log" 2>&1 &
  SPID=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && return; sleep 0.1; done
  echo "server did not start" >&2; exit 1
}
stop() { kill -TERM "$SPID"; wait "$SPID" || true; }

serve "$RC/timeline-servebench.jsonl"
"$BENCH" bench --quiet --target "http://127.0.0.1:$PORT" --endpoint chat \
  --dataset-name mooncake --dataset-path "$TRACE" --time-scale 0.1 \
  --output "$RC/servebench-run.json" > "$RC/servebench.txt"
stop

serve "$RC/timeline-aiperf.jsonl"
(cd "$RC" && env -u HF_HUB_OFFLINE HF_HOME="$RC/hf" HF_HUB_OFFLINE=1 "$AIPERF" profile \
  --model Qwen/Qwen3.5-35B-A3B --url "http://127.0.0.1:$PORT" --endpoint-type chat --streaming \
  --use-server-token-count --input-file "$RC/trace-x0.1.jsonl" \
  --custom-dataset-type mooncake_trace --fixed-schedule --random-seed 42 \
  --artifact-dir "$RC/aiperf" --ui-type none > "$RC/aiperf.log" 2>&1)
stop

cp "$RC/aiperf/profile_export.jsonl" "$OUT/profile_export.jsonl"
cp "$RC/aiperf/profile_export_aiperf.json" "$OUT/profile_export_aiperf.json"
for c in servebench aiperf; do
  "$PY" -c "
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], 'w') as o:
    for l in f:
        d = json.loads(l)
        o.write(json.dumps({k: d.get(k) for k in ['request_id', 'arrival_s', 'arrival_unix_s',
            'prompt_tokens', 'output_tokens', 'outcome']}) + '\n')
" "$RC/timeline-$c.jsonl" "$OUT/timeline-$c.jsonl"
done
"$BENCH" report "$RC/servebench-run.json" > "$OUT/servebench-report.txt"
echo "fixtures in $OUT (scratch: $RC)"
