#!/usr/bin/env python3
"""Reads a `servebench export --format parquet` file with pyarrow, a real consumer, and
recomputes one figure from its rows: the mean TTFT of the successful requests, which must
equal the mean TTFT the run recorded (the file's `servebench.run` metadata, vLLM's
convention). Prints both; exits 1 when they differ.

    python3 scripts/check_parquet.py RUN.parquet
"""
import json
import sys

import pyarrow.parquet as pq


def main(path: str) -> int:
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"servebench.run"])
    rows = table.to_pydict()
    ttfts = [
        t
        for t, outcome in zip(rows["ttft_ms"], rows["outcome"])
        if outcome == "success" and t is not None
    ]
    chunks = sum(len(c) for c in rows["chunk_offsets_ms"])
    recomputed = sum(ttfts) / len(ttfts)
    recorded = meta["result"]["ttft"]["mean"]
    print(
        f"{table.num_rows} rows, {chunks} chunk times; mean TTFT recomputed by pyarrow "
        f"{recomputed:.6f} ms, recorded {recorded:.6f} ms"
    )
    if abs(recomputed - recorded) > 1e-9 * abs(recorded):
        print("they differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
