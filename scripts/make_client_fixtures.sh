#!/usr/bin/env bash
# Regenerates the real-client fixtures under tests/fixtures/{aiperf,guidellm-0.8.1,vllm-0.33,sglang-0.5.23}
# by running each client against the example server (h200_server --speed 10).
#
# Needs the clients in venvs (how to make them: tests/fixtures/README.md):
#   VENVS=/path/with/{aiperf,guidellm,vllm,sglang}/bin   (default .venvs in the repository root)
#   RC=/scratch/dir holding tok/minilm and the fake HF cache hf/ (default $VENVS/rc)
# Usage: scripts/make_client_fixtures.sh [aiperf] [guidellm] [vllm] [sglang]   (default: all)
# Load everywhere: synthetic prompts of 256 tokens, 64 output tokens, 40 requests at concurrency 8
# (guidellm: 20 requests, its files are larger).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENVS=${VENVS:-$ROOT/.venvs}
RC=${RC:-$VENVS/rc}
PORT=${PORT:-18431}
OUT=$ROOT/tests/fixtures
MODEL=Qwen/Qwen3.5-35B-A3B
N=40; C=8; ISL=256; OSL=64
# guidellm's JSON/YAML hold every request's details (~8 KB each): fewer requests.
GN=20
TOOLS=${*:-aiperf guidellm vllm sglang}
WORK=$(mktemp -d)

cd "$ROOT"
# SERVER_BIN: an already built h200_server (default: build the release one).
if [ -z "${SERVER_BIN:-}" ]; then
  cargo build --release --example h200_server
  SERVER_BIN=target/release/examples/h200_server
fi
"$SERVER_BIN" --serve 127.0.0.1:$PORT --speed 10 > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null && break; sleep 0.1; done

for tool in $TOOLS; do
  mkdir -p "$WORK/$tool" && cd "$WORK/$tool"
  case $tool in
  aiperf)
    # Fake HF cache + the server's token counts (real-clients.md §5, command B).
    HF_HOME=$RC/hf HF_HUB_OFFLINE=1 "$VENVS/aiperf/bin/aiperf" profile \
      --model $MODEL --url http://127.0.0.1:$PORT --endpoint-type chat --streaming \
      --use-server-token-count \
      --synthetic-input-tokens-mean $ISL --synthetic-input-tokens-stddev 0 \
      --output-tokens-mean $OSL --output-tokens-stddev 0 \
      --concurrency $C --request-count $N --random-seed 42 \
      --artifact-dir art --ui-type none > console.txt 2>&1
    mkdir -p "$OUT/aiperf"
    cp art/profile_export.jsonl art/profile_export_aiperf.json art/profile_export_aiperf.csv "$OUT/aiperf/"
    cp art/profile_export_console.txt "$OUT/aiperf/" 2>/dev/null || true
    ;;
  guidellm)
    HF_HUB_OFFLINE=1 "$VENVS/guidellm/bin/guidellm" run \
      --backend kind=openai_http,target=http://127.0.0.1:$PORT,model=$MODEL \
      --tokenizer kind=hf_auto,model=$RC/tok/minilm \
      --profile kind=concurrent,streams=$C \
      --constraint kind=max_requests,count=$GN \
      --seed kind=static,value=42 \
      --data kind=synthetic_text,prompt_tokens=$ISL,output_tokens=$OSL \
      --output kind=json,path=benchmarks.json --output kind=yaml,path=benchmarks.yaml \
      --output kind=csv,path=benchmarks.csv --output kind=console \
      --disable-progress > console.txt 2>&1
    mkdir -p "$OUT/guidellm-0.8.1"
    cp benchmarks.json benchmarks.yaml benchmarks.csv console.txt "$OUT/guidellm-0.8.1/"
    ;;
  vllm)
    HF_HUB_OFFLINE=1 "$VENVS/vllm/bin/vllm" bench serve \
      --backend openai-chat --base-url http://127.0.0.1:$PORT --endpoint /v1/chat/completions \
      --model $MODEL --tokenizer $RC/tok/minilm \
      --dataset-name random --random-input-len $ISL --random-output-len $OSL \
      --num-prompts $N --max-concurrency $C --seed 42 \
      --save-result --save-detailed --result-dir . --result-filename vllm.json > console.txt 2>&1
    mkdir -p "$OUT/vllm-0.33"
    cp vllm.json "$OUT/vllm-0.33/result.json"; cp console.txt "$OUT/vllm-0.33/console.txt"
    ;;
  sglang)
    HF_HUB_OFFLINE=1 "$VENVS/sglang/bin/python" -m sglang.bench_serving \
      --backend vllm-chat --base-url http://127.0.0.1:$PORT \
      --model $MODEL --tokenizer $RC/tok/minilm \
      --dataset-name random-ids --random-input-len $ISL --random-output-len $OSL --random-range-ratio 1.0 \
      --num-prompts $N --max-concurrency $C --seed 42 \
      --output-file sglang.jsonl --output-details > console.txt 2>&1
    # A second run appended to the same file without --output-details (no records).
    HF_HUB_OFFLINE=1 "$VENVS/sglang/bin/python" -m sglang.bench_serving \
      --backend vllm-chat --base-url http://127.0.0.1:$PORT \
      --model $MODEL --tokenizer $RC/tok/minilm \
      --dataset-name random-ids --random-input-len $ISL --random-output-len $OSL --random-range-ratio 1.0 \
      --num-prompts $N --max-concurrency $C --seed 43 \
      --output-file sglang.jsonl >> console.txt 2>&1
    mkdir -p "$OUT/sglang-0.5.23"
    cp sglang.jsonl "$OUT/sglang-0.5.23/results.jsonl"; cp console.txt "$OUT/sglang-0.5.23/console.txt"
    ;;
  esac
  echo "$tool: done"
  cd "$ROOT"
done
