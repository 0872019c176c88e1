#!/usr/bin/env bash
# Regenerates tests/fixtures/accuracy-clients/: one example-server session with --timeline,
# against which servebench, aiperf 0.13.0, `vllm bench serve` 0.33.0 and guidellm 0.8.1 each
# ran once, one after the other; the server's timeline written on SIGTERM.
#
# Needs the clients in venvs (tests/fixtures/README.md):
#   VENVS=/path/with/{aiperf,vllm,guidellm}/bin   (default /work/venvs)
#   RC=/scratch/dir holding tok/minilm and the fake HF cache hf/ (default $VENVS/rc)
# Load: synthetic prompts of 128 tokens, 32 output tokens, concurrency 4, streaming chat;
# servebench 20 requests, aiperf 16, vLLM 16 (its request-id prefix left random: the test
# finds it in the timeline), guidellm 12; seed 42; server at --speed 10.
# Without SERVER_BIN/SERVEBENCH the debug binaries are built first.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENVS=${VENVS:-/work/venvs}
RC=${RC:-$VENVS/rc}
PORT=${PORT:-18434}
OUT=$ROOT/tests/fixtures/accuracy-clients
MODEL=Qwen/Qwen3.5-35B-A3B
URL=http://127.0.0.1:$PORT
WORK=$(mktemp -d)
cd "$ROOT"
if [ -z "${SERVER_BIN:-}" ] || [ -z "${SERVEBENCH:-}" ]; then
  cargo build --example h200_server --bin servebench
fi
SERVER_BIN=$(realpath "${SERVER_BIN:-$ROOT/target/debug/examples/h200_server}")
SERVEBENCH=$(realpath "${SERVEBENCH:-$ROOT/target/debug/servebench}")
if curl -sf $URL/v1/models > /dev/null 2>&1; then
  echo "port $PORT is taken: set PORT" >&2; exit 1
fi
"$SERVER_BIN" --serve 127.0.0.1:$PORT --speed 10 --timeline "$WORK/timeline.jsonl" > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf $URL/v1/models > /dev/null && break; sleep 0.1; done

cd "$WORK"
"$SERVEBENCH" bench --target $URL --endpoint chat --input-tokens 128 --output-tokens 32 \
  --max-requests 20 --max-concurrency 4 --output servebench-run.json > servebench-console.txt 2>&1
HF_HOME=$RC/hf HF_HUB_OFFLINE=1 "$VENVS/aiperf/bin/aiperf" profile \
  --model $MODEL --url $URL --endpoint-type chat --streaming \
  --use-server-token-count \
  --synthetic-input-tokens-mean 128 --synthetic-input-tokens-stddev 0 \
  --output-tokens-mean 32 --output-tokens-stddev 0 \
  --concurrency 4 --request-count 16 --random-seed 42 \
  --artifact-dir art --ui-type none > aiperf.txt 2>&1
HF_HUB_OFFLINE=1 "$VENVS/vllm/bin/vllm" bench serve \
  --backend openai-chat --base-url $URL --endpoint /v1/chat/completions \
  --model $MODEL --tokenizer "$RC/tok/minilm" \
  --dataset-name random --random-input-len 128 --random-output-len 32 \
  --num-prompts 16 --max-concurrency 4 --seed 42 \
  --save-result --save-detailed --result-dir . --result-filename vllm-result.json \
  > vllm-console.txt 2>&1
HF_HUB_OFFLINE=1 "$VENVS/guidellm/bin/guidellm" run \
  --backend kind=openai_http,target=$URL,model=$MODEL \
  --tokenizer kind=hf_auto,model="$RC/tok/minilm" \
  --profile kind=concurrent,streams=4 \
  --constraint kind=max_requests,count=12 \
  --seed kind=static,value=42 \
  --data kind=synthetic_text,prompt_tokens=128,output_tokens=32 \
  --output kind=json,path=guidellm.json --output kind=console \
  --disable-progress > guidellm-console.txt 2>&1
kill -TERM $SERVER
wait $SERVER || true
mkdir -p "$OUT/aiperf"
cp timeline.jsonl servebench-run.json servebench-console.txt vllm-result.json vllm-console.txt \
  guidellm.json guidellm-console.txt "$OUT/"
cp art/profile_export.jsonl art/profile_export_aiperf.json art/profile_export_console.txt "$OUT/aiperf/"
echo "wrote $OUT"
