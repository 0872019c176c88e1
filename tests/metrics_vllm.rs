//! `Convention::Vllm` on hand-built record sets whose answers were worked out by hand from
//! vLLM 0.34's `calculate_metrics` (see the comments next to each figure).

use std::time::Duration;

use servebench::metrics::{compute, MetricsOptions, Slo};
use servebench::record::{Chunk, ErrorKind, Outcome, RequestRecord};
use servebench::result::{Convention, Summary};

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

fn rec(id: u64, sent: u64, chunks: &[(u64, u32)], ended: Option<u64>) -> RequestRecord {
    let mut r = RequestRecord::new(id, ms(sent));
    r.chunks = chunks
        .iter()
        .map(|&(at, tokens)| Chunk { at: ms(at), tokens })
        .collect();
    r.ended_at = ended.map(ms);
    r
}

fn close(got: Option<f64>, want: f64) {
    let g = got.expect("value present");
    assert!(
        (g - want).abs() <= 1e-9 * want.abs().max(1.0),
        "got {g}, want {want}"
    );
}

/// Three successes (multi-token chunks, an output_len-1 request, a usage of 0 that falls
/// back to the client count) and three failures of different kinds.
fn mixed_run() -> Vec<RequestRecord> {
    // r0: chunks 1+2+1 tokens, usage 4; prompt: client 10, server 11 → input 11.
    let mut r0 = rec(0, 0, &[(100, 1), (150, 2), (250, 1)], Some(250));
    r0.usage_output_tokens = Some(4);
    r0.prompt_tokens = Some(10);
    r0.usage_prompt_tokens = Some(11);
    // r1: a single token → output_len 1: no TPOT sample, TPOT 0 for goodput.
    let mut r1 = rec(1, 200, &[(500, 1)], Some(500));
    r1.prompt_tokens = Some(20);
    // r2: usage 0 is falsy → client count 3+3 = 6.
    let mut r2 = rec(2, 300, &[(400, 3), (1300, 3)], Some(1300));
    r2.usage_output_tokens = Some(0);
    r2.prompt_tokens = Some(5);
    // r3: an error with a chunk: excluded from everything but `failed`.
    let mut r3 = rec(3, 100, &[(150, 1)], Some(160));
    r3.outcome = Outcome::Error {
        kind: ErrorKind::HttpStatus,
        message: "500 Internal Server Error".into(),
    };
    r3.prompt_tokens = Some(1000);
    // r4: "success" without a single chunk: vLLM marks it failed.
    let r4 = rec(4, 600, &[], Some(700));
    // r5: incomplete.
    let mut r5 = rec(5, 50, &[], None);
    r5.outcome = Outcome::Incomplete {
        reason: "cancelled".into(),
    };
    vec![r0, r1, r2, r3, r4, r5]
}

fn pct(s: &Summary, p: f64) -> Option<f64> {
    s.percentile(p)
}

#[test]
fn mixed_run_counts_tokens_and_throughputs() {
    let res = compute(&mixed_run(), Convention::Vllm);
    assert_eq!(res.meta.convention, Some(Convention::Vllm));
    assert_eq!(res.successful_requests, Some(3));
    assert_eq!(res.failed_requests, Some(3));
    // 11 (server usage wins over client 10) + 20 + 5.
    assert_eq!(res.total_input_tokens, Some(36));
    // 4 (usage) + 1 (client) + 6 (usage 0 → client).
    assert_eq!(res.total_output_tokens, Some(11));
    // First send 0 ms, last end 1300 ms.
    close(res.duration_ms, 1300.0);
    close(res.request_throughput_per_s, 3.0 / 1.3);
    close(res.output_throughput_per_s, 11.0 / 1.3);
    close(res.total_token_throughput_per_s, 47.0 / 1.3);
    assert_eq!(res.request_goodput_per_s, None, "no SLOs given");
}

#[test]
fn mixed_run_latency_summaries() {
    let res = compute(&mixed_run(), Convention::Vllm);
    // TTFT [100, 300, 100] ms.
    let ttft = res.ttft.unwrap();
    close(ttft.mean, 500.0 / 3.0);
    close(ttft.median, 100.0);
    // np.percentile([.1,.1,.3], 99): index 1.98 → .3 − .2·.02 = .296
    close(pct(&ttft, 99.0), 296.0);
    // population std: sqrt(2)/15 s
    close(ttft.std, 2f64.sqrt() / 15.0 * 1000.0);
    close(ttft.min, 100.0);
    close(ttft.max, 300.0);
    // TPOT: r0 (250−100)/(4−1) = 50 ms; r2 (1000−100)/(6−1) = 180 ms; r1 has none.
    let tpot = res.tpot.unwrap();
    close(tpot.mean, 115.0);
    close(tpot.median, 115.0);
    close(pct(&tpot, 99.0), 178.7);
    // ITL: one gap per chunk, never divided by tokens: 50, 100 (r0), 900 (r2).
    let itl = res.itl.unwrap();
    close(itl.mean, 350.0);
    close(itl.median, 100.0);
    close(pct(&itl, 99.0), 884.0);
    // E2EL = last chunk − send: 250, 300, 1000.
    let e2el = res.e2el.unwrap();
    close(e2el.mean, 1550.0 / 3.0);
    close(e2el.median, 300.0);
}

#[test]
fn mixed_run_peaks_vllm_buckets_and_exact() {
    let res = compute(&mixed_run(), Convention::Vllm);
    // Buckets from 0 ms: chunks at 100,150,250,400,500 → bucket 0 (5 chunks, 8 tokens),
    // 1300 → bucket 1. vLLM counts chunks: 5.
    close(res.peak_output_throughput_per_s, 5.0);
    // r0 [b0,b0], r1 [b0,b0], r2 [b0,b1] inclusive → bucket 0 holds 3.
    close(res.peak_concurrent_requests, 3.0);
    let exact = res.exact.unwrap();
    // Tokens in [100 ms, 1100 ms): 1+2+1+3+1 = 8.
    assert_eq!(exact.peak_output_tokens_per_s, Some(8.0));
    // In flight, half-open [send, end) of all requests: never more than 2 at once
    // (r0+r3, r0+r1, r1+r2, r2+r4).
    assert_eq!(exact.peak_in_flight, Some(2));
}

#[test]
fn goodput_is_inclusive_and_counts_tpot_zero_for_single_token() {
    let records = mixed_run();
    let with = |slo: Slo| {
        let mut o = MetricsOptions::new(Convention::Vllm);
        o.goodput = Some(slo);
        compute(&records, &o).request_goodput_per_s
    };
    // r0 meets ttft 100 exactly (inclusive); r1 misses ttft; r2 misses tpot (180 > 60).
    let g = with(Slo {
        ttft_ms: Some(100.0),
        tpot_ms: Some(60.0),
        e2el_ms: Some(1000.0),
        ..Slo::default()
    });
    close(g, 1.0 / 1.3);
    // E2EL 1000 ms: r2's latency is exactly 1000 ms → still good (inclusive): 3 good.
    let g = with(Slo {
        e2el_ms: Some(1000.0),
        ..Slo::default()
    });
    close(g, 3.0 / 1.3);
    // TPOT 60 ms alone: r0 (50) and r1 (0 by convention) are good, r2 not.
    let g = with(Slo {
        tpot_ms: Some(60.0),
        ..Slo::default()
    });
    close(g, 2.0 / 1.3);
}

#[test]
fn explicit_duration_and_percentiles() {
    let mut o = MetricsOptions::new(Convention::Vllm);
    o.duration = Some(Duration::from_secs(2));
    o.percentiles = vec![50.0, 90.0, 99.9];
    let res = compute(&mixed_run(), &o);
    close(res.duration_ms, 2000.0);
    close(res.request_throughput_per_s, 1.5);
    let itl = res.itl.unwrap();
    // [50, 100, 900]: p50 = 100, p90 → index 1.8 → 900 − 800·0.2 = 740, p99.9 → 1.998 → 898.4
    close(pct(&itl, 50.0), 100.0);
    close(pct(&itl, 90.0), 740.0);
    close(pct(&itl, 99.9), 898.4);
    assert_eq!(itl.percentiles.len(), 3);
}

#[test]
fn empty_run_is_all_zeros() {
    let res = compute(&[], Convention::Vllm);
    assert_eq!(res.successful_requests, Some(0));
    assert_eq!(res.failed_requests, Some(0));
    assert_eq!(res.total_input_tokens, Some(0));
    assert_eq!(res.total_output_tokens, Some(0));
    close(res.duration_ms, 0.0);
    // No duration → no rates rather than a division by zero.
    assert_eq!(res.request_throughput_per_s, None);
    for s in [res.ttft, res.tpot, res.itl, res.e2el] {
        let s = s.unwrap();
        assert_eq!(s.mean, Some(0.0));
        assert_eq!(s.median, Some(0.0));
        assert_eq!(s.std, Some(0.0));
        assert_eq!(s.percentile(99.0), Some(0.0));
    }
    assert_eq!(res.peak_output_throughput_per_s, Some(0.0));
    assert_eq!(res.peak_concurrent_requests, Some(0.0));
}

#[test]
fn all_failed_run_has_zero_latencies_but_a_duration() {
    let mut records = mixed_run();
    records.retain(|r| !r.outcome.is_success() || r.chunks.is_empty());
    let res = compute(&records, Convention::Vllm);
    assert_eq!(res.successful_requests, Some(0));
    assert_eq!(res.failed_requests, Some(3));
    assert_eq!(res.total_output_tokens, Some(0));
    assert_eq!(
        res.total_input_tokens,
        Some(0),
        "failed prompts are not counted"
    );
    // 50 ms (first send) to 700 ms (r4's end).
    close(res.duration_ms, 650.0);
    close(res.request_throughput_per_s, 0.0);
    assert_eq!(res.ttft.unwrap().mean, Some(0.0));
}

#[test]
fn single_token_requests_have_no_tpot_samples() {
    let records: Vec<_> = (0..4)
        .map(|i| rec(i, i * 10, &[(i * 10 + 40, 1)], Some(i * 10 + 40)))
        .collect();
    let res = compute(&records, Convention::Vllm);
    let tpot = res.tpot.unwrap();
    assert_eq!(tpot.mean, Some(0.0), "empty TPOT list → 0 like vLLM");
    assert_eq!(res.itl.unwrap().mean, Some(0.0));
    close(res.ttft.unwrap().mean, 40.0);
    // 4 chunks in one bucket; requests each in bucket 0 → 4 concurrent by vLLM's count,
    // while at most 4 overlap exactly too ([0,40),[10,50),[20,60),[30,70) at t=30).
    close(res.peak_output_throughput_per_s, 4.0);
    close(res.peak_concurrent_requests, 4.0);
    assert_eq!(res.exact.unwrap().peak_in_flight, Some(4));
}

#[test]
fn bucket_concurrency_overcounts_back_to_back_requests() {
    // 10 requests one after the other, 600 ms each: never more than 1 in flight, but each
    // touches up to two 1-second buckets, so vLLM 0.34 reports 3 (bucket 1 holds r1, r2 and
    // r3) — and its chunk-count peak is far below the token-accurate one when chunks carry
    // 4 tokens.
    let records: Vec<_> = (0..10u64)
        .map(|i| {
            let s = i * 600;
            rec(i, s, &[(s + 300, 4), (s + 600, 4)], Some(s + 600))
        })
        .collect();
    let res = compute(&records, Convention::Vllm);
    close(res.peak_concurrent_requests, 3.0);
    assert_eq!(res.exact.as_ref().unwrap().peak_in_flight, Some(1));
    // Chunks every 300 ms from 300 to 6000 ms: bucket 3 holds 3000..3900 → 4 chunks.
    close(res.peak_output_throughput_per_s, 4.0);
    // Any 1-second window holds at most 4 chunks = 16 tokens.
    assert_eq!(res.exact.unwrap().peak_output_tokens_per_s, Some(16.0));
    close(res.output_throughput_per_s, 80.0 / 6.0);
}
