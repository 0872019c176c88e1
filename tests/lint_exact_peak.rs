//! Concurrency and peak lints reason from exact figures where records exist: runs whose
//! per-second "Peak concurrent requests" exceeds the client's cap (vLLM counts every request
//! active during any part of a 1-second bucket) are judged on the exact peak in flight, and
//! guidellm's instantaneous peak output rate is flagged when no 1-second window of the run
//! holds that many tokens.

use std::path::Path;
use std::time::Duration;

use servebench::app::lint_bytes;
use servebench::app::{render_report, report_path, ReportOptions};
use servebench::lint::{lint_run, Code, Finding, LintOptions};
use servebench::record::{Chunk, RequestRecord};
use servebench::result::{BenchmarkResult, Convention, RunMeta};

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn evidence(f: &Finding, name: &str) -> Option<f64> {
    f.evidence.iter().find(|e| e.name == name).map(|e| e.value)
}

/// The most requests in flight at one instant, by a sweep over (start, start + latency).
fn sweep(intervals: &[(f64, f64)]) -> u64 {
    let mut ev: Vec<(f64, i64)> = intervals
        .iter()
        .flat_map(|&(a, b)| [(a, 1), (b, -1)])
        .collect();
    ev.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let (mut now, mut peak) = (0i64, 0i64);
    for (_, d) in ev {
        now += d;
        peak = peak.max(now);
    }
    peak as u64
}

#[test]
fn a_real_vllm_run_whose_per_second_peak_is_every_request_is_judged_on_its_exact_peak() {
    let path = fixture("vllm-0.33/result.json");
    let bytes = std::fs::read(&path).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    // vLLM printed 40 "Peak concurrent requests" under --max-concurrency 8: all 40
    // requests of the sub-second run fell into one 1-second bucket.
    assert_eq!(v["max_concurrent_requests"], 40);
    assert_eq!(v["max_concurrency"], 8);
    assert_eq!(v["completed"], 40);
    let starts = v["start_times"].as_array().unwrap();
    let lat = v["latencies"].as_array().unwrap();
    let intervals: Vec<(f64, f64)> = starts
        .iter()
        .zip(lat)
        .map(|(s, l)| {
            let s = s.as_f64().unwrap();
            (s, s + l.as_f64().unwrap())
        })
        .collect();
    let by_hand = sweep(&intervals);
    assert!(by_hand <= 8, "{by_hand}");

    let runs = lint_bytes("result.json", &bytes, &LintOptions::default()).unwrap();
    let f = &runs[0].findings;
    // Not a burst of all 40 (what the per-second figure would say) …
    assert!(!f.iter().any(|f| f.code == Code::SingleBurst), "{f:?}");
    // … but a client that held the load at its cap of 8, quoted with the exact peak.
    let capped = f.iter().find(|f| f.code == Code::ClientCapped).unwrap();
    assert_eq!(evidence(capped, "peak_in_flight"), Some(by_hand as f64));
    assert_eq!(evidence(capped, "client_cap"), Some(8.0));
    assert_eq!(evidence(capped, "peak_concurrent_requests"), None);

    // Without its per-request lists the file gives only vLLM's per-second figure, which no
    // concurrency lint uses.
    let mut agg = v.clone();
    for k in [
        "input_lens",
        "output_lens",
        "ttfts",
        "itls",
        "latencies",
        "start_times",
        "queue_times",
        "generated_texts",
        "errors",
    ] {
        agg.as_object_mut().unwrap().remove(k);
    }
    let agg = serde_json::to_vec(&agg).unwrap();
    let runs = lint_bytes("agg.json", &agg, &LintOptions::default()).unwrap();
    assert!(
        !runs[0]
            .findings
            .iter()
            .any(|f| matches!(f.code, Code::SingleBurst | Code::ClientCapped)),
        "{:?}",
        runs[0].findings
    );

    // `report` labels the per-second figure and prints the exact one beside it.
    let text = render_report(&report_path(&path, &ReportOptions::default()).unwrap());
    assert!(
        text.contains("\nPeak concurrent requests:                40.00"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "note: Peak concurrent requests (40) is vLLM's per-second figure: every request \
             active at any time during a 1-second bucket, not the number in flight at one \
             instant; the most in flight at one instant was {by_hand}\n"
        )),
        "{text}"
    );
    assert!(text.contains(&format!("peak {by_hand} requests in flight at one instant")));
}

/// `n` requests of `tokens` one-token chunks each, `gap` apart, started in waves of
/// `wave` every `period`: at most `wave` in flight when a request lasts less than `period`.
fn waves(n: u64, wave: u64, period: Duration, tokens: u32, gap: Duration) -> Vec<RequestRecord> {
    (0..n)
        .map(|i| {
            let start = period * (i / wave) as u32;
            let mut r = RequestRecord::new(i, start);
            r.chunks = (1..=tokens)
                .map(|k| Chunk {
                    at: start + gap * k,
                    tokens: 1,
                })
                .collect();
            r.ended_at = r.chunks.last().map(|c| c.at);
            r.usage_output_tokens = Some(u64::from(tokens));
            r
        })
        .collect()
}

#[test]
fn a_per_second_peak_above_the_cap_is_replaced_by_the_records_exact_peak() {
    // 400 requests at a cap of 64: waves of 64 lasting 0.64 s, one every second. A
    // per-second count sees the last wave's end and the next one's start in one bucket.
    let records = waves(
        400,
        64,
        Duration::from_secs(1),
        64,
        Duration::from_millis(10),
    );
    for convention in [Convention::Vllm, Convention::Guidellm] {
        let r = BenchmarkResult {
            meta: RunMeta {
                convention: Some(convention),
                ..RunMeta::default()
            },
            successful_requests: Some(400),
            failed_requests: Some(0),
            max_concurrency: Some(64),
            peak_concurrent_requests: Some(107.0),
            ..BenchmarkResult::default()
        };
        let opts = LintOptions {
            client_cap: Some(64),
            ..LintOptions::default()
        };
        let f = lint_run(&r, Some(&records), &opts);
        let capped = f.iter().find(|f| f.code == Code::ClientCapped).unwrap();
        assert_eq!(evidence(capped, "peak_in_flight"), Some(64.0), "{f:?}");
        assert!(
            !capped.evidence.iter().any(|e| e.value == 107.0),
            "{capped:?}"
        );
        // The same result without records: guidellm's own figure is all there is (and is
        // named as the file's); vLLM's per-second count is never used.
        let without = lint_run(&r, None, &opts);
        let capped = without.iter().find(|f| f.code == Code::ClientCapped);
        match convention {
            Convention::Vllm => assert!(capped.is_none(), "{without:?}"),
            Convention::Guidellm => assert_eq!(
                evidence(capped.unwrap(), "peak_concurrent_requests"),
                Some(107.0)
            ),
        }
    }
    // A cap never reached: 32 in flight at most, under a cap of 64, although the
    // per-second figure (107) is above it.
    let half = waves(
        400,
        32,
        Duration::from_secs(1),
        64,
        Duration::from_millis(10),
    );
    let r = BenchmarkResult {
        meta: RunMeta {
            convention: Some(Convention::Vllm),
            ..RunMeta::default()
        },
        successful_requests: Some(400),
        failed_requests: Some(0),
        max_concurrency: Some(64),
        peak_concurrent_requests: Some(107.0),
        ..BenchmarkResult::default()
    };
    let f = lint_run(&r, Some(&half), &LintOptions::default());
    assert!(
        !f.iter()
            .any(|f| matches!(f.code, Code::ClientCapped | Code::SingleBurst)),
        "{f:?}"
    );
}

#[test]
fn guidellm_instantaneous_peak_above_every_1s_window_is_flagged() {
    // 400 requests × 128 tokens at 16 ms per token, 25 at a time: ≈ 1 600 tok/s sustained
    // (51 200 tokens in all). guidellm's instantaneous "peak" of 46 193 tok/s is below the
    // total (so the total check passes) and below 20× the mean (so that check passes too).
    let records = waves(
        400,
        25,
        Duration::from_secs(2),
        128,
        Duration::from_millis(16),
    );
    let total: u64 = records.iter().map(RequestRecord::output_tokens).sum();
    assert_eq!(total, 51_200);
    let r = BenchmarkResult {
        meta: RunMeta {
            convention: Some(Convention::Guidellm),
            ..RunMeta::default()
        },
        successful_requests: Some(400),
        failed_requests: Some(0),
        total_output_tokens: Some(total),
        output_throughput_per_s: Some(3213.0),
        peak_output_throughput_per_s: Some(46_193.0),
        ..BenchmarkResult::default()
    };
    let from_result = lint_run(&r, None, &LintOptions::default());
    assert!(
        !from_result.iter().any(|f| f.code == Code::ImpossiblePeak),
        "{from_result:?}"
    );
    let f = lint_run(&r, Some(&records), &LintOptions::default());
    let peak = f.iter().find(|f| f.code == Code::ImpossiblePeak).unwrap();
    let window = evidence(peak, "max_tokens_in_1s_window").unwrap();
    // 25 streams × 1000/16 tokens per second, give or take a few tokens per stream at the
    // window's edges.
    assert!((1500.0..=1700.0).contains(&window), "{window}");
    assert!(peak
        .message
        .starts_with("guidellm's instantaneous peak output rate"));
}
