#!/usr/bin/env bash
# Regenerates tests/fixtures/accuracy/: one example-server session with --timeline, against
# which aiperf and guidellm each ran once; the server's timeline written on SIGTERM.
#
# Needs the clients in venvs (how to make them: tests/fixtures/README.md):
#   VENVS=/path/with/{aiperf,guidellm}/bin   (default .venvs in the repository root)
#   RC=/scratch/dir holding tok/minilm and the fake HF cache hf/ (default $VENVS/rc)
# Load: synthetic prompts of 128 tokens, 32 output tokens, concurrency 4, streaming chat;
# aiperf 16 requests, guidellm 12, seed 42, server at --speed 10.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENVS=${VENVS:-$ROOT/.venvs}
RC=${RC:-$VENVS/rc}
PORT=${PORT:-18432}
OUT=$ROOT/tests/fixtures/accuracy
MODEL=Qwen/Qwen3.5-35B-A3B
WORK=$(mktemp -d)
cd "$ROOT"
if [ -z "${SERVER_BIN:-}" ]; then
  cargo build --release --example h200_server
  SERVER_BIN=target/release/examples/h200_server
fi
"$SERVER_BIN" --serve 127.0.0.1:$PORT --speed 10 --timeline "$WORK/timeline.jsonl" > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null && break; sleep 0.1; done

cd "$WORK"
HF_HOME=$RC/hf HF_HUB_OFFLINE=1 "$VENVS/aiperf/bin/aiperf" profile \
  --model $MODEL --url http://127.0.0.1:$PORT --endpoint-type chat --streaming \
  --use-server-token-count \
  --synthetic-input-tokens-mean 128 --synthetic-input-tokens-stddev 0 \
  --output-tokens-mean 32 --output-tokens-stddev 0 \
  --concurrency 4 --request-count 16 --random-seed 42 \
  --artifact-dir art --ui-type none > aiperf.txt 2>&1
HF_HUB_OFFLINE=1 "$VENVS/guidellm/bin/guidellm" run \
  --backend kind=openai_http,target=http://127.0.0.1:$PORT,model=$MODEL \
  --tokenizer kind=hf_auto,model=$RC/tok/minilm \
  --profile kind=concurrent,streams=4 \
  --constraint kind=max_requests,count=12 \
  --seed kind=static,value=42 \
  --data kind=synthetic_text,prompt_tokens=128,output_tokens=32 \
  --output kind=json,path=guidellm.json --disable-progress > guidellm.txt 2>&1
kill -TERM $SERVER
wait $SERVER || true
mkdir -p "$OUT"
cp timeline.jsonl "$OUT/timeline.jsonl"
cp art/profile_export.jsonl "$OUT/aiperf_profile_export.jsonl"
cp guidellm.json "$OUT/guidellm.json"
echo "wrote $OUT"
