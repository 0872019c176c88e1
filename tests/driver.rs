//! Load-driver tests: arrival processes (statistical checks with fixed seeds), the client
//! concurrency cap, failures becoming failed records, max duration, workloads.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use servebench::driver::workload::{self, ShareGptFilter, WorkItem, WorkloadOptions};
use servebench::driver::Arrivals;
use servebench::driver::{run, run_profile, RunOptions};
use servebench::engine::{Engine, EngineError, EngineEvent, EngineRequest, Usage};
use servebench::record::{ErrorKind, Outcome};
use servebench::Profile;

fn secs(v: &[Duration]) -> Vec<f64> {
    v.iter().map(|d| d.as_secs_f64()).collect()
}

fn gaps(t: &[f64]) -> Vec<f64> {
    let mut prev = 0.0;
    t.iter()
        .map(|&x| {
            let g = x - prev;
            prev = x;
            g
        })
        .collect()
}

fn mean_var(v: &[f64]) -> (f64, f64) {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64;
    (m, var)
}

#[test]
fn constant_rate_is_exact() {
    let t = secs(&Arrivals::Constant { rate: 8.0 }.schedule(1000).unwrap());
    assert_eq!(t.len(), 1000);
    assert_eq!(t[0], 0.0);
    for (i, x) in t.iter().enumerate() {
        assert!((x - i as f64 / 8.0).abs() < 1e-9);
    }
    assert!(Arrivals::Constant { rate: 0.0 }.schedule(3).is_err());
    assert!(Arrivals::AllAtOnce
        .schedule(5)
        .unwrap()
        .iter()
        .all(|d| d.is_zero()));
}

#[test]
fn poisson_has_the_right_rate_and_dispersion() {
    let rate = 50.0;
    let n = 20_000;
    let t = secs(&Arrivals::Poisson { rate, seed: 7 }.schedule(n).unwrap());
    let (m, v) = mean_var(&gaps(&t));
    // Exponential gaps: mean 1/rate, CV² = 1.
    assert!((m * rate - 1.0).abs() < 0.03, "mean gap {m}");
    assert!((v / (m * m) - 1.0).abs() < 0.06, "CV² {}", v / (m * m));
    // Counts in 1-second windows: Poisson(50), index of dispersion ≈ 1.
    let horizon = t[n - 1].floor() as usize;
    let mut counts = vec![0.0; horizon];
    for &x in &t {
        if let Some(c) = counts.get_mut(x as usize) {
            *c += 1.0;
        }
    }
    let (cm, cv) = mean_var(&counts);
    assert!((cm / rate - 1.0).abs() < 0.03, "mean count {cm}");
    assert!((cv / cm - 1.0).abs() < 0.15, "dispersion {}", cv / cm);
    // Different seeds give different schedules; the same seed the same one.
    assert_eq!(
        Arrivals::Poisson { rate, seed: 7 }.schedule(10).unwrap(),
        Arrivals::Poisson { rate, seed: 7 }.schedule(10).unwrap()
    );
    assert_ne!(
        Arrivals::Poisson { rate, seed: 7 }.schedule(10).unwrap(),
        Arrivals::Poisson { rate, seed: 8 }.schedule(10).unwrap()
    );
}

#[test]
fn gamma_burstiness_sets_the_gap_variance_and_rescaling_pins_the_end() {
    let rate = 20.0;
    let n = 20_000;
    for &b in &[0.25, 1.0, 4.0] {
        let t = secs(
            &Arrivals::Gamma {
                rate,
                burstiness: b,
                seed: 11,
                rescale: false,
            }
            .schedule(n)
            .unwrap(),
        );
        let (m, v) = mean_var(&gaps(&t));
        assert!((m * rate - 1.0).abs() < 0.04, "b={b}: mean gap {m}");
        let cv2 = v / (m * m);
        assert!(
            (cv2 * b - 1.0).abs() < 0.1,
            "b={b}: CV² {cv2}, want {}",
            1.0 / b
        );
    }
    let t = secs(
        &Arrivals::Gamma {
            rate,
            burstiness: 0.5,
            seed: 3,
            rescale: true,
        }
        .schedule(1000)
        .unwrap(),
    );
    assert!((t[999] - 1000.0 / rate).abs() < 1e-9);
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
    assert!(Arrivals::Gamma {
        rate,
        burstiness: 0.0,
        seed: 1,
        rescale: true
    }
    .schedule(3)
    .is_err());
}

/// A virtual-time test engine: request `id` streams `max_output_tokens` chunks, the first
/// `ttft(id)` after submission and then one every 10 ms. Every `fail_every`-th request fails
/// instead; `reject_every`-th submissions error; `crash_after` submissions break `advance`.
#[derive(Default)]
struct FakeEngine {
    now: Duration,
    queue: BinaryHeap<Reverse<(Duration, u64, u64, u8)>>,
    seq: u64,
    live: usize,
    max_live: usize,
    submitted: u64,
    fail_every: u64,
    reject_every: u64,
    crash_after: Option<u64>,
}

const CHUNK: u8 = 0;
const FINISH: u8 = 1;
const FAIL: u8 = 2;

impl FakeEngine {
    fn push(&mut self, at: Duration, id: u64, kind: u8) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, id, kind)));
    }
}

impl Engine for FakeEngine {
    fn now(&self) -> Duration {
        self.now
    }

    fn submit(&mut self, r: EngineRequest) -> Result<(), EngineError> {
        self.submitted += 1;
        if self.reject_every > 0 && self.submitted.is_multiple_of(self.reject_every) {
            return Err(EngineError::Fatal("connection refused".into()));
        }
        self.live += 1;
        self.max_live = self.max_live.max(self.live);
        let ttft = Duration::from_millis(20 + (r.id * 37) % 200);
        if self.fail_every > 0 && r.id.is_multiple_of(self.fail_every) {
            self.push(self.now + ttft, r.id, FAIL);
            return Ok(());
        }
        for k in 0..r.max_output_tokens {
            self.push(self.now + ttft + Duration::from_millis(10 * k), r.id, CHUNK);
        }
        let end = self.now + ttft + Duration::from_millis(10 * (r.max_output_tokens - 1));
        self.push(end, r.id, FINISH);
        Ok(())
    }

    fn advance(
        &mut self,
        deadline: Option<Duration>,
        events: &mut Vec<EngineEvent>,
    ) -> Result<(), EngineError> {
        if self.crash_after.is_some_and(|c| self.submitted >= c) {
            return Err(EngineError::Fatal("GPU fell off the bus".into()));
        }
        while let Some(Reverse((at, _, id, kind))) = self.queue.peek().copied() {
            if deadline.is_some_and(|d| at > d) {
                break;
            }
            self.queue.pop();
            self.now = at;
            match kind {
                CHUNK => events.push(EngineEvent::Chunk { id, at, tokens: 1 }),
                FINISH => {
                    self.live -= 1;
                    events.push(EngineEvent::Finished {
                        id,
                        at,
                        usage: Usage {
                            prompt_tokens: Some(5),
                            completion_tokens: None,
                        },
                    });
                    return Ok(());
                }
                _ => {
                    self.live -= 1;
                    events.push(EngineEvent::Failed {
                        id,
                        at,
                        kind: ErrorKind::HttpStatus,
                        message: "500 Internal Server Error".into(),
                    });
                    return Ok(());
                }
            }
        }
        if let Some(d) = deadline {
            self.now = self.now.max(d);
        }
        Ok(())
    }

    fn in_flight(&self) -> usize {
        self.live
    }
}

fn work(n: usize, out: u64) -> Vec<WorkItem> {
    vec![
        WorkItem {
            prompt_tokens: 5,
            output_tokens: out,
            prompt: None,
            shared_prefix_tokens: 0,
        };
        n
    ]
}

fn peak_in_flight(records: &[servebench::RequestRecord]) -> usize {
    let mut edges = Vec::new();
    for r in records {
        edges.push((r.sent_at, 1i64));
        edges.push((r.ended_at.unwrap_or(Duration::MAX), -1));
    }
    edges.sort();
    let (mut cur, mut peak) = (0i64, 0i64);
    for (_, d) in edges {
        cur += d;
        peak = peak.max(cur);
    }
    peak as usize
}

#[test]
fn concurrency_cap_is_never_exceeded_and_queued_requests_wait() {
    for &(cap, arrivals) in &[
        (1usize, Arrivals::AllAtOnce),
        (7, Arrivals::AllAtOnce),
        (
            16,
            Arrivals::Poisson {
                rate: 400.0,
                seed: 5,
            },
        ),
        (
            64,
            Arrivals::Gamma {
                rate: 2000.0,
                burstiness: 0.2,
                seed: 9,
                rescale: true,
            },
        ),
    ] {
        let mut e = FakeEngine::default();
        let opts = RunOptions {
            arrivals,
            max_concurrency: Some(cap),
            ..RunOptions::default()
        };
        let out = run(&mut e, &work(300, 6), &opts).unwrap();
        assert_eq!(out.records.len(), 300);
        assert!(e.max_live <= cap, "engine saw {} > {cap}", e.max_live);
        assert!(peak_in_flight(&out.records) <= cap);
        assert_eq!(e.max_live, cap.min(300), "the cap should be reached");
        for r in &out.records {
            assert!(r.outcome.is_success());
            assert_eq!(r.client_output_tokens(), 6);
            assert!(r.sent_at >= r.scheduled_at.unwrap());
        }
        assert_eq!(figures(&out).successful_requests, Some(300));
    }
}

#[test]
fn engine_failures_become_failed_records() {
    let mut e = FakeEngine {
        fail_every: 4,
        reject_every: 10,
        ..FakeEngine::default()
    };
    let opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 100.0 },
        max_concurrency: Some(8),
        ..RunOptions::default()
    };
    let out = run(&mut e, &work(100, 3), &opts).unwrap();
    assert_eq!(out.records.len(), 100);
    assert!(out.aborted.is_none());
    let mut http = 0;
    let mut refused = 0;
    for r in &out.records {
        match &r.outcome {
            Outcome::Success => assert_eq!(r.client_output_tokens(), 3),
            Outcome::Error {
                kind: ErrorKind::HttpStatus,
                message,
            } => {
                assert_eq!(message, "500 Internal Server Error");
                assert!(r.chunks.is_empty() && r.ended_at.is_some());
                http += 1;
            }
            Outcome::Error {
                kind: ErrorKind::Connect,
                message,
            } => {
                assert_eq!(message, "connection refused");
                refused += 1;
            }
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!(refused, 10);
    assert!(http >= 20, "{http}");
    let failed = figures(&out).failed_requests.unwrap();
    assert_eq!(failed, (http + refused) as u64);
    assert_eq!(figures(&out).successful_requests, Some(100 - failed));
}

#[test]
fn a_crashing_engine_aborts_the_run_and_fails_the_requests_in_flight() {
    let mut e = FakeEngine {
        crash_after: Some(5),
        ..FakeEngine::default()
    };
    let out = run(&mut e, &work(50, 3), &RunOptions::default()).unwrap();
    assert_eq!(out.aborted.as_deref(), Some("GPU fell off the bus"));
    assert!(!out.records.is_empty());
    assert!(out.records.iter().all(|r| matches!(
        &r.outcome,
        Outcome::Error { kind: ErrorKind::Other, message } if message == "GPU fell off the bus"
    )));
}

#[test]
fn max_duration_and_max_requests_bound_the_run() {
    let mut e = FakeEngine::default();
    let opts = RunOptions {
        arrivals: Arrivals::Constant { rate: 10.0 },
        max_duration: Some(Duration::from_secs(2)),
        ..RunOptions::default()
    };
    let out = run(&mut e, &work(100, 50), &opts).unwrap();
    // Sent at 0, 0.1, …, 1.9 s (nothing at or after the 2 s limit): 20 requests; those
    // still streaming at 2 s are cut off.
    assert_eq!(out.records.len(), 20);
    assert!(out
        .records
        .iter()
        .all(|r| r.sent_at < Duration::from_secs(2)));
    let cut = out
        .records
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Incomplete { .. }))
        .count();
    assert!(cut > 0 && cut < 20, "{cut}");

    let mut e = FakeEngine::default();
    let opts = RunOptions {
        max_requests: Some(7),
        ..RunOptions::default()
    };
    assert_eq!(run(&mut e, &work(100, 2), &opts).unwrap().records.len(), 7);
}

#[test]
fn workloads_from_profiles() {
    let p = Profile::preset("generation-heavy").unwrap();
    let mut e = FakeEngine::default();
    let out = run_profile(&mut e, &p, &WorkloadOptions::default(), |o| {
        o.arrivals = Arrivals::AllAtOnce;
        o.max_concurrency = Some(50);
    })
    .unwrap();
    assert_eq!(out.records.len(), 200);
    assert!(out.records.iter().all(|r| r.prompt_tokens == Some(1000)));
    assert_eq!(figures(&out).total_output_tokens, Some(400_000));
    assert_eq!(figures(&out).meta.profile.as_ref(), Some(&p));

    // vLLM range ratio: uniform over [floor(L(1-r)), ceil(L(1+r))], mean L.
    let w = workload::random(20_000, 1000, 100, 0.25, 42, false).unwrap();
    let (m, _) = mean_var(&w.iter().map(|r| r.prompt_tokens as f64).collect::<Vec<_>>());
    assert!((m - 1000.0).abs() < 5.0, "{m}");
    assert_eq!(w.iter().map(|r| r.prompt_tokens).min(), Some(750));
    assert_eq!(w.iter().map(|r| r.prompt_tokens).max(), Some(1250));
}

#[test]
fn sharegpt_file_with_vllm_filtering() {
    let dir = std::env::temp_dir().join(format!("servebench-sharegpt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ShareGPT_V3_unfiltered_cleaned_split.json");
    let long = "word ".repeat(1500);
    let json = serde_json::json!([
        {"id": "a", "conversations": [{"from": "human", "value": "What is the capital of France?"}, {"from": "gpt", "value": "The capital of France is Paris, a city on the Seine."}]},
        {"id": "b", "conversations": [{"from": "human", "value": "Hi"}]},
        {"id": "c", "conversations": [{"from": "human", "value": "ok"}, {"from": "gpt", "value": "Sure, here is a longer answer for you."}]},
        {"id": "d", "conversations": [{"from": "human", "value": long}, {"from": "gpt", "value": "That is a lot of words in one message."}]}
    ]);
    std::fs::write(&path, json.to_string()).unwrap();
    let all = workload::sharegpt_file(&path, 10, 1, ShareGptFilter::None).unwrap();
    assert_eq!(all.len(), 10, "oversampled to the requested count");
    let kept = workload::sharegpt_file(&path, 10, 1, ShareGptFilter::Vllm).unwrap();
    // Only "a" survives: "b" has one turn, "c" a 1-token prompt, "d" a 1500-token prompt.
    assert!(kept
        .iter()
        .all(|r| r.prompt.as_deref() == Some("What is the capital of France?")));
    assert_eq!(kept[0].prompt_tokens, 7);
    std::fs::write(&path, "{\"not\": \"a list\"}").unwrap();
    let err = workload::sharegpt_file(&path, 1, 1, ShareGptFilter::None).unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn arrivals_past_the_clock_range_are_an_error_not_a_panic() {
    use servebench::driver::ArrivalsError;
    // 1 / 1e-300 s is far past Duration::MAX.
    let err = Arrivals::Constant { rate: 1e-300 }.schedule(2).unwrap_err();
    assert!(
        matches!(err, ArrivalsError::TooLate { index: 1, .. }),
        "{err:?}"
    );
    let err = Arrivals::Poisson {
        rate: 1e-300,
        seed: 1,
    }
    .schedule(2)
    .unwrap_err();
    assert!(
        matches!(err, ArrivalsError::TooLate { index: 0, .. }),
        "{err:?}"
    );
    // Representable schedules are unchanged.
    assert_eq!(
        Arrivals::Constant {
            rate: 1.0 / 1_048_576.0
        }
        .schedule(2)
        .unwrap()[1],
        Duration::from_secs(1_048_576)
    );
}

#[test]
fn a_max_duration_past_the_clock_range_is_no_limit() {
    let mut e = FakeEngine {
        now: Duration::from_secs(1),
        ..FakeEngine::default()
    };
    let opts = RunOptions {
        max_duration: Some(Duration::MAX),
        ..RunOptions::default()
    };
    let out = run(&mut e, &work(5, 3), &opts).unwrap();
    assert_eq!(out.records.len(), 5);
    assert!(out.records.iter().all(|r| r.outcome.is_success()));
}

#[test]
fn workloads_too_large_to_hold_are_an_error() {
    use servebench::driver::workload::{WorkloadError, MAX_REQUESTS, MAX_TEXT_TOKENS};
    // Prompt text for a claimed 10^12-token prompt is refused, not allocated.
    let err = workload::random(1, 1_000_000_000_000, 1, 0.0, 1, true).unwrap_err();
    assert!(matches!(err, WorkloadError::TooLarge(_)), "{err:?}");
    assert!(err.to_string().contains("1000000000000"), "{err}");
    // Without text, only the lengths are kept: fine.
    let w = workload::random(1, 1_000_000_000_000, 1, 0.0, 1, false).unwrap();
    assert_eq!(w[0].prompt_tokens, 1_000_000_000_000);
    // At the limit the text is built.
    let w = workload::random(1, MAX_TEXT_TOKENS, 1, 0.0, 1, true).unwrap();
    assert_eq!(w[0].prompt_tokens, MAX_TEXT_TOKENS);
    // A profile asking for more requests than can be held.
    let mut p = Profile::preset("latency").unwrap();
    p.total_requests = MAX_REQUESTS + 1;
    let err = workload::build(&p, &WorkloadOptions::default()).unwrap_err();
    assert!(matches!(err, WorkloadError::TooLarge(_)), "{err:?}");
}

/// The run's figures as the driver's callers compute them (once, from the records).
fn figures(out: &servebench::driver::RunOutput) -> servebench::BenchmarkResult {
    servebench::metrics::summarize(
        &out.records,
        out.profile.as_ref(),
        &servebench::metrics::MetricsOptions::load_run(),
        out.max_concurrency,
    )
}
