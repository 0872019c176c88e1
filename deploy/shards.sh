#!/usr/bin/env bash
# Run one logical benchmark as N `servebench bench` processes on this host, started together
# at a barrier, then merge their run files into one:
#
#   deploy/shards.sh N OUTDIR [bench flags…]
#   deploy/shards.sh 4 runs/tp4 --target http://127.0.0.1:8000 --profile throughput
#
# writes OUTDIR/shard-K.json for K = 1..N and OUTDIR/merged.json, prints the merged report.
# Each shard's progress and lints go to OUTDIR/shard-K.log. Ctrl-C (or any failing shard)
# stops every shard. SERVEBENCH (default: servebench on PATH) picks the binary.
#
# Several hosts: run the same bench command on each with its own --shard K/N and one common
# --start-at time (or a barrier folder on a shared file system), copy the run files to one
# place and merge them (see deploy/README.md).
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
n=$1
out=$2
shift 2
bin=${SERVEBENCH:-servebench}
case $n in
'' | *[!0-9]* | 0) echo "shards.sh: N must be a whole number >= 1, got '$n'" >&2; exit 2 ;;
esac
mkdir -p "$out"
barrier="$out/barrier-$$-$(date +%s)"
pids=()
stop() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
}
trap 'stop; exit 130' INT TERM
for k in $(seq 1 "$n"); do
    "$bin" bench "$@" --quiet --shard "$k/$n" --start-at "barrier:$barrier" \
        --output "$out/shard-$k.json" >"$out/shard-$k.txt" 2>"$out/shard-$k.log" &
    pids+=("$!")
done
# The first shard to fail stops the others (they would wait at the barrier for it).
failed=0
for _ in $(seq 1 "$n"); do
    if ! wait -n; then
        failed=1
        break
    fi
done
trap - INT TERM
if [ "$failed" != 0 ]; then
    stop
    for k in $(seq 1 "$n"); do
        echo "shards.sh: shard $k/$n (log $out/shard-$k.log):" >&2
        tail -n 3 "$out/shard-$k.log" >&2
    done
    rm -rf "$barrier"
    exit 1
fi
rm -rf "$barrier"
files=()
for k in $(seq 1 "$n"); do
    files+=("$out/shard-$k.json")
done
exec "$bin" merge "${files[@]}" --out "$out/merged.json"
