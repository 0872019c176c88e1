//! The simulator's physics, from the model and GPU descriptions alone: decode steps grow
//! with batch and context as the roofline says, a bandwidth-bound step scales with HBM
//! bandwidth between GPUs, MTP speculative decoding lowers latency at low load and helps
//! less as the batch grows, and the KV pool is the memory left after weights.
#![cfg(feature = "sim")]

use servebench::profile::{Dataset, Profile};
use servebench::sim::simulate;
use servebench::sim::NON_KV_RESERVE_FRACTION;
use servebench::sim::{
    from_engine_args, Config, GpuSpec, ModelSpec, StepLoad, StepModel, Weights, EFFICIENCIES,
};

fn step_model(model: &str, gpu: &str) -> StepModel {
    let m = ModelSpec::resolve(model).unwrap();
    let g = GpuSpec::resolve(gpu).unwrap();
    StepModel::for_deployment(&m, &g, Weights::Bf16, false, &EFFICIENCIES)
}

fn decode_s(s: &StepModel, batch: u64, ctx: u64) -> f64 {
    let mut l = StepLoad::default();
    for _ in 0..batch {
        l.add(1, ctx, false);
    }
    s.step_seconds(&l)
}

#[test]
fn decode_steps_grow_with_batch_and_context_as_the_roofline_says() {
    for (model, gpu) in [("qwen3.5-35b-a3b", "h200"), ("qwen3.5-9b", "h100")] {
        let s = step_model(model, gpu);
        let bw = s.hbm_bytes_per_s * s.eta_bw;
        let mut last = 0.0;
        for b in [1, 2, 8, 32, 128, 256] {
            let t = decode_s(&s, b, 1000);
            assert!(t > last, "{model}: batch {b}: {t} <= {last}");
            last = t;
        }
        // Context: each extra context token of each sequence streams its KV bytes once
        // (memory-bound attention), so the slope is batch × KV bytes / bandwidth.
        let (b, c1, c2) = (64, 1000, 9000);
        let slope = (decode_s(&s, b, c2) - decode_s(&s, b, c1)) / (c2 - c1) as f64;
        let want = b as f64 * s.kv_bytes_per_token / bw;
        assert!(
            (slope / want - 1.0).abs() < 1e-6,
            "{model}: {slope} s/token vs {want}"
        );
        // Batch: past the expert-coverage knee, one more sequence costs its state and KV
        // traffic (bandwidth) or its FLOPs, whichever binds.
        let per_seq = decode_s(&s, 257, 1000) - decode_s(&s, 256, 1000);
        let state_kv = (2.0 * s.state_bytes + 1001.0 * s.kv_bytes_per_token) / bw;
        assert!(
            per_seq >= state_kv * 0.999,
            "{model}: {per_seq} vs {state_kv}"
        );
    }
}

#[test]
fn a_bandwidth_bound_step_is_slower_on_an_h100_by_the_bandwidth_ratio() {
    let (h100, h200) = (
        GpuSpec::resolve("h100").unwrap(),
        GpuSpec::resolve("h200").unwrap(),
    );
    let ratio = h200.hbm_bytes_per_s / h100.hbm_bytes_per_s;
    assert!((ratio - 4.8 / 3.35).abs() < 1e-9);
    for model in ["qwen3.5-35b-a3b", "qwen3.5-9b"] {
        let a = step_model(model, "h100");
        let b = step_model(model, "h200");
        // Small-batch decode streams weights and state: everything but the fixed per-layer
        // cost scales with bandwidth (same compute peaks on both).
        for batch in [1, 4, 16] {
            let ta = decode_s(&a, batch, 2000) - a.t0_s;
            let tb = decode_s(&b, batch, 2000) - b.t0_s;
            assert!(
                (ta / tb / ratio - 1.0).abs() < 0.01,
                "{model} batch {batch}: {ta} / {tb} vs {ratio}"
            );
        }
        // A compute-bound prefill chunk is not: same peaks, same time.
        let mut l = StepLoad::default();
        l.add(8192, 0, true);
        let (pa, pb) = (a.step_seconds(&l), b.step_seconds(&l));
        assert!(pa / pb < 1.1, "{model} prefill {pa} vs {pb}");
    }
}

fn mtp(k: u64) -> Vec<String> {
    vec![
        "--reasoning-parser=qwen3".into(),
        "--max-model-len=32768".into(),
        format!("--speculative-config={{\"method\":\"mtp\",\"num_speculative_tokens\":{k}}}"),
    ]
}

/// Decode speed-up of MTP with one draft token at each batch size: expected tokens per
/// step over (verification step + draft pass) / plain step.
fn mtp_gains(model: &str, gpu: &str, batches: &[u64]) -> Vec<f64> {
    let c = from_engine_args(model, gpu, &mtp(1)).unwrap();
    let p = servebench::sim::Params::for_config(&c);
    assert_eq!(p.spec_tokens, 1);
    let s = &p.step;
    // Expected tokens per verification step with k = 1: 1 + acceptance.
    let per_step = 1.0 + p.spec_acceptance;
    let mut gains = Vec::new();
    for &batch in batches {
        let mut plain = StepLoad::default();
        let mut spec = StepLoad::default();
        for _ in 0..batch {
            plain.add(1, 1000, false);
            spec.add_sampled(2, 1000, false, 2);
        }
        let t_plain = s.step_seconds(&plain);
        let draft = s.draft_seconds(1, spec.tokens, batch, spec.kv_tokens);
        assert!(draft > 0.0);
        let t_spec = s.step_seconds(&spec) + draft;
        assert!(
            t_spec > t_plain,
            "verification + draft cost more than one step"
        );
        gains.push(t_plain * per_step / t_spec);
    }
    gains
}

#[test]
fn mtp_costs_a_draft_pass_and_a_wider_verification_and_pays_less_as_the_batch_grows() {
    // Dense 9B: bandwidth-bound at small batches (the verification token is almost free;
    // the draft pass's fixed weight read amortizes a little up to ~32 sequences),
    // compute-bound at large ones (it costs a full token): then the gain shrinks.
    let dense = mtp_gains("qwen3.5-9b", "h100", &[1, 8, 32, 128, 256, 512]);
    assert!(dense[0] > 1.3, "MTP pays at batch 1: {dense:?}");
    assert!(
        dense[2..].windows(2).all(|w| w[1] < w[0]),
        "the gain shrinks with the batch: {dense:?}"
    );
    assert!(dense[4] < dense[0], "{dense:?}");
    assert!(
        dense[5] < 1.0,
        "at 512 sequences MTP costs more than it saves: {dense:?}"
    );
    // MoE 35B: the verification tokens also touch more experts until every expert is read
    // anyway (the gain dips at 8, recovers by 128), then compute and the 512-token CUDA
    // graph limit take it below 1.
    let moe = mtp_gains("Qwen/Qwen3.5-35B-A3B-FP8", "h200", &[1, 8, 128, 512]);
    assert!(moe[0] > 1.2, "{moe:?}");
    assert!(moe[1] < moe[0] && moe[2] > moe[1], "{moe:?}");
    assert!(moe[3] < 1.0, "{moe:?}");
}

#[test]
fn mtp_lowers_latency_at_low_load_and_helps_less_under_a_burst() {
    let run = |flags: &[String], rate: f64, n: u64, input: u64, output: u64| {
        // The dense 9B: no fused-MoE cold start to blur the comparison.
        let c = from_engine_args("qwen3.5-9b", "h100", flags).unwrap();
        let p = Profile {
            name: None,
            dataset: Dataset::Random {
                input_tokens: input,
                output_tokens: output,
                seed: 1,
            },
            request_rate: rate,
            total_requests: n,
            max_concurrency: None,
        };
        let r = simulate(&p, &c, 0, true).unwrap().result;
        assert_eq!(r.successful_requests, Some(n));
        r.e2el.unwrap().mean.unwrap()
    };
    let plain: Vec<String> = mtp(1)[..2].to_vec();
    // One request at a time: every step is a batch of one.
    let low = run(&plain, 0.5, 20, 128, 256) / run(&mtp(1), 0.5, 20, 128, 256);
    // 512 requests at once: big batches.
    let high = run(&plain, 1000.0, 512, 128, 256) / run(&mtp(1), 1000.0, 512, 128, 256);
    assert!(low > 1.25, "low-load speed-up {low}");
    assert!(high < low, "burst speed-up {high} vs low-load {low}");
}

#[test]
fn kv_capacity_is_the_memory_left_after_weights() {
    for (model, gpu) in [
        ("qwen3.5-35b-a3b", "h200"),
        ("Qwen/Qwen3.5-35B-A3B-FP8", "h200"),
        ("Qwen/Qwen3.5-35B-A3B-FP8", "h100"),
        ("qwen3.5-9b", "h100"),
        ("qwen3.5-9b", "h200"),
    ] {
        let c = from_engine_args(model, gpu, &[]).unwrap();
        let g = GpuSpec::resolve(gpu).unwrap();
        let m = ModelSpec::resolve(model).unwrap();
        // Weights from the parameter count: FP8 linear layers, BF16 embedding, lm_head and
        // vision tower; no MTP layer without speculative decoding.
        let bf16_extra = 2.0 * m.lm_head_params() + m.vision_params;
        let linear = m.resident_params(false) - m.mtp_layer_params() - bf16_extra;
        let w = if m.fp8_checkpoint { 1.0 } else { 2.0 };
        let weights = linear * w + 2.0 * bf16_extra;
        assert!((c.weight_bytes() / weights - 1.0).abs() < 1e-9);
        let left = 0.9 * g.memory_bytes - weights - NON_KV_RESERVE_FRACTION * g.memory_bytes;
        assert!(
            (c.kv_pool_bytes() / left - 1.0).abs() < 1e-9,
            "{model} {gpu}"
        );
        // More memory for the pool: more utilization, no vision tower, FP8 weights.
        let more = from_engine_args(model, gpu, &["--gpu-memory-utilization=0.95".into()]).unwrap();
        let delta = more.kv_pool_bytes() - c.kv_pool_bytes();
        assert!((delta / (0.05 * g.memory_bytes) - 1.0).abs() < 1e-9);
        let lm = from_engine_args(model, gpu, &["--language-model-only".into()]).unwrap();
        assert!((lm.kv_pool_bytes() - c.kv_pool_bytes() - 2.0 * m.vision_params).abs() < 1.0);
    }
    // The seed's deployment: 26 GB of pool with BF16 weights; FP8 weights free ≈ 33.6 GB.
    let bf16 = Config::named("baseline").unwrap();
    let fp8 = Config::named("quantization").unwrap();
    assert!((bf16.kv_pool_bytes() / 26e9 - 1.0).abs() < 0.01);
    let freed = fp8.kv_pool_bytes() - bf16.kv_pool_bytes();
    assert!((33e9..34.5e9).contains(&freed), "{freed}");
    // Qwen3.5-35B-A3B in BF16 does not fit an H100.
    let e = from_engine_args("qwen3.5-35b-a3b", "h100", &[]).unwrap_err();
    assert!(e.to_string().contains("GB of weights"), "{e}");
}
