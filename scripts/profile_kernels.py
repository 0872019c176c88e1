#!/usr/bin/env python3
"""Measure the operators servebench's step model sums, on one GPU, with PyTorch only.

Reads the operator list the simulator needs for a model (the JSON written by
`servebench simulate --model MODEL --dump-operators`, or one of
src/sim/data/operators/*.json) and writes a kernel table in the simulator's format
(src/sim/data/kernels/*.json, format `servebench-kernels/1`): for every operator, its
median time in microseconds at a grid of sizes (tokens, batch, KV tokens, attention pairs
or sampled rows, as the operator's `axis` says).

Method: medians of several repetitions timed with CUDA events; short operations are
captured as a CUDA graph of many calls (vLLM replays decode steps as CUDA graphs, so the
graph-replay time is the one that counts); weights and KV are rotated through several
copies (at least --rotate-mb in all) so they come from HBM, not L2; random data; uniform
random top-k routing for the routed experts. Kernels are PyTorch's (cuBLAS GEMMs,
`torch._grouped_mm` / `torch._scaled_grouped_mm` for the experts, `scaled_dot_product_attention`
with GQA for attention); the Gated DeltaNet and short-convolution kernels are
flash-linear-attention's when `fla` is importable and are skipped otherwise. Elementwise
operators vLLM fuses into one kernel (fused add + RMSNorm, SiLU·mul, rotary embedding) are
measured as one PyTorch elementwise kernel moving the same bytes.

The run is bounded: --budget-s seconds of measuring, after which the remaining sizes are
listed as skipped. The table is written after every operator, so a run cut short still
leaves what it measured.

Usage:
  python3 scripts/profile_kernels.py --operators src/sim/data/operators/qwen3.5-9b.json \
      --operators src/sim/data/operators/qwen3.5-35b-a3b.json --out h200-profile.json
  python3 scripts/profile_kernels.py --operators OPS.json --dry-run   # plan only, no GPU
  python3 scripts/profile_kernels.py --operators OPS.json --device cpu --tiny  # smoke test
"""

import argparse
import datetime
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

FORMAT = "servebench-kernels/1"
OPERATORS_FORMAT = "servebench-operators/1"

# Sizes measured per axis (the simulator interpolates between them, log-log).
GRID = {
    "tokens": [1, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192],
    "batch": [1, 8, 32, 64, 128, 256, 512],
    "rows": [1, 8, 64, 256, 512],
    # Decode attention: (batch, context per sequence); the axis is batch * context.
    "kv_tokens": [(1, 1024), (8, 1024), (32, 1024), (64, 2048), (64, 4096), (128, 2048),
                  (256, 1024), (256, 4096), (512, 2048)],
    # Causal prefill of one sequence of L tokens; the axis is L (L + 1) / 2 pairs.
    "pairs": [256, 1024, 2048, 4096, 8192, 16384],
}
TINY_GRID = {"tokens": [1, 8], "batch": [1, 4], "rows": [1, 2],
             "kv_tokens": [(1, 64), (2, 64)], "pairs": [16, 64]}

# Operator keys that identify an operator (everything but the bookkeeping fields).
BOOKKEEPING = {"name", "axis", "count", "per"}


def key_of(op):
    return {k: v for k, v in op.items() if k not in BOOKKEEPING}


def load_operators(paths):
    """The union of the operator lists, deduplicated by key, in first-seen order."""
    seen, ops, models = set(), [], []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("format") != OPERATORS_FORMAT:
            sys.exit(f"{path}: format is {doc.get('format')!r}, expected {OPERATORS_FORMAT!r}")
        models.append(doc.get("model", path))
        for i, op in enumerate(doc.get("forward", []) + doc.get("mtp_draft", []) + doc.get("operators", [])):
            if "op" not in op or "axis" not in op:
                sys.exit(f"{path}: operators[{i}]: needs `op` and `axis`")
            if op["axis"] not in GRID:
                sys.exit(f"{path}: operators[{i}].axis: unknown axis {op['axis']!r}")
            k = json.dumps(key_of(op), sort_keys=True)
            if k not in seen:
                seen.add(k)
                ops.append(op)
    return models, ops


def write_atomic(path, doc):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".profile-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def nvidia_smi():
    try:
        return subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,"
             "clocks.max.memory,power.limit,clocks.sm,clocks.mem,temperature.gpu",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001 - provenance only
        return f"unavailable: {e}"


class Timer:
    """Median per-call seconds of fn(i), i = 0, 1, ... (i picks the rotating copy)."""

    def __init__(self, torch, device, graphs, reps):
        self.torch, self.device, self.graphs, self.reps = torch, device, graphs, reps

    def sync(self):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def wall(self, fn, inner):
        t = []
        for r in range(self.reps):
            self.sync()
            t0 = time.perf_counter()
            for i in range(inner):
                fn(i)
            self.sync()
            t.append((time.perf_counter() - t0) / inner)
        return statistics.median(t), "wall"

    def events(self, run, inner):
        torch = self.torch
        t = []
        for _ in range(self.reps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            run()
            b.record()
            b.synchronize()
            t.append(a.elapsed_time(b) / 1000.0 / inner)
        return statistics.median(t)

    def time(self, fn, copies):
        """(median seconds per call, mode) with at least `copies` calls per replay."""
        if self.device != "cuda":
            return self.wall(fn, max(1, min(copies, 4)))
        torch = self.torch
        for i in range(3):  # warm-up: autotuning, lazy init, allocations
            fn(i)
        torch.cuda.synchronize()
        est = self.events(lambda: [fn(i) for i in range(3)], 3)
        # Enough calls per replay to cover the copies and ~1 ms, at most 256.
        inner = max(copies, min(256, int(1e-3 / max(est, 1e-7)) + 1))
        if not self.graphs or est * inner > 0.05:
            inner = max(1, min(copies, int(0.05 / max(est, 1e-7))))
            return self.events(lambda: [fn(i) for i in range(inner)], inner), f"eager x{inner}"
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for i in range(inner):
                fn(i)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(inner):
                fn(i)
        g.replay()
        torch.cuda.synchronize()
        return self.events(g.replay, inner), f"graph x{inner}"


class Profiler:
    def __init__(self, args):
        import torch  # noqa: PLC0415 - only when measuring
        self.torch = torch
        self.args = args
        self.device = args.device
        self.tiny = args.tiny
        self.timer = Timer(torch, self.device, graphs=self.device == "cuda",
                           reps=3 if args.tiny else args.reps)
        self.rotate_bytes = (1 if args.tiny else args.rotate_mb) * 1e6
        self.gen = torch.Generator(device=self.device).manual_seed(0)
        try:
            import fla  # noqa: F401,PLC0415
            self.fla = getattr(fla, "__version__", "unknown")
        except Exception:  # noqa: BLE001
            self.fla = None

    # -- helpers ---------------------------------------------------------------------
    def dim(self, n):
        """Model dimensions shrink 64x in --tiny mode (multiples of 16 kept)."""
        if not self.tiny:
            return int(n)
        return max(16, (int(n) // 64) // 16 * 16)

    def randn(self, *shape, dtype=None):
        t = self.torch
        return t.randn(*shape, device=self.device, dtype=dtype or t.bfloat16, generator=self.gen)

    def copies_for(self, nbytes, cap=64):
        return max(1, min(cap, math.ceil(self.rotate_bytes / max(nbytes, 1))))

    def fp8(self):
        return getattr(self.torch, "float8_e4m3fn", None)

    # -- operators -------------------------------------------------------------------
    def gemm(self, op, m):
        t = self.torch
        k, n = self.dim(op["k"]), self.dim(op["n"])
        if op.get("dtype", "bf16") == "bf16" or self.device != "cuda":
            c = self.copies_for(k * n * 2)
            ws = [self.randn(n, k) for _ in range(c)]
            x = self.randn(m, k)
            return self.timer.time(lambda i: t.mm(x, ws[i % c].t()), c), "torch.mm bf16 (cuBLAS)"
        f8 = self.fp8()
        c = self.copies_for(k * n)
        ws = [self.randn(n, k).to(f8) for _ in range(c)]
        mp = max(16, (m + 15) // 16 * 16)  # _scaled_mm wants multiples of 16
        x = self.randn(mp, k).to(f8)
        one = t.ones((), device=self.device, dtype=t.float32)
        fn = lambda i: t._scaled_mm(x, ws[i % c].t(), scale_a=one, scale_b=one,  # noqa: E731
                                    out_dtype=t.bfloat16)
        return self.timer.time(fn, c), "torch._scaled_mm fp8 e4m3, per-tensor scales"

    def moe(self, op, tokens):
        t = self.torch
        h, inter = self.dim(op["hidden"]), self.dim(op["intermediate"])
        e, k = op["experts"], op["top_k"]
        if self.tiny:
            e, k = min(e, 16), min(k, 2)
        fp8 = op.get("dtype", "bf16") == "fp8" and self.device == "cuda"
        layer = e * 3 * h * inter * (1 if fp8 else 2)
        c = self.copies_for(layer, cap=8)
        scores = t.rand(tokens, e, device=self.device, generator=self.gen)
        idx = scores.topk(k, dim=1).indices.flatten()
        counts = t.bincount(idx, minlength=e)
        offs = t.cumsum(counts, 0).to(t.int32)
        rows = tokens * k
        a = self.randn(rows, h)
        if self.device != "cuda" or not hasattr(t, "_grouped_mm"):
            # Reference loop (CPU smoke test): one mm per touched expert.
            w1 = [self.randn(e, 2 * inter, h) for _ in range(c)]
            w2 = [self.randn(e, h, inter) for _ in range(c)]
            bounds = [0] + offs.tolist()

            def loop(i):
                for j in range(e):
                    lo, hi = bounds[j], bounds[j + 1]
                    if hi > lo:
                        g, u = (a[lo:hi] @ w1[i % c][j].t()).chunk(2, dim=1)
                        (t.nn.functional.silu(g) * u) @ w2[i % c][j].t()
            return self.timer.time(loop, c), "per-expert torch.mm loop (CPU smoke test)"
        if not fp8:
            # [E, N, K] contiguous, viewed [E, K, N] column-major, as grouped_mm wants.
            w1 = [self.randn(e, 2 * inter, h).transpose(1, 2) for _ in range(c)]
            w2 = [self.randn(e, h, inter).transpose(1, 2) for _ in range(c)]

            def run(i):
                y = t._grouped_mm(a, w1[i % c], offs=offs)
                g, u = y.chunk(2, dim=1)
                z = t.nn.functional.silu(g) * u
                return t._grouped_mm(z, w2[i % c], offs=offs)
            return self.timer.time(run, c), "torch._grouped_mm bf16 gate_up + silu*mul + down"
        f8 = self.fp8()
        w1 = [self.randn(e, 2 * inter, h).to(f8).transpose(1, 2) for _ in range(c)]
        w2 = [self.randn(e, h, inter).to(f8).transpose(1, 2) for _ in range(c)]
        a8 = a.to(f8)
        sa = t.ones(rows, device=self.device, dtype=t.float32)
        s1 = t.ones(e, 2 * inter, device=self.device, dtype=t.float32)
        s2 = t.ones(e, h, device=self.device, dtype=t.float32)

        def run8(i):
            y = t._scaled_grouped_mm(a8, w1[i % c], sa, s1, offs=offs, out_dtype=t.bfloat16,
                                     use_fast_accum=True)
            g, u = y.chunk(2, dim=1)
            z = (t.nn.functional.silu(g) * u).to(f8)
            return t._scaled_grouped_mm(z, w2[i % c], sa, s2, offs=offs, out_dtype=t.bfloat16,
                                        use_fast_accum=True)
        return self.timer.time(run8, c), ("torch._scaled_grouped_mm fp8 e4m3 row-wise scales "
                                         "gate_up + silu*mul + down")

    def elementwise(self, op, tokens):
        """One elementwise kernel moving the bytes of vLLM's fused kernel."""
        t = self.torch
        w = self.dim(op["width"])
        kind = op["op"]
        # (tensors read, tensors written) of width w per token, bf16.
        reads, writes = {"rmsnorm": (2, 2), "silu_mul": (2, 1), "rope": (1, 1)}[kind]
        per_call = tokens * w * 2 * (reads + writes)
        c = self.copies_for(per_call, cap=32)
        xs = [self.randn(tokens, w) for _ in range(c)]
        ys = [self.randn(tokens, w) for _ in range(c)]
        outs = [t.empty(tokens, w * writes, device=self.device, dtype=t.bfloat16)
                for _ in range(c)]
        if reads == 2:
            fn = lambda i: t.add(xs[i % c], ys[i % c], out=outs[i % c][:, :w])  # noqa: E731
        else:
            fn = lambda i: t.mul(xs[i % c], 0.5, out=outs[i % c][:, :w])  # noqa: E731
        if writes == 2:
            inner_fn = fn

            def fn(i):  # noqa: F811 - two outputs, like fused add + RMSNorm
                inner_fn(i)
                t.mul(xs[i % c], 2.0, out=outs[i % c][:, w:])
            impl = "torch add + mul (2 kernels) moving fused add+RMSNorm's bytes"
        else:
            impl = "one torch elementwise kernel moving the fused kernel's bytes"
        return self.timer.time(fn, c), impl

    def router_topk(self, op, tokens):
        t = self.torch
        e, k = op["experts"], op["top_k"]
        if self.tiny:
            e, k = min(e, 16), min(k, 2)
        logits = t.randn(tokens, e, device=self.device, dtype=t.float32, generator=self.gen)
        return self.timer.time(lambda i: t.topk(t.softmax(logits, -1), k, dim=-1), 1), \
            "torch softmax + topk (vLLM fuses them)"

    def sampler(self, op, rows):
        t = self.torch
        v = self.dim(op["vocab"])
        c = self.copies_for(rows * v * 2, cap=8)
        logits = [self.randn(rows, v) for _ in range(c)]

        def run(i):
            p = t.softmax(logits[i % c].float() / 0.7, -1)
            return t.topk(p, 20, dim=-1)
        return self.timer.time(run, c), "float32 softmax with temperature + top-20 (torch)"

    def attention_decode(self, op, bc):
        t = self.torch
        b, ctx = bc
        hq, hkv, d = op["q_heads"], op["kv_heads"], self.dim(op["head_dim"]) if self.tiny else op["head_dim"]
        g = hq // hkv
        kv_bytes = b * ctx * hkv * d * 2 * 2
        c = self.copies_for(kv_bytes, cap=8)
        q = self.randn(b, hkv, g, d)  # GQA folded onto the KV heads: one read of K/V
        ks = [self.randn(b, hkv, ctx, d) for _ in range(c)]
        vs = [self.randn(b, hkv, ctx, d) for _ in range(c)]
        sdpa = t.nn.functional.scaled_dot_product_attention
        return self.timer.time(lambda i: sdpa(q, ks[i % c], vs[i % c]), c), \
            "scaled_dot_product_attention, GQA folded onto KV heads (default backend)"

    def attention_prefill(self, op, length):
        t = self.torch
        hq, hkv, d = op["q_heads"], op["kv_heads"], op["head_dim"]
        q = self.randn(1, hq, length, d)
        k = self.randn(1, hkv, length, d)
        v = self.randn(1, hkv, length, d)
        sdpa = t.nn.functional.scaled_dot_product_attention
        try:
            sdpa(q, k, v, is_causal=True, enable_gqa=True)
            fn = lambda i: sdpa(q, k, v, is_causal=True, enable_gqa=True)  # noqa: E731
            impl = "scaled_dot_product_attention causal, enable_gqa (default backend)"
        except Exception:  # noqa: BLE001 - older torch: expand K/V
            ke = k.repeat_interleave(hq // hkv, 1)
            ve = v.repeat_interleave(hq // hkv, 1)
            fn = lambda i: sdpa(q, ke, ve, is_causal=True)  # noqa: E731
            impl = "scaled_dot_product_attention causal, K/V expanded"
        return self.timer.time(fn, 1), impl

    def gdn_decode(self, op, b):
        if self.fla is None:
            raise RuntimeError("flash-linear-attention (fla) is not installed")
        from fla.ops.gated_delta_rule import fused_recurrent_gated_delta_rule  # noqa: PLC0415
        t = self.torch
        hk, hv, dk, dv = op["key_heads"], op["value_heads"], op["key_dim"], op["value_dim"]
        c = self.copies_for(b * hv * dk * dv * 2, cap=32)
        q = self.randn(b, 1, hv, dk)
        k = t.nn.functional.normalize(self.randn(b, 1, hv, dk).float(), dim=-1).bfloat16()
        v = self.randn(b, 1, hv, dv)
        gl = -t.rand(b, 1, hv, device=self.device, generator=self.gen)
        beta = t.rand(b, 1, hv, device=self.device, generator=self.gen).bfloat16()
        states = [self.randn(b, hv, dk, dv) for _ in range(c)]
        del hk
        fn = lambda i: fused_recurrent_gated_delta_rule(  # noqa: E731
            q, k, v, g=gl, beta=beta, initial_state=states[i % c], output_final_state=True)
        return self.timer.time(fn, c), f"fla {self.fla} fused_recurrent_gated_delta_rule, bf16 state"

    def gdn_prefill(self, op, tokens):
        if self.fla is None:
            raise RuntimeError("flash-linear-attention (fla) is not installed")
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule  # noqa: PLC0415
        t = self.torch
        hv, dk, dv = op["value_heads"], op["key_dim"], op["value_dim"]
        q = self.randn(1, tokens, hv, dk)
        k = t.nn.functional.normalize(self.randn(1, tokens, hv, dk).float(), dim=-1).bfloat16()
        v = self.randn(1, tokens, hv, dv)
        gl = -t.rand(1, tokens, hv, device=self.device, generator=self.gen)
        beta = t.rand(1, tokens, hv, device=self.device, generator=self.gen).bfloat16()
        fn = lambda i: chunk_gated_delta_rule(q, k, v, g=gl, beta=beta,  # noqa: E731
                                              output_final_state=True)
        return self.timer.time(fn, 1), f"fla {self.fla} chunk_gated_delta_rule"

    def conv(self, op, n):
        if self.fla is None:
            raise RuntimeError("flash-linear-attention (fla) is not installed")
        raise RuntimeError("short convolution: not measured by this script (see the table's "
                           "probe entries)")

    def measure(self, op, x):
        kind = op["op"]
        if kind == "gemm":
            return self.gemm(op, x)
        if kind == "moe":
            return self.moe(op, x)
        if kind in ("rmsnorm", "silu_mul", "rope"):
            return self.elementwise(op, x)
        if kind == "router_topk":
            return self.router_topk(op, x)
        if kind == "sampler":
            return self.sampler(op, x)
        if kind == "attention_decode":
            return self.attention_decode(op, x)
        if kind == "attention_prefill":
            return self.attention_prefill(op, x)
        if kind == "gdn_decode":
            return self.gdn_decode(op, x)
        if kind == "gdn_prefill":
            return self.gdn_prefill(op, x)
        if kind in ("conv_decode", "conv_prefill"):
            return self.conv(op, x)
        raise RuntimeError(f"unknown operator {kind!r}")


def axis_value(axis, x):
    if axis == "kv_tokens":
        return x[0] * x[1]
    if axis == "pairs":
        return x * (x + 1) // 2
    return x


# Measuring order: what no earlier table has first, GEMMs last (the 2026-12-04 probe
# measured them), largest sizes of each operator last within it.
PRIORITY = ["rmsnorm", "silu_mul", "rope", "router_topk", "sampler", "attention_decode",
            "attention_prefill", "moe", "gdn_decode", "gdn_prefill", "conv_decode",
            "conv_prefill", "gemm"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--operators", action="append", required=True,
                    help="operator list JSON (servebench-operators/1); repeatable")
    ap.add_argument("--out", default="kernels.json", help="table to write")
    ap.add_argument("--gpu-name", default=None, help="GPU name for the table (default: torch's)")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--tiny", action="store_true", help="tiny shapes (smoke test)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, measure nothing")
    ap.add_argument("--budget-s", type=float, default=240.0, help="measuring time limit")
    ap.add_argument("--reps", type=int, default=15, help="repetitions per size (median)")
    ap.add_argument("--rotate-mb", type=float, default=256.0,
                    help="bytes of rotating weight/KV copies per operator, MB")
    ap.add_argument("--only", default=None, help="comma-separated operator kinds to measure")
    ap.add_argument("--skip-dtype", default=None, help="skip operators of this dtype (e.g. fp8)")
    args = ap.parse_args()

    models, ops = load_operators(args.operators)
    if args.only:
        keep = set(args.only.split(","))
        ops = [o for o in ops if o["op"] in keep]
    if args.skip_dtype:
        ops = [o for o in ops if o.get("dtype") != args.skip_dtype]
    ops.sort(key=lambda o: PRIORITY.index(o["op"]) if o["op"] in PRIORITY else len(PRIORITY))
    grid = TINY_GRID if args.tiny else GRID
    plan = [(o, x) for o in ops for x in grid[o["axis"]]]
    if args.dry_run:
        for o, x in plan:
            print(json.dumps(key_of(o), sort_keys=True), o["axis"], axis_value(o["axis"], x))
        print(f"{len(ops)} operators, {len(plan)} sizes", file=sys.stderr)
        return 0

    prof = Profiler(args)
    torch = prof.torch
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("no CUDA device (use --device cpu --tiny for a smoke test)")
    gpu = args.gpu_name or (torch.cuda.get_device_name(0) if args.device == "cuda"
                            else platform.processor() or "cpu")
    source = "profile-" + datetime.date.today().isoformat()
    prov = {
        "date": datetime.date.today().isoformat(),
        "gpu": gpu,
        "nvidia_smi": nvidia_smi() if args.device == "cuda" else None,
        "torch": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
        "fla": prof.fla,
        "python": platform.python_version(),
        "models": models,
        "script": "scripts/profile_kernels.py",
        "method": ("medians of CUDA-event timings; short ops as CUDA graphs of many calls; "
                   "weights/KV rotated through copies so they stream from HBM; random data, "
                   "uniform top-k routing" + ("; TINY SMOKE TEST, not real shapes"
                                              if args.tiny else "")),
    }
    doc = {"format": FORMAT, "gpu": gpu, "provenance": {source: prov}, "operators": [],
           "skipped": [], "errors": []}
    t_start = time.perf_counter()
    for o in ops:
        entry = dict(key_of(o))
        entry.update({"axis": o["axis"], "source": source, "points": []})
        for x in grid[o["axis"]]:
            if time.perf_counter() - t_start > args.budget_s:
                doc["skipped"].append({"op": key_of(o), "at": axis_value(o["axis"], x),
                                       "why": "time budget"})
                continue
            try:
                (sec, mode), impl = prof.measure(o, x)
                entry["impl"] = impl
                entry["points"].append([axis_value(o["axis"], x), round(sec * 1e6, 3)])
                print(f"{o['op']:18} {json.dumps(key_of(o), sort_keys=True)[:70]:70} "
                      f"{axis_value(o['axis'], x):>10} {sec * 1e6:10.2f} us {mode}", flush=True)
            except Exception as e:  # noqa: BLE001 - record, go on
                doc["errors"].append({"op": key_of(o), "at": axis_value(o["axis"], x),
                                      "error": f"{type(e).__name__}: {str(e)[:300]}"})
                print(f"{o['op']}: {type(e).__name__}: {str(e)[:200]}", flush=True)
                if args.device == "cuda":
                    torch.cuda.empty_cache()
                # Larger sizes of an operator that failed outright would fail too.
                if not entry["points"]:
                    break
        if entry["points"]:
            doc["operators"].append(entry)
        prov["elapsed_s"] = round(time.perf_counter() - t_start, 1)
        write_atomic(args.out, doc)
    prov["elapsed_s"] = round(time.perf_counter() - t_start, 1)
    write_atomic(args.out, doc)
    print(f"{len(doc['operators'])} operators, {len(doc['errors'])} errors, "
          f"{len(doc['skipped'])} skipped, {prov['elapsed_s']} s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
