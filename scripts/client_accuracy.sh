#!/usr/bin/env bash
# Measures how far each benchmark client's figures are from the example server's own
# timeline (`servebench accuracy`): servebench, guidellm 0.8.1 and aiperf 0.13.0, each against
# a fresh `h200_server --serve … --timeline FILE`, at every (speed, concurrency) given.
# Load: synthetic chat prompts of 1024 tokens, 128 output tokens, N requests (default 400).
#
# Needs the clients in venvs (how to make them: tests/fixtures/README.md):
#   VENVS=/path/with/{aiperf,guidellm}/bin   (default .venvs in the repository root)
#   RC=/scratch/dir holding tok/minilm and the fake HF cache hf/ (default $VENVS/rc)
# Usage: scripts/client_accuracy.sh [OUTDIR]
#   SPEEDS="1 10" CONCURRENCIES="64 256" CLIENTS="servebench guidellm aiperf" N=400
#   SERVER_ARGS="--handoff-window 0 --workers 2"   (extra h200_server flags)
# Writes OUTDIR/<speed>x-c<conc>-<client>/{timeline.jsonl,accuracy.json,time.txt,…} and
# OUTDIR/table.md (the table in benches/HISTORY.md). Without SERVEBENCH/SERVER_BIN the
# release binaries are built first.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENVS=${VENVS:-$ROOT/.venvs}
RC=${RC:-$VENVS/rc}
PORT=${PORT:-18433}
SPEEDS=${SPEEDS:-1 10}
CONCURRENCIES=${CONCURRENCIES:-64 256}
CLIENTS=${CLIENTS:-servebench guidellm aiperf}
N=${N:-400}
ISL=1024; OSL=128
MODEL=Qwen/Qwen3.5-35B-A3B
OUT=$(mkdir -p "${1:-$ROOT/target/client-accuracy}" && cd "${1:-$ROOT/target/client-accuracy}" && pwd)

cd "$ROOT"
if [ -z "${SERVEBENCH:-}" ] || [ -z "${SERVER_BIN:-}" ]; then
  cargo build --release --bin servebench --example h200_server
fi
SERVEBENCH=${SERVEBENCH:-$ROOT/target/release/servebench}
SERVER_BIN=${SERVER_BIN:-$ROOT/target/release/examples/h200_server}

SERVER=
cleanup() { if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi; }
trap cleanup EXIT

uptime > "$OUT/uptime-start.txt"
for speed in $SPEEDS; do
  for conc in $CONCURRENCIES; do
    for client in $CLIENTS; do
      D="$OUT/${speed}x-c${conc}-${client}"
      rm -rf "$D"; mkdir -p "$D"
      # shellcheck disable=SC2086 # SERVER_ARGS: extra server flags, word-split on purpose
      "$SERVER_BIN" --serve 127.0.0.1:$PORT --speed "$speed" --max-connections 4096 ${SERVER_ARGS:-} \
        --timeline "$D/timeline.jsonl" > "$D/server.log" 2>&1 &
      SERVER=$!
      for _ in $(seq 200); do curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null && break; sleep 0.1; done
      cd "$D"
      # /usr/bin/time -v: the client's CPU time and peak RSS (its whole process tree).
      T="/usr/bin/time -v -o $D/time.txt"
      case $client in
      servebench)
        $T "$SERVEBENCH" bench --quiet --target http://127.0.0.1:$PORT --endpoint chat \
          --input-tokens $ISL --output-tokens $OSL --max-requests "$N" \
          --max-concurrency "$conc" --output "$D/client.json" > client.txt 2>&1
        FILE=$D/client.json ;;
      guidellm)
        HF_HUB_OFFLINE=1 $T "$VENVS/guidellm/bin/guidellm" run \
          --backend kind=openai_http,target=http://127.0.0.1:$PORT,model=$MODEL \
          --tokenizer kind=hf_auto,model=$RC/tok/minilm \
          --profile kind=concurrent,streams="$conc" \
          --constraint kind=max_requests,count="$N" \
          --seed kind=static,value=42 \
          --data kind=synthetic_text,prompt_tokens=$ISL,output_tokens=$OSL \
          --output kind=json,path="$D/client.json" --disable-progress > client.txt 2>&1
        FILE=$D/client.json ;;
      aiperf)
        HF_HOME=$RC/hf HF_HUB_OFFLINE=1 $T "$VENVS/aiperf/bin/aiperf" profile \
          --model $MODEL --url http://127.0.0.1:$PORT --endpoint-type chat --streaming \
          --use-server-token-count \
          --synthetic-input-tokens-mean $ISL --synthetic-input-tokens-stddev 0 \
          --output-tokens-mean $OSL --output-tokens-stddev 0 \
          --concurrency "$conc" --request-count "$N" --random-seed 42 \
          --artifact-dir art --ui-type none > client.txt 2>&1
        FILE=$D/art/profile_export.jsonl ;;
      esac
      cd "$ROOT"
      kill -TERM "$SERVER"; wait "$SERVER" || true; SERVER=
      "$SERVEBENCH" accuracy --format json --truth "$D/timeline.jsonl" "$FILE" > "$D/accuracy.json"
      "$SERVEBENCH" accuracy --truth "$D/timeline.jsonl" "$FILE" > "$D/accuracy.txt"
      echo "speed $speed, concurrency $conc, $client: done"
    done
  done
done
uptime > "$OUT/uptime-end.txt"

python3 - "$OUT" <<'EOF'
import json, os, re, sys
out = sys.argv[1]
rows = []
for d in sorted(os.listdir(out)):
    p = os.path.join(out, d)
    m = re.match(r"(\d+)x-c(\d+)-(\w+)$", d)
    if not m or not os.path.exists(os.path.join(p, "accuracy.json")):
        continue
    speed, conc, client = int(m[1]), int(m[2]), m[3]
    a = json.load(open(os.path.join(p, "accuracy.json")))[0]
    t = open(os.path.join(p, "time.txt")).read()
    cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", t)[1]) for k in ("User", "System"))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t)[1]) / 1024
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", t)[1]
    def e(k, f):
        s = a.get(k)
        return "-" if not s else f"{s[f]:+.1f}"
    tp = a["throughput"]
    rows.append((speed, conc, ["servebench", "guidellm", "aiperf"].index(client) if client in ("servebench", "guidellm", "aiperf") else 9,
        f"| {speed} | {conc} | {client} | {a['matched']}/{a['requests']} | {e('ttft','median_ms')} / {e('ttft','p99_ms')} | "
        f"{e('ttft_server_late','median_ms')} / {e('ttft_after_release','median_ms')} / {e('ttft_after_write','median_ms')} | {e('ttft_send','median_ms')} / {e('ttft_send','p99_ms')} | {e('ttft_receive','median_ms')} / {e('ttft_receive','p99_ms')} | "
        f"{a['ttft']['truth_median_ms']:.1f} | {e('itl','median_ms')} / {e('itl','p99_ms')} | {e('e2e','median_ms')} / {e('e2e','p99_ms')} | "
        f"{tp['output_error_pct']:+.1f} | {tp['truth_output_tok_per_s']:.0f} | {tp['truth_peak_in_flight']} | {cpu:.1f} | {rss:.0f} | {wall} |"))
rows.sort()
head = ("| speed | conc. | client | matched | TTFT err p50 / p99 (ms) | of which server / rest / after write, p50 (ms) | send side p50 / p99 (ms) | receive side p50 / p99 (ms) | server TTFT p50 (ms) | ITL err p50 / p99 (ms) | "
        "E2E err p50 / p99 (ms) | reported tok/s vs server (%) | server tok/s | peak in flight at server | client CPU-s | client max RSS (MiB) | wall |")
sep = "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"
with open(os.path.join(out, "table.md"), "w") as f:
    f.write(head + "\n" + sep + "\n" + "\n".join(r[3] for r in rows) + "\n")
print(open(os.path.join(out, "table.md")).read())
EOF
