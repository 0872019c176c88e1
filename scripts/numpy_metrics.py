#!/usr/bin/env python3
"""vLLM's `calculate_metrics` formulas in Python + numpy, on a run written by
`cargo run --release --example metrics_dataset -- --out DIR`, timed, and compared with the
Rust `servebench::metrics::compute` figures and time.

Written for servebench from vLLM 0.34's definitions (see src/metrics/mod.rs): successes only;
output_len = usage if non-zero else the client's token count; TPOT = (E2EL - TTFT)/(output_len - 1)
for output_len > 1; ITL = every chunk gap; np.mean/np.std/np.median/np.percentile; peak
output = max chunks per 1-second bucket; peak concurrency = inclusive per-second buckets.

Two implementations:
  vectorized  whole-array numpy (the fastest honest numpy version)
  loop        the shape of vLLM's own code: a Python loop over per-request outputs that
              concatenates ITL lists and fills the 1-second buckets token by token, then
              numpy statistics (what `vllm bench serve` actually runs). Memory-hungry:
              use it on the small dataset.

usage: numpy_metrics.py DIR [--mode vectorized|loop|both] [--rust-json FILE] [--repeat N]
"""

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np


def load(d):
    d = Path(d)
    meta = json.loads((d / "meta.json").read_text())
    a = lambda name, dt: np.fromfile(d / name, dtype=dt)
    return dict(
        meta=meta,
        sent=a("sent_ns.u64", "<u8").astype(np.int64),
        usage=a("usage_out.u32", "<u4").astype(np.int64),
        prompt=a("prompt.u32", "<u4").astype(np.int64),
        success=a("success.u8", "u1").astype(bool),
        off=a("chunk_offsets.u64", "<u8").astype(np.int64),
        at=a("chunk_at_ns.u64", "<u8").astype(np.int64),
        tokens=a("chunk_tokens.u32", "<u4").astype(np.int64),
    )


def summary(x, p=99.0):
    x = x if len(x) else np.zeros(1)
    return np.mean(x) * 1000, np.median(x) * 1000, np.std(x) * 1000, np.percentile(x, p) * 1000


def vectorized(D):
    sent, usage, prompt, ok, off, at, tok = (
        D["sent"], D["usage"], D["prompt"], D["success"], D["off"], D["at"], D["tokens"])
    counts = np.diff(off)
    succ = ok & (counts > 0)
    first = at[off[:-1][succ]]
    last = at[off[1:][succ] - 1]
    s_sent = sent[succ]
    ttft = (first - s_sent) / 1e9
    lat = (last - s_sent) / 1e9
    cs = np.concatenate(([0], np.cumsum(tok)))
    client = (cs[off[1:]] - cs[off[:-1]])[succ]
    out_len = np.where(usage[succ] > 0, usage[succ], client)
    multi = out_len > 1
    tpot = (lat[multi] - ttft[multi]) / (out_len[multi] - 1)
    chunk_req_ok = np.repeat(succ, counts)
    same_req = np.ones(len(at) - 1, dtype=bool) if len(at) else np.zeros(0, dtype=bool)
    same_req[off[1:-1] - 1] = False  # gap between the last chunk of one request and the next
    gap_ok = same_req & chunk_req_ok[1:]
    itl = np.diff(at)[gap_ok] / 1e9
    total_in = int(prompt[succ].sum())
    total_out = int(out_len.sum())
    # Peaks over 1-second buckets from the earliest successful send.
    min_start = s_sent.min()
    n_b = int(math.ceil((last.max() - min_start) / 1e9)) + 1
    b = (at[chunk_req_ok] - min_start) // 1_000_000_000
    tok_per_s = np.bincount(b[(b >= 0) & (b < n_b)], minlength=n_b)
    sb = (s_sent - min_start) // 1_000_000_000
    eb = (last - min_start) // 1_000_000_000
    conc = np.cumsum(np.bincount(sb, minlength=n_b + 1) - np.bincount(eb + 1, minlength=n_b + 1))[:n_b]
    ends = np.where(counts > 0, at[np.maximum(off[1:] - 1, 0)], sent)
    dur = (ends.max() - sent.min()) / 1e9
    return figures(int(succ.sum()), int((~succ).sum()), total_in, total_out, dur,
                   ttft, tpot, itl, lat, float(tok_per_s.max()), float(conc.max()))


def build_outputs(D):
    """Per-request outputs as vLLM's client holds them (not timed)."""
    sent, usage, prompt, ok, off, at, tok = (
        D["sent"], D["usage"], D["prompt"], D["success"], D["off"], D["at"], D["tokens"])
    outs = []
    for i in range(len(sent)):
        a, b = int(off[i]), int(off[i + 1])
        ts = (at[a:b] / 1e9).tolist()
        st = sent[i] / 1e9
        success = bool(ok[i]) and b > a
        outs.append(dict(
            success=success, start_time=st,
            ttft=(ts[0] - st) if success else 0.0,
            itl=[ts[j] - ts[j - 1] for j in range(1, len(ts))] if success else [],
            latency=(ts[-1] - st) if success else 0.0,
            output_tokens=int(usage[i]), client_tokens=int(tok[a:b].sum()),
            prompt_len=int(prompt[i]), end=(ts[-1] if b > a else st)))
    return outs


def loop(outs):
    """The structure of vLLM 0.34 calculate_metrics."""
    actual_output_lens, total_input, completed = [], 0, 0
    itls, tpots, ttfts, e2els = [], [], [], []
    for o in outs:
        if o["success"]:
            output_len = o["output_tokens"] or o["client_tokens"]
            actual_output_lens.append(output_len)
            total_input += o["prompt_len"]
            if output_len > 1:
                tpots.append((o["latency"] - o["ttft"]) / (output_len - 1))
            itls += o["itl"]
            ttfts.append(o["ttft"])
            e2els.append(o["latency"])
            completed += 1
        else:
            actual_output_lens.append(0)
    succ = [o for o in outs if o["success"]]
    min_start = min(o["start_time"] for o in succ)
    max_end = max(o["start_time"] + o["latency"] for o in succ)
    n = int(np.ceil(max_end - min_start)) + 1
    tokens_per_second = np.zeros(n)
    concurrent = np.zeros(n)
    for o in succ:
        token_times = [o["start_time"] + o["ttft"]]
        cur = token_times[0]
        for g in o["itl"]:
            cur += g
            token_times.append(cur)
        for t in token_times:
            sec = int(t - min_start)
            if 0 <= sec < n:
                tokens_per_second[sec] += 1
        s0 = int(o["start_time"] - min_start)
        s1 = int(o["start_time"] + o["latency"] - min_start)
        for sec in range(s0, s1 + 1):
            if 0 <= sec < n:
                concurrent[sec] += 1
    dur = max(o["end"] for o in outs) - min(o["start_time"] for o in outs)
    return figures(completed, len(outs) - completed, total_input, sum(actual_output_lens), dur,
                   np.array(ttfts), np.array(tpots), np.array(itls), np.array(e2els),
                   float(tokens_per_second.max()), float(concurrent.max()))


def figures(completed, failed, total_in, total_out, dur, ttft, tpot, itl, e2el, peak_tok, peak_conc):
    f = dict(completed=completed, failed=failed, total_input=total_in, total_output=total_out,
             duration_s=dur, max_output_tokens_per_s=peak_tok, max_concurrent_requests=peak_conc)
    for name, x in [("ttft", ttft), ("tpot", tpot), ("itl", itl), ("e2el", e2el)]:
        m, med, sd, p99 = summary(x)
        f.update({f"mean_{name}_ms": m, f"median_{name}_ms": med, f"std_{name}_ms": sd,
                  f"p99_{name}_ms": p99})
    return f


def compare(py, rust):
    worst = 0.0
    for k, v in rust.items():
        if v is None or k not in py:
            continue
        rel = abs(py[k] - v) / max(abs(v), 1e-300)
        worst = max(worst, rel)
        if rel > 1e-9:
            print(f"  MISMATCH {k}: numpy {py[k]!r} vs rust {v!r}")
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--mode", default="vectorized", choices=["vectorized", "loop", "both"])
    ap.add_argument("--rust-json", help="output of examples/metrics_dataset (same dataset)")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    D = load(args.dir)
    n_ev = D["meta"]["chunks"]
    rust = json.loads(Path(args.rust_json).read_text()) if args.rust_json else None
    print(f"dataset: {D['meta']['requests']} requests, {n_ev} chunk events, numpy {np.__version__}")
    modes = ["vectorized", "loop"] if args.mode == "both" else [args.mode]
    for mode in modes:
        if mode == "loop":
            outs = build_outputs(D)
        times, cpus = [], []
        for _ in range(args.repeat):
            t, c = time.perf_counter(), time.process_time()
            py = vectorized(D) if mode == "vectorized" else loop(outs)
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        best = min(times)
        print(f"{mode}: {best:.3f} s wall, {min(cpus):.3f} s CPU  ({n_ev / best / 1e6:.2f} M chunk events/s)")
        if rust:
            worst = compare(py, rust["figures"])
            rs = rust["compute_min_s"]
            rmed = statistics.median(rust.get("compute_s") or [rs])
            rc = min(rust.get("compute_cpu_s") or [float("nan")])
            print(f"  rust compute(): {rs:.3f} s wall ({n_ev / rs / 1e6:.1f} M events/s), {rc:.2f} s CPU; "
                  f"ratio numpy-{mode}/rust = {best / rs:.1f}x wall, {min(cpus) / rc:.1f}x CPU; "
                  f"figures agree to {worst:.1e} relative")
            print(f"  against the median of the {len(rust.get('compute_s') or [rs])} Rust runs "
                  f"({rmed:.3f} s): {best / rmed:.1f}x wall")


if __name__ == "__main__":
    main()
