//! What guidellm 0.5 + GPUStack would have reported for a simulated run.
//!
//! With vLLM 0.17's `--reasoning-parser qwen3` every reasoning token streams as
//! `delta.reasoning`, which guidellm-0.5's `chat_completions_with_reasoning` handler ignored:
//! it counted only the first (role) chunk. So every request shows **one token iteration** at
//! its first-token time carrying all its output tokens. [`reasoning_blind`] applies that to
//! the records, [`report`] computes guidellm's definitions (TPOT includes the TTFT and is
//! token-weighted, "ITL" is the per-request decode mean, rates are event-rate means over the
//! span of token events, peak = largest instantaneous rate with events merged within
//! 0.1 ms). Provisional until `servebench::metrics` (guidellm convention) is on main.

use std::time::Duration;

use servebench::driver::rng::Rng;
use servebench::record::{Chunk, RequestRecord};
use servebench::result::{BenchmarkResult, Convention, Percentile, Summary};

/// How long Qwen3.5 thinks before answering: log-normal reasoning length (median tokens,
/// log-space sigma). A request whose output budget ends first never emits a content delta.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thinking {
    /// Median reasoning length, tokens.
    pub median: f64,
    /// Log-space sigma.
    pub sigma: f64,
}

/// Real ShareGPT questions: the model usually answers within a couple of thousand tokens
/// (fitted so that about 12% of ShareGPT output tokens get real timing, as the seed's
/// mixture TPOT implies).
pub const THINKING_SHAREGPT: Thinking = Thinking {
    median: 1500.0,
    sigma: 1.0,
};
/// Random-token prompts: long confused reasoning (about 5.5% of 2000-token budgets end
/// thinking, none of the 100–128-token ones, as the seed's Generation Heavy TPOT implies).
pub const THINKING_RANDOM: Thinking = Thinking {
    median: 6000.0,
    sigma: 0.7,
};

/// The records as guidellm's reasoning-blind handler saw them: the role chunk at first-token
/// time, then only content deltas (after the reasoning ends, if it ends within the budget).
/// guidellm spreads a request's remaining tokens over its counted iterations.
pub fn reasoning_blind(
    records: &[RequestRecord],
    thinking: Thinking,
    seed: u64,
) -> Vec<RequestRecord> {
    records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            let mut rng = Rng::new(seed ^ r.id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let reasoning = rng.lognormal(thinking.median, thinking.sigma).round() as usize;
            let total = r.output_tokens();
            if let Some(first) = r.chunks.first().copied() {
                let content = r.chunks.get(reasoning.max(1)..).unwrap_or(&[]);
                if content.is_empty() {
                    r.chunks = vec![Chunk {
                        at: first.at,
                        tokens: u32::try_from(total).unwrap_or(u32::MAX),
                    }];
                } else {
                    let rest = total.saturating_sub(1);
                    let k = content.len() as u64;
                    let mut chunks = vec![Chunk {
                        at: first.at,
                        tokens: 1,
                    }];
                    for (i, c) in content.iter().enumerate() {
                        let i = i as u64;
                        let share = rest * (i + 1) / k - rest * i / k;
                        chunks.push(Chunk {
                            at: c.at,
                            tokens: u32::try_from(share).unwrap_or(u32::MAX),
                        });
                    }
                    r.chunks = chunks;
                }
            }
            r
        })
        .collect()
}

/// Token-weighted summary (guidellm's distributions weight by tokens).
fn weighted(mut v: Vec<(f64, f64)>) -> Option<Summary> {
    v.retain(|(_, w)| *w > 0.0);
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = v.iter().map(|(_, w)| w).sum();
    let mean = v.iter().map(|(x, w)| x * w).sum::<f64>() / total;
    let pct = |p: f64| {
        let target = p / 100.0 * total;
        let mut acc = 0.0;
        for (x, w) in &v {
            acc += w;
            if acc >= target {
                return Some(*x);
            }
        }
        v.last().map(|(x, _)| *x)
    };
    Some(Summary {
        mean: Some(mean),
        median: pct(50.0),
        percentiles: [50.0, 95.0, 99.0]
            .iter()
            .map(|&p| Percentile { p, value: pct(p) })
            .collect(),
        ..Summary::default()
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// guidellm's figures for `records` (already passed through [`reasoning_blind`] if the
/// artifact is wanted): a provisional approximation of guidellm's definitions (TPOT
/// includes the TTFT and is token-weighted, "ITL" is the per-request decode mean, rates are
/// token totals over the span of token events, peak = largest rate between neighbouring
/// events merged within 0.1 ms), used only while `servebench::metrics` has no guidellm
/// convention (see [`crate::shown`]).
pub fn report(records: &[RequestRecord], mut base: BenchmarkResult) -> BenchmarkResult {
    let ok: Vec<&RequestRecord> = records
        .iter()
        .filter(|r| r.outcome.is_success() && !r.chunks.is_empty())
        .collect();
    let n = ok.len();
    let start = ok.iter().map(|r| r.sent_at).min().unwrap_or_default();
    let end = ok.iter().filter_map(|r| r.ended_at).max().unwrap_or(start);
    let dur = (end - start).as_secs_f64();
    // Token events: prompt tokens at first-token time, output tokens per iteration.
    let mut ev: Vec<(f64, f64, f64)> = Vec::new(); // (t, output tokens, all tokens)
    for r in &ok {
        let p = r.input_tokens().unwrap_or(0) as f64;
        for (k, c) in r.chunks.iter().enumerate() {
            let o = f64::from(c.tokens);
            ev.push((c.at.as_secs_f64(), o, o + if k == 0 { p } else { 0.0 }));
        }
    }
    ev.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Merge events within 0.1 ms.
    let mut merged: Vec<(f64, f64, f64)> = Vec::new();
    for e in ev {
        match merged.last_mut() {
            Some(m) if e.0 - m.0 <= 1e-4 => {
                m.1 += e.1;
                m.2 += e.2;
            }
            _ => merged.push(e),
        }
    }
    let span = match (merged.first(), merged.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => b.0 - a.0,
        _ => dur,
    };
    let tot_out: f64 = merged.iter().map(|m| m.1).sum();
    let tot_all: f64 = merged.iter().map(|m| m.2).sum();
    let mut peak: f64 = 0.0;
    for i in 0..merged.len() {
        let lo = if i == 0 {
            merged[i].0
        } else {
            (merged[i - 1].0 + merged[i].0) / 2.0
        };
        let hi = if i + 1 == merged.len() {
            merged[i].0
        } else {
            (merged[i].0 + merged[i + 1].0) / 2.0
        };
        let width = (hi - lo).max(1e-4);
        peak = peak.max(merged[i].1 / width);
    }
    let out_tok: Vec<f64> = ok.iter().map(|r| r.output_tokens() as f64).collect();
    let tpot = ok
        .iter()
        .zip(&out_tok)
        .filter_map(|(r, &o)| {
            let last = r.chunks.last()?.at;
            Some((ms(last.saturating_sub(r.sent_at)) / o.max(1.0), o))
        })
        .collect();
    let itl = ok
        .iter()
        .zip(&out_tok)
        .filter_map(|(r, &o)| {
            let first = r.chunks.first()?.at;
            let last = r.chunks.last()?.at;
            let v = if o > 1.0 {
                ms(last - first) / (o - 1.0)
            } else {
                0.0
            };
            Some((v, o - 1.0))
        })
        .collect();
    let lat = ok
        .iter()
        .filter_map(|r| Some((ms(r.ended_at?.saturating_sub(r.sent_at)), 1.0)))
        .collect();
    let ttft = ok
        .iter()
        .filter_map(|r| Some((r.ttft().map(ms)?, 1.0)))
        .collect();
    let peak_conc = base
        .exact
        .as_ref()
        .and_then(|e| e.peak_in_flight)
        .map(|p| p as f64);
    base.meta.convention = Some(Convention::Guidellm);
    base.max_concurrency = peak_conc.map(|p| p as u64);
    base.duration_ms = Some(dur * 1000.0);
    base.request_throughput_per_s = (dur > 0.0).then(|| n as f64 / dur);
    base.output_throughput_per_s = (span > 0.0).then(|| tot_out / span);
    base.total_token_throughput_per_s = (span > 0.0).then(|| tot_all / span);
    base.peak_output_throughput_per_s = Some(peak);
    base.peak_concurrent_requests = peak_conc;
    base.e2el = weighted(lat);
    base.ttft = weighted(ttft);
    base.tpot = weighted(tpot);
    base.itl = weighted(itl);
    base
}
