#!/usr/bin/env bash
# Runs every `guidellm run` command form servebench prints (`servebench profiles NAME
# --guidellm TARGET TOKENIZER --syntax run [--max-concurrency N]`) through the real guidellm
# against the example server, with a tiny request count, and checks that guidellm accepts it
# and sends the requests (exit 0, a benchmark with requests in its JSON output). Also checks that the form servebench used to print for a
# concurrency cap (`--constraint kind=max_concurrency,count=N`) is rejected, so the test that
# pins the accepted forms (tests/guidellm_commands.rs) pins something real.
#
# Needs guidellm 0.8.1 in a venv and an offline tokenizer (how to make them:
# tests/fixtures/README.md):
#   VENVS=/dir/with/guidellm/bin   (default .venvs in the repository root)
#   RC=/dir/holding/tok/minilm     (default $VENVS/rc)
# Optional: SERVER_BIN (a built h200_server), SB_BIN (a built servebench), PORT, PRESETS.
# `guidellm benchmark` (the --syntax benchmark form, guidellm <= 0.7) no longer exists in
# 0.8.1 and is not run here.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VENVS=${VENVS:-$ROOT/.venvs}
RC=${RC:-$VENVS/rc}
PORT=${PORT:-18533}
GUIDELLM=$VENVS/guidellm/bin/guidellm
TOK=$RC/tok/minilm
WORK=$(mktemp -d)
cd "$ROOT"
if [ -z "${SERVER_BIN:-}" ] || [ -z "${SB_BIN:-}" ]; then
  cargo build --quiet --example h200_server --bin servebench
  SERVER_BIN=${SERVER_BIN:-target/debug/examples/h200_server}
  SB_BIN=${SB_BIN:-target/debug/servebench}
fi
"$GUIDELLM" --version
"$SERVER_BIN" --serve 127.0.0.1:$PORT --speed 10 --delta content > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true; wait $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null && break; sleep 0.1; done

export HF_HUB_OFFLINE=1
pass=0; fail=0
run_form() { # name, cap ("" for none)
  local name=$1 cap=$2 out=$WORK/$1-${2:-nocap}
  mkdir -p "$out"
  local cmd
  cmd=$("$SB_BIN" profiles "$name" --guidellm http://127.0.0.1:$PORT "$TOK" --syntax run \
        ${cap:+--max-concurrency $cap} | sed -n '/^guidellm run/,$p')
  # A tiny run: 3 requests; keep everything else exactly as printed.
  cmd=$(printf '%s' "$cmd" | sed -E 's/kind=max_requests,count=[0-9]+/kind=max_requests,count=3/')
  cmd="${cmd/#guidellm/$GUIDELLM} \\
  --output kind=json,path=$out/benchmarks.json --disable-progress"
  echo "--- $name cap=${cap:-none}"
  printf '%s\n' "$cmd" | sed -n '/--profile/p'
  if (cd "$out" && bash -c "$cmd" > "$out/log.txt" 2>&1) \
     && python3 -c "import json,sys; b=json.load(open(sys.argv[1]))['benchmarks'][0]; \
t=b['metrics']['request_totals']; print('requests:', t); sys.exit(0 if t['total']>=1 else 1)" \
        "$out/benchmarks.json"; then
    pass=$((pass+1))
  else
    echo "FAILED: $name cap=${cap:-none}"; tail -5 "$out/log.txt"; fail=$((fail+1))
  fi
}
# ShareGPT needs the dataset file (not available offline); the other presets are synthetic.
# The forms differ only in the --profile line: both on one preset, the capped one on all.
# (long-context's 32000-token prompts exceed the server's context with the MiniLM
# tokenizer's prompts: guidellm accepts the command and records the 400 errors.)
# PRESETS limits the run (default: all four); each guidellm run takes 1–2 min on 2 cores.
PRESETS=${PRESETS:-throughput long-context generation-heavy latency}
case " $PRESETS " in *" throughput "*) run_form throughput "" ;; esac
for name in $PRESETS; do run_form "$name" 8; done

echo "--- the old form must be rejected"
if "$GUIDELLM" run --backend kind=openai_http,target=http://127.0.0.1:$PORT \
     --tokenizer kind=hf_auto,model="$TOK" --profile kind=constant,rate=10 \
     --constraint kind=max_requests,count=2 --constraint kind=max_concurrency,count=8 \
     --data kind=synthetic_text,prompt_tokens=16,output_tokens=4 --disable-progress \
     > "$WORK/old.txt" 2>&1; then
  echo "FAILED: guidellm accepted --constraint kind=max_concurrency"; fail=$((fail+1))
else
  grep -o "invalid kind 'max_concurrency'[^\"]*" "$WORK/old.txt" | head -1 || tail -3 "$WORK/old.txt"
  pass=$((pass+1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
