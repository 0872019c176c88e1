//! The simulator against the seed: fidelity of the baseline runs, optimized beats baseline,
//! determinism, the guidellm view's artifacts, and the engine's edge cases. The fidelity
//! test runs the whole baseline and optimized study (eight simulated runs, about 2.5 M
//! streamed tokens); the simulator is fast enough that this takes a few seconds even in a
//! debug build, so nothing is marked `#[ignore]`.
#![cfg(feature = "sim")]

use servebench::profile::Profile;
use servebench::sim::EFFECT_ERROR_FRACTION;
use servebench::sim::{guidellm_view, simulate, SEED_BASELINE_S, SEED_OPTIMIZED_S};
use servebench::sim::{Config, H200Sim, CONFIG_NAMES};

fn preset(name: &str) -> Profile {
    Profile::preset(name).unwrap()
}

fn config(name: &str) -> Config {
    Config::named(name).unwrap()
}

fn mean_s(s: &Option<servebench::result::Summary>) -> f64 {
    s.as_ref().and_then(|s| s.mean).unwrap_or(f64::NAN) / 1000.0
}

/// Relative tolerances: duration 5%, mean TTFT 15%, mean E2E 10%.
const TOLERANCE: (f64, f64, f64) = (0.05, 0.15, 0.10);

#[test]
fn simulated_baseline_matches_the_seed() {
    let mut failures = Vec::new();
    for (name, dur, ttft, e2e) in SEED_BASELINE_S {
        let r = simulate(&preset(name), &config("baseline"), 0, false)
            .unwrap()
            .result;
        assert_eq!(r.successful_requests, Some(preset(name).total_requests));
        assert_eq!(r.failed_requests, Some(0));
        let (td, tt, te) = TOLERANCE;
        let got = [
            ("duration", r.duration_s().unwrap_or(f64::NAN), dur, td),
            ("mean TTFT", mean_s(&r.ttft), ttft, tt),
            ("mean E2E", mean_s(&r.e2el), e2e, te),
        ];
        for (what, sim, seed, tol) in got {
            let err = (sim / seed - 1.0).abs();
            if err.is_nan() || err > tol {
                failures.push(format!("{name} {what}: simulated {sim:.2} vs seed {seed:.2} ({:+.1}%, tolerance {:.0}%)", (sim / seed - 1.0) * 100.0, tol * 100.0));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The seed's ShareGPT TTFT has its median above its mean (5.79 vs 4.07 s) and a P99 of
/// 10.20 s: no first token for the first seconds, then first tokens at the prefill
/// rate. The cold-start model reproduces the shape, not just the mean.
#[test]
fn sharegpt_ttft_distribution_has_the_seeds_shape() {
    let r = simulate(&preset("sharegpt"), &config("baseline"), 0, false)
        .unwrap()
        .result;
    let ttft = r.ttft.unwrap_or_default();
    let (mean, median) = (ttft.mean.unwrap_or(0.0), ttft.median.unwrap_or(0.0));
    assert!(median > mean, "median {median} <= mean {mean}");
    let p99 = ttft.percentile(99.0).unwrap_or(0.0) / 1000.0;
    assert!((p99 / 10.20 - 1.0).abs() < 0.15, "P99 {p99}");
    // A warm server shows no such gap: most requests get their first token quickly.
    let w = simulate(&preset("sharegpt"), &config("baseline"), 0, true)
        .unwrap()
        .result;
    let wt = w.ttft.unwrap_or_default();
    assert!(wt.median.unwrap_or(0.0) < wt.mean.unwrap_or(0.0));
}

#[test]
fn optimized_beats_baseline_on_every_profile() {
    for ((name, _, _, _), (_, seed_opt)) in SEED_BASELINE_S.iter().zip(SEED_OPTIMIZED_S) {
        let b = simulate(&preset(name), &config("baseline"), 0, false)
            .unwrap()
            .result;
        let o = simulate(&preset(name), &config("optimized"), 0, false)
            .unwrap()
            .result;
        let (bd, od) = (b.duration_s().unwrap_or(0.0), o.duration_s().unwrap_or(0.0));
        assert!(
            od < bd,
            "{name}: optimized {od:.2} s not faster than baseline {bd:.2} s"
        );
        assert!(
            o.total_token_throughput_per_s > b.total_token_throughput_per_s,
            "{name}: throughput"
        );
        // Within 10% of the seed's optimized duration too.
        assert!(
            (od / seed_opt - 1.0).abs() < 0.10,
            "{name}: {od:.2} vs {seed_opt}"
        );
    }
}

/// The model error a study's simulated decisions carry ([`EFFECT_ERROR_FRACTION`]) is
/// what the simulator gets wrong about the seed's one measured change: the predicted
/// throughput gain of the optimized command against the measured gain, per profile.
#[test]
fn the_stated_effect_error_is_the_simulators_error_on_the_seeds_change() {
    let mut errors = Vec::new();
    for ((name, seed_base, _, _), (_, seed_opt)) in SEED_BASELINE_S.iter().zip(SEED_OPTIMIZED_S) {
        let dur = |c: &str| {
            simulate(&preset(name), &config(c), 0, false)
                .unwrap()
                .result
                .duration_s()
                .unwrap()
        };
        let predicted = dur("baseline") / dur("optimized") - 1.0;
        let measured = seed_base / seed_opt - 1.0;
        errors.push((predicted / measured - 1.0).abs());
    }
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    assert!(
        (mean - EFFECT_ERROR_FRACTION).abs() < 0.02,
        "stated {EFFECT_ERROR_FRACTION}, the simulator's error now {mean:.3} ({errors:?})"
    );
}

#[test]
fn runs_are_deterministic_and_the_seed_matters_for_sharegpt() {
    let p = preset("long-context");
    let a = simulate(&p, &config("quantization"), 3, false).unwrap();
    let b = simulate(&p, &config("quantization"), 3, false).unwrap();
    assert_eq!(a.records, b.records);
    let s1 = simulate(&preset("sharegpt"), &config("kv-fp8"), 1, false)
        .unwrap()
        .result;
    let s2 = simulate(&preset("sharegpt"), &config("kv-fp8"), 2, false)
        .unwrap()
        .result;
    assert_ne!(s1.total_input_tokens, s2.total_input_tokens);
}

#[test]
fn every_config_runs_the_latency_profile_like_gpustacks_low_rate_runs() {
    // Random 128/128 at 1 req/s: nothing queues, TTFT is one admission plus a short
    // prefill, decode steps are a few ms.
    for name in CONFIG_NAMES {
        let r = simulate(&preset("latency"), &config(name), 0, false)
            .unwrap()
            .result;
        assert_eq!(r.successful_requests, Some(100), "{name}");
        let ttft = mean_s(&r.ttft);
        assert!((0.01..0.1).contains(&ttft), "{name}: TTFT {ttft}");
        let tpot = r.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
        assert!((4.0..8.0).contains(&tpot), "{name}: TPOT {tpot} ms");
    }
}

#[test]
fn the_guidellm_view_reproduces_the_single_iteration_artifact() {
    let p = preset("throughput");
    let out = simulate(&p, &config("baseline"), 0, false).unwrap();
    let g = guidellm_view(&out, &p, 0);
    let v = out.result;
    // guidellm's "TPOT" is sum(TTFT) / sum(output tokens) when every request shows one
    // iteration, and its ITL is 0.
    let ttft_sum: f64 = out
        .records
        .iter()
        .filter_map(|r| r.ttft())
        .map(|d| d.as_secs_f64() * 1000.0)
        .sum();
    let tpot = g.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
    assert!((tpot - ttft_sum / 128_000.0).abs() < 0.01, "{tpot}");
    assert_eq!(g.itl.as_ref().and_then(|s| s.mean), Some(0.0));
    // All of a request's tokens land at one instant: the "peak" rate is inflated above
    // the real output rate.
    let real = v.output_throughput_per_s.unwrap_or(f64::MAX);
    assert!(g.peak_output_throughput_per_s.unwrap_or(0.0) > real);
    assert_eq!(g.meta.convention, Some(servebench::Convention::Guidellm));
}

/// The "Mean TPOT(ms)" GPUStack printed for the baselines (an artifact of the
/// reasoning-blind client) is reproduced by the guidellm view within 15%: 45.39
/// (Throughput), 319.79 (Long Context) and the mixture 2.48 (Generation Heavy, where
/// about 5% of requests finish thinking and get real timing).
#[test]
fn the_guidellm_view_reproduces_gpustacks_reported_tpot() {
    for (name, seed_tpot) in [
        ("throughput", 45.39),
        ("long-context", 319.79),
        ("generation-heavy", 2.48),
    ] {
        let p = preset(name);
        let out = simulate(&p, &config("baseline"), 0, false).unwrap();
        let g = guidellm_view(&out, &p, 0);
        let tpot = g.tpot.as_ref().and_then(|s| s.mean).unwrap_or(0.0);
        assert!(
            (tpot / seed_tpot - 1.0).abs() < 0.15,
            "{name}: {tpot:.2} vs {seed_tpot}"
        );
    }
}

#[test]
fn huge_token_counts_are_rejected_not_an_overflow() {
    use servebench::engine::{Engine, EngineEvent, EngineRequest};
    use servebench::record::ErrorKind;
    use std::time::Duration;
    let mut e = H200Sim::new(config("baseline"));
    e.submit(EngineRequest {
        id: 7,
        prompt_tokens: 1000,
        prompt: None,
        max_output_tokens: u64::MAX,
        ignore_eos: true,
        arrival: Duration::ZERO,
        shared_prefix_tokens: 0,
        image_patches: Vec::new(),
        shares_admission: false,
        constrained: false,
    })
    .unwrap();
    let mut ev = Vec::new();
    while e.in_flight() > 0 {
        e.advance(None, &mut ev).unwrap();
    }
    match &ev[..] {
        [EngineEvent::Sent { id: 7, .. }, EngineEvent::Failed {
            id: 7,
            kind,
            message,
            ..
        }] => {
            assert_eq!(*kind, ErrorKind::Rejected);
            assert!(message.contains("maximum context length"), "{message}");
            assert!(message.contains(&u64::MAX.to_string()), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn cancelled_requests_leave_the_engine_and_stay_silent() {
    use servebench::engine::{Engine, EngineEvent, EngineRequest};
    use std::time::Duration;
    let mut e = H200Sim::new(config("baseline"));
    let req = |id| EngineRequest {
        id,
        prompt_tokens: 1000,
        prompt: None,
        max_output_tokens: 50,
        ignore_eos: true,
        arrival: Duration::ZERO,
        shared_prefix_tokens: 0,
        image_patches: Vec::new(),
        shares_admission: false,
        constrained: false,
    };
    for id in 0..4 {
        e.submit(req(id)).unwrap();
    }
    // 0 is still in the frontend; run until 1 has streamed a token, then cancel 1 too.
    assert!(e.cancel(0));
    let mut ev = Vec::new();
    while !ev
        .iter()
        .any(|x: &EngineEvent| matches!(x, EngineEvent::Chunk { id: 1, .. }))
    {
        e.advance(Some(e.now() + Duration::from_millis(5)), &mut ev)
            .unwrap();
    }
    assert!(e.cancel(1));
    assert!(!e.cancel(1), "already cancelled");
    assert_eq!(e.in_flight(), 2);
    ev.clear();
    while e.in_flight() > 0 {
        e.advance(None, &mut ev).unwrap();
    }
    assert!(ev.iter().all(|x| x.id() >= 2), "no events after cancel");
    let done: Vec<u64> = ev
        .iter()
        .filter(|x| x.is_terminal())
        .map(|x| x.id())
        .collect();
    assert_eq!(done, vec![2, 3]);
    assert!(!e.cancel(2), "finished requests cannot be cancelled");
}

/// An image costs its vision tokens' prefill and the vision encoder's forward: alone on an
/// idle server, a 1024 x 1024 image (1026 prompt tokens, 4096 ViT patches) takes longer
/// to its first token than a 512 x 512 one (258 tokens, 1024 patches) by the prefill of
/// the 768 extra tokens — as the same tokens of text take — plus the larger encoder pass.
#[test]
fn images_cost_their_vision_tokens_and_the_encoder() {
    use servebench::driver::images::{ImageSize, VisionPreprocessor};
    use servebench::engine::{Engine, EngineEvent, EngineRequest};
    use servebench::sim::{GpuSpec, ModelSpec, StepModel, Weights, EFFICIENCIES};
    use std::time::Duration;
    let ttft = |prompt_tokens: u64, image_patches: Vec<u64>| {
        let mut e = H200Sim::new(config("baseline"));
        e.submit(EngineRequest {
            id: 1,
            prompt_tokens,
            prompt: None,
            max_output_tokens: 2,
            ignore_eos: true,
            arrival: Duration::ZERO,
            shared_prefix_tokens: 0,
            image_patches,
            shares_admission: false,
            constrained: false,
        })
        .unwrap();
        let mut ev = Vec::new();
        while e.in_flight() > 0 {
            e.advance(None, &mut ev).unwrap();
        }
        ev.iter()
            .find_map(|x| match x {
                EngineEvent::Chunk { at, .. } => Some(at.as_secs_f64()),
                _ => None,
            })
            .unwrap()
    };
    let q = VisionPreprocessor::QWEN3_5;
    let (small, big) = (ImageSize::new(512, 512), ImageSize::new(1024, 1024));
    let text = 64;
    let with = |s: ImageSize| ttft(text + q.prompt_tokens(s), vec![q.patches(s)]);
    let without = |s: ImageSize| ttft(text + q.prompt_tokens(s), Vec::new());
    let image_extra = with(big) - with(small);
    let text_extra = without(big) - without(small);
    let m = ModelSpec::resolve("qwen3.5-35b-a3b").unwrap();
    let g = GpuSpec::resolve("h200").unwrap();
    let step = StepModel::for_deployment(&m, &g, Weights::Bf16, false, &EFFICIENCIES);
    let encoder_extra = step.vision_encoder_seconds(&[q.patches(big)])
        - step.vision_encoder_seconds(&[q.patches(small)]);
    assert!(text_extra > 0.0 && encoder_extra > 0.0);
    // The image's extra time is exactly the tokens' extra prefill plus the encoder's.
    assert!(
        (image_extra - (text_extra + encoder_extra)).abs() < 1e-9,
        "image +{image_extra:.4} s = text +{text_extra:.4} s + encoder +{encoder_extra:.4} s"
    );
    // On an A3B model the 27-block ViT over 4096 patches (~5 TFLOP) weighs about as much
    // as the decoder's prefill of the extra 768 tokens (3 B active parameters).
    assert!(
        (0.5..2.0).contains(&(encoder_extra / text_extra)),
        "{encoder_extra} vs {text_extra}"
    );
}

/// A pooling request is one prefill-only sequence per input, the inputs admitted together:
/// an embeddings batch of 8 × 256 tokens finishes one admission (18 ms) plus its prefill
/// after it arrives — not eight admissions — and the 0.6 B Qwen3-Embedding model (dense,
/// 28 layers of full attention, from its config.json) prefills it faster than the 35 B
/// generation model.
#[test]
fn pooling_batches_share_their_admission_and_a_small_model_prefills_faster() {
    use servebench::engine::{Engine, EngineEvent, EngineRequest};
    use std::time::Duration;
    let batch_done_s = |config: Config, shared: bool| {
        let admission = servebench::sim::Params::for_config(&config).admission_s;
        let mut e = H200Sim::new(config).warmed_up();
        for i in 0..8u64 {
            e.submit(EngineRequest {
                id: i,
                prompt_tokens: 256,
                prompt: None,
                max_output_tokens: 1,
                ignore_eos: true,
                arrival: Duration::ZERO,
                shared_prefix_tokens: 0,
                image_patches: Vec::new(),
                shares_admission: shared && i > 0,
                constrained: false,
            })
            .unwrap();
        }
        let mut ev = Vec::new();
        while e.in_flight() > 0 {
            e.advance(None, &mut ev).unwrap();
        }
        let done = ev
            .iter()
            .filter_map(|x| match x {
                EngineEvent::Finished { at, .. } => Some(at.as_secs_f64()),
                _ => None,
            })
            .fold(0.0, f64::max);
        (done, admission)
    };
    let big = Config::named("baseline").unwrap();
    let small = Config::named_on("baseline", "qwen3-embedding-0.6b", "h200").unwrap();
    let (alone, admission) = batch_done_s(big.clone(), false);
    let (together, _) = batch_done_s(big, true);
    // Eight serial admissions against one: the batch is 7 admissions sooner (within the
    // prefill steps' rounding to step boundaries).
    let saved = alone - together;
    assert!(
        (saved - 7.0 * admission).abs() < 0.25 * admission,
        "saved {saved:.4} s, 7 admissions = {:.4} s",
        7.0 * admission
    );
    let (small_done, _) = batch_done_s(small, true);
    assert!(
        small_done < together,
        "0.6B {small_done:.4} s vs 35B {together:.4} s"
    );
}

/// Prefix caching on Qwen3.5's hybrid cache gains less than on a pure-attention model of
/// the same size, by what the checkpoint floor implies. Eight prompts, one after another,
/// each a 10-token template, a shared 2000-word prefix and its own 200-word suffix (2210
/// tokens, 2010 shared). The hybrid model's blocks are its unified page, 544 tokens (the
/// Gated DeltaNet state is saved only at their boundaries): a repeat finds
/// ⌊2010 / 544⌋ = 3 blocks = 1632 tokens and computes 578. The same model with every layer
/// full attention has 16-token blocks: ⌊2010 / 16⌋ = 125 blocks = 2000 tokens, computing
/// 210. The hits are exactly these, and the time to first token saved by caching is
/// smaller on the hybrid model.
#[test]
fn a_hybrid_models_prefix_hits_are_floored_to_its_checkpoints() {
    use servebench::engine::{Engine, EngineEvent, EngineRequest};
    use servebench::sim::{EngineArgs, GpuSpec, ModelSpec};
    let shipped = servebench::sim::SHIPPED_MODELS[0].2;
    let mut json: serde_json::Value = serde_json::from_str(shipped).unwrap();
    let hybrid = ModelSpec::from_json(shipped, "qwen3.5-35b-a3b").unwrap();
    json["text_config"]["full_attention_interval"] = serde_json::json!(1);
    let pure = ModelSpec::from_json(&json.to_string(), "qwen3.5-35b-a3b, all attention").unwrap();
    assert_eq!(
        (pure.full_attention_layers, pure.linear_attention_layers),
        (40, 0)
    );
    let words = |seed: u64, n: usize| -> String {
        (0..n)
            .map(|i| format!("w{}", seed * 100_000 + i as u64))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let prefix = words(0, 2000);
    // (mean TTFT of the seven repeats, their hit tokens).
    let run = |model: &ModelSpec, caching: bool| {
        let flags = if caching {
            "--enable-prefix-caching"
        } else {
            ""
        };
        let config = Config::from_parts(
            "custom",
            model.clone(),
            GpuSpec::resolve("h200").unwrap(),
            EngineArgs::parse_str(flags).unwrap(),
        )
        .unwrap();
        let mut e = H200Sim::new(config).warmed_up();
        let (mut ttft, mut hits_before) = (0.0, 0);
        for id in 0..8u64 {
            if id == 1 {
                hits_before = e.prefix_cache_counts().hits_tokens;
            }
            let start = e.now();
            e.submit(EngineRequest {
                id,
                prompt_tokens: 2200,
                prompt: Some(format!("{prefix} {}", words(id + 1, 200))),
                max_output_tokens: 2,
                ignore_eos: true,
                arrival: start,
                shared_prefix_tokens: 2000,
                image_patches: Vec::new(),
                shares_admission: false,
                constrained: false,
            })
            .unwrap();
            let mut ev = Vec::new();
            while e.in_flight() > 0 {
                e.advance(None, &mut ev).unwrap();
            }
            if id > 0 {
                let first = ev
                    .iter()
                    .find_map(|x| match x {
                        EngineEvent::Chunk { at, .. } => Some(*at),
                        _ => None,
                    })
                    .unwrap();
                ttft += (first - start).as_secs_f64() / 7.0;
            }
        }
        (ttft, e.prefix_cache_counts().hits_tokens - hits_before)
    };
    let block_h = hybrid.hybrid_layout().block_tokens;
    let block_p = pure.hybrid_layout().block_tokens;
    assert_eq!((block_h, block_p), (544, 16));
    let (h_off, _) = run(&hybrid, false);
    let (h_on, h_hits) = run(&hybrid, true);
    let (p_off, _) = run(&pure, false);
    let (p_on, p_hits) = run(&pure, true);
    assert_eq!(h_hits, 7 * (2010 / block_h) * block_h, "hybrid: 7 x 1632");
    assert_eq!(
        p_hits,
        7 * (2010 / block_p) * block_p,
        "pure attention: 7 x 2000"
    );
    let (h_gain, p_gain) = (h_off - h_on, p_off - p_on);
    assert!(
        h_gain > 0.0 && p_gain > h_gain,
        "hybrid saves {h_gain} s, pure {p_gain} s"
    );
}

/// A structured-output request pays its grammar's token mask at every sampling step: on an
/// idle server, a constrained answer of 64 tokens ends 64 × 40 µs (`GRAMMAR_MASK_S`, the
/// XGrammar paper's per-token mask time) after the same answer unconstrained, and its
/// first token 40 µs later — the TPOT overhead `compare` shows between the two runs.
#[test]
fn a_constrained_answer_pays_the_grammar_mask_per_token() {
    use servebench::engine::{Engine, EngineEvent, EngineRequest};
    let times = |constrained: bool| {
        let mut e = H200Sim::new(config("baseline"));
        e.submit(EngineRequest {
            id: 1,
            prompt_tokens: 200,
            max_output_tokens: 64,
            ignore_eos: true,
            constrained,
            ..EngineRequest::default()
        })
        .unwrap();
        let mut ev = Vec::new();
        while e.in_flight() > 0 {
            e.advance(None, &mut ev).unwrap();
        }
        let chunks: Vec<f64> = ev
            .iter()
            .filter_map(|x| match x {
                EngineEvent::Chunk { at, .. } => Some(at.as_secs_f64()),
                _ => None,
            })
            .collect();
        (chunks[0], *chunks.last().unwrap())
    };
    let (free_first, free_last) = times(false);
    let (held_first, held_last) = times(true);
    let mask = servebench::sim::GRAMMAR_MASK_S;
    assert!((held_first - free_first - mask).abs() < 1e-9);
    assert!(
        (held_last - free_last - 64.0 * mask).abs() < 1e-9,
        "{} vs {}",
        held_last - free_last,
        64.0 * mask
    );
}
